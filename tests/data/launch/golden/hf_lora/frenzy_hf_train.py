# Written by frenzy launch: fine-tunes the pretrained causal LM in $MODEL with transformers' Trainer
# (PEFT LoRA adapters; QLoRA on 4-bit NF4 base weights). launch.sbatch sets the environment.
import os
import sys

import torch
from datasets import load_dataset
from transformers import (AutoConfig, AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig,
                          Trainer, TrainingArguments)
from transformers.trainer_utils import get_last_checkpoint
from peft import LoraConfig, get_peft_model

MODEL = os.environ["MODEL"]
DATA = os.environ["DATA"]
# The plan (frenzy launch): the model's shape, the batch and the adapters.
PLANNED = {"num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32}
SEQ_LEN = 4096
MICRO_BATCH = 2
GRAD_ACCUM = 4
TRAIN_STEPS = int(os.environ["TRAIN_STEPS"])
ADAPTERS = True
QLORA = False

# The model must be the one planned: memory and step time were predicted for this shape.
config = AutoConfig.from_pretrained(MODEL)
config = getattr(config, "text_config", None) or config
for key, planned in PLANNED.items():
    got = getattr(config, key, None)
    if got != planned:
        sys.exit(f"frenzy: {MODEL} has {key}={got}; the plan is for {planned}: plan again for this model")

tokenizer = AutoTokenizer.from_pretrained(MODEL)
quantization = None
if QLORA:
    quantization = BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_use_double_quant=True,
        bnb_4bit_compute_dtype=torch.bfloat16,
    )
model = AutoModelForCausalLM.from_pretrained(
    MODEL,
    dtype=torch.bfloat16,
    attn_implementation="sdpa",
    quantization_config=quantization,
)
model = get_peft_model(model, LoraConfig(
    r=16,
    lora_alpha=32.0,
    lora_dropout=0.0,
    target_modules=["q_proj", "k_proj", "v_proj", "o_proj"],
    task_type="CAUSAL_LM",
))

# DATA: a .json/.jsonl/.parquet/.txt file or folder with a "text" column, or a dataset on the Hub.
kind = {".json": "json", ".jsonl": "json", ".parquet": "parquet", ".txt": "text"}.get(os.path.splitext(DATA)[1])
raw = load_dataset(kind, data_files=DATA, split="train") if kind else load_dataset(DATA, split="train")


def pack(batch):  # concatenate the texts and cut them into SEQ_LEN-token sequences
    ids = [t for doc in tokenizer(batch["text"])["input_ids"] for t in doc + [tokenizer.eos_token_id]]
    n = len(ids) // SEQ_LEN * SEQ_LEN
    return {"input_ids": [ids[i:i + SEQ_LEN] for i in range(0, n, SEQ_LEN)]}


train = raw.map(pack, batched=True, remove_columns=raw.column_names)


def collate(examples):  # every sequence is SEQ_LEN tokens: no padding, every token (EOS too) a label
    ids = torch.tensor([e["input_ids"] for e in examples])
    return {"input_ids": ids, "labels": ids.clone()}


args = TrainingArguments(
    output_dir=os.environ["CHECKPOINT_DIR"],
    per_device_train_batch_size=MICRO_BATCH,
    gradient_accumulation_steps=GRAD_ACCUM,
    max_steps=TRAIN_STEPS,
    learning_rate=float(os.environ["LR"]),
    lr_scheduler_type="cosine",
    warmup_steps=max(1, TRAIN_STEPS // 100),
    optim="adamw_torch_fused",
    bf16=True,
    gradient_checkpointing=True,
    gradient_checkpointing_kwargs={"use_reentrant": False},
    logging_steps=10,
    save_steps=int(os.environ["SAVE_STEPS"]),
    save_total_limit=2,
    report_to="none",
    ddp_find_unused_parameters=False,
    seed=17,
)
trainer = Trainer(model=model, args=args, train_dataset=train, data_collator=collate)
last = get_last_checkpoint(args.output_dir) if os.path.isdir(args.output_dir) else None
trainer.train(resume_from_checkpoint=last)
trainer.save_model(os.path.join(args.output_dir, "final"))
