# torchtitan recipe written by `frenzy launch` for job "llama-3.1-70b-job".
# Run: torchrun ... -m torchtitan.train --module frenzy_torchtitan --config frenzy_plan
# Fields as pytorch/torchtitan@b5bcd76c torchtitan/config/configs.py and trainer.py define them.
import dataclasses
import os

from torchtitan.components.data.sources import HuggingFaceRandomAccessSource
from torchtitan.distributed.activation_checkpoint import FullAC, SelectiveAC
from torchtitan.trainer import Trainer
from torchtitan.hf_datasets.text_datasets import DATASETS
from torchtitan.models.llama3.config_registry import llama3_70b as base_recipe


def frenzy_dataset(data: str):
    """$DATA: a dataset of torchtitan's DATASETS by name, or local JSON-lines files with a "text" column."""
    if data in DATASETS:
        return DATASETS[data]
    return dataclasses.replace(DATASETS["c4"], source=HuggingFaceRandomAccessSource.Config(
        path="json", split="train", load_dataset_kwargs={"data_files": data}))


def frenzy_plan() -> Trainer.Config:
    config = base_recipe()  # the model: llama-3.1-70b
    config.parallelism.data_parallel_replicate_degree = 1
    config.parallelism.data_parallel_shard_degree = 4
    config.parallelism.fsdp_reshard_after_forward = "always"
    config.parallelism.tensor_parallel_degree = 4
    config.parallelism.enable_sequence_parallel = True
    config.parallelism.pipeline_parallel_degree = 2
    config.parallelism.pipeline_parallel_schedule = "1F1B"
    config.parallelism.num_pp_microbatches = 16
    config.parallelism.context_parallel_degree = 1
    config.training.max_context_length = 8192
    config.training.num_tokens_per_microbatch_per_dp_rank = 8192
    config.training.num_tokens_per_train_step = 524288
    config.training.steps = 1000
    config.training.mixed_precision_param = "bfloat16"
    config.activation_checkpoint = None
    config.compile.enable = False
    # the settings of launch.sbatch
    config.hf_assets_path = os.environ["TOKENIZER_DIR"]
    config.dump_folder = os.environ["OUTPUT_DIR"]
    config.dataloader.dataset = dataclasses.replace(config.dataloader.dataset, dataset=frenzy_dataset(os.environ["DATA"]))
    config.checkpoint.enable = True
    config.checkpoint.folder = os.environ["CHECKPOINT_DIR"]
    config.checkpoint.interval = int(os.environ["SAVE_INTERVAL"])
    return config
