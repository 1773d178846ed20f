"""Type stubs of the Python module frenzy (the C++ library through pybind11). See docs/python.md."""
import os
from typing import Any, Iterator, Mapping, Sequence, Union

__version__: str

JsonDict = dict[str, Any]
PathLike = Union[str, "os.PathLike[str]"]
JobLike = Union["Job", Mapping[str, Any], PathLike]
"""A Job, a dict shaped like the job JSON (docs/formats.md), or the path of a job JSON file."""
ClusterLike = Union[Mapping[str, Any], PathLike]
"""A dict shaped like the cluster JSON, the path of a cluster JSON file, or a GPU list such as "8xh100-80g"."""
GpuLike = Union[str, Mapping[str, Any]]
"""A catalog GPU name (see gpus()) or a dict of GPU type fields overriding or extending the catalog."""

class Error(Exception):
    """Base of every error Frenzy raises; the message is the library's."""

class ConfigError(Error, ValueError):
    """Invalid input; the message names the field, its value and the rule."""

class IoError(Error, OSError):
    """A file could not be read or parsed."""

class SolverError(Error, RuntimeError):
    """A linear or integer program could not be solved (baseline schedulers)."""

class Job:
    """A training job: model, training, parallel layout and runtime, as in the job JSON."""
    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> Job:
        """A job from a dict shaped like the job JSON. Unknown fields and values raise ConfigError naming them."""
    @staticmethod
    def from_json(text: str) -> Job:
        """A job from JSON text."""
    @staticmethod
    def from_file(path: PathLike) -> Job:
        """A job from a job JSON file (the file `frenzy estimate/plan --job` reads)."""
    def to_dict(self) -> JsonDict:
        """The job with every field filled in, as a dict shaped like the job JSON."""
    @property
    def name(self) -> str: ...
    @property
    def has_parallel(self) -> bool:
        """Whether the job fixes its parallel layout (otherwise the planner chooses it)."""
    @property
    def gpus(self) -> int:
        """GPUs of its layout: dp x tp x pp x cp."""
    @property
    def parameters(self) -> float:
        """Parameters of the whole model."""
    def __eq__(self, other: object) -> bool: ...

class StageMemory:
    """Per-GPU memory of one pipeline stage at its peak (bytes)."""
    @property
    def stage(self) -> int: ...
    @property
    def parameters(self) -> float: ...
    @property
    def weights_bytes(self) -> float: ...
    @property
    def gradients_bytes(self) -> float: ...
    @property
    def optimizer_bytes(self) -> float: ...
    @property
    def activations_bytes(self) -> float: ...
    @property
    def temporary_bytes(self) -> float: ...
    @property
    def peak_allocated_bytes(self) -> float: ...
    @property
    def in_flight_micro_batches(self) -> float: ...

class Estimate:
    """MARP's per-GPU memory of one job, with the fit and speed on a GPU type."""
    def charts(self) -> list[JsonDict]:
        """The report's charts: [{'name', 'title', 'spec'}], each spec a Vega-Lite v6 dict."""
    def report_html(self) -> str:
        """The self-contained HTML report, as `frenzy report` writes it."""
    def _repr_html_(self) -> str:
        """The report's title and tables as HTML (Jupyter shows this)."""
    def to_dict(self) -> JsonDict:
        """The CLI's `frenzy estimate --json` for the same job, GPU and margin."""
    def to_dataframe(self) -> Any:
        """The memory by pipeline stage as a pandas DataFrame, one row per stage (to_dict()'s stages; needs pandas)."""
    @property
    def job(self) -> JsonDict:
        """The job estimated, as a dict shaped like the job JSON."""
    @property
    def parameters(self) -> float: ...
    @property
    def active_parameters(self) -> float:
        """Parameters one token passes through (a mixture of experts' routed top-k and shared experts; the whole
        model otherwise)."""
    @property
    def peak_allocated_bytes(self) -> float: ...
    @property
    def peak_reserved_bytes(self) -> float: ...
    @property
    def uncertainty(self) -> float:
        """Validated upper relative error of the mechanisms the job uses (raises the fit check)."""
    @property
    def bottleneck_stage(self) -> int: ...
    @property
    def stages(self) -> list[StageMemory]: ...
    @property
    def paged_bytes(self) -> float:
        """Optimizer states in CUDA unified memory (runtime.paged_optimizer): outside both peaks."""
    @property
    def host_activation_bytes_per_gpu(self) -> float:
        """Pinned host memory of one GPU's offloaded activations (Unsloth's offloaded checkpoints, runtime.offload.activations): outside both peaks."""
    @property
    def readouts(self) -> JsonDict | None:
        """With a GPU: what torch.cuda.max_memory_allocated, max_memory_reserved and nvidia-smi would show at the
        peak, and the CUDA context, NCCL buffers and paged states (memory/device.hpp); None without one."""
    @property
    def margin(self) -> float: ...
    @property
    def gpu(self) -> str | None: ...
    @property
    def fits(self) -> bool | None:
        """Whether it fits the GPU with the margin kept free (None without a GPU)."""
    @property
    def verdict(self) -> str | None:
        """"fits", "tight" (fits at the central estimate, not with the band) or "does_not_fit" (None without a GPU)."""
    @property
    def allocated_required_bytes(self) -> float | None:
        """Peak allocated x (1 + uncertainty): what must fit once the caching allocator has released its cache (None without a GPU)."""
    @property
    def cache_flushes(self) -> bool | None:
        """Tight because the reserved peak exceeds the usable memory while the allocated peak fits: PyTorch's caching allocator will release its cache and retry (None without a GPU)."""
    @property
    def central_bytes(self) -> float | None:
        """Peak reserved, the central estimate the tight verdict compares (None without a GPU)."""
    @property
    def required_bytes(self) -> float | None:
        """Peak reserved x (1 + uncertainty): what the fit rule compares (None without a GPU)."""
    @property
    def capacity_bytes(self) -> float | None:
        """(1 - margin) x the GPU's memory (None without a GPU)."""
    @property
    def step_time_s(self) -> float | None: ...
    @property
    def tokens_per_s(self) -> float | None: ...
    @property
    def mfu(self) -> float | None: ...
    @property
    def mfu_ceiling(self) -> float | None:
        """Best MFU measured for the chip, precision class and model size (0: none measured); None without a GPU."""
    @property
    def above_mfu_ceiling(self) -> bool | None:
        """The predicted MFU exceeds every measured run of its class: treat the speed as optimistic."""
    @property
    def rel_error_band(self) -> float | None:
        """Relative error band of the speed (nine in ten runs of its regime within it)."""
    @property
    def error_regime(self) -> str | None:
        """The regime the band comes from ("chip without calibration data" for an uncalibrated GPU type)."""

def estimate(job: JobLike, gpu: GpuLike | None = None, margin: float = 0.05) -> Estimate:
    """Per-GPU peak training memory of `job` with its parallel layout; with `gpu`, whether it fits (keeping
    `margin` of the GPU's memory free) and the predicted step time."""

class Plan:
    """One way to run a job: a GPU type, a count and a parallel layout; or a pipeline over several GPU types (stage
    `groups`, mixed True)."""
    def to_dict(self) -> JsonDict:
        """One entry of the CLI's `frenzy plan --json` plans (of its mixed_plans for a pipeline over several types)."""
    @property
    def mixed(self) -> bool:
        """True for a pipeline over several GPU types (see groups)."""
    @property
    def groups(self) -> list[JsonDict]:
        """The stage groups of a pipeline over several GPU types, in pipeline order, as dicts (the keys of `frenzy
        plan --json`'s groups); [] for a plan on one type."""
    @property
    def gpu(self) -> str: ...
    @property
    def gpus(self) -> int: ...
    @property
    def nodes(self) -> int: ...
    @property
    def gpus_per_node(self) -> int: ...
    @property
    def framework(self) -> str: ...
    @property
    def precision(self) -> str: ...
    @property
    def precision_alternative(self) -> bool:
        """True when the GPU type lacks the job's precision and the plan uses the nearest one it has."""
    @property
    def parallel(self) -> JsonDict: ...
    @property
    def micro_batch(self) -> int: ...
    @property
    def overlap_grad_reduce(self) -> bool:
        """Megatron's --overlap-grad-reduce, on in the plan and in its prediction."""
    @property
    def tp_comm_overlap(self) -> bool:
        """Megatron's --tp-comm-overlap, on in the plan and in its prediction."""
    @property
    def peak_allocated_bytes(self) -> float: ...
    @property
    def peak_reserved_bytes(self) -> float: ...
    @property
    def required_bytes(self) -> float: ...
    @property
    def capacity_bytes(self) -> float: ...
    @property
    def step_time_s(self) -> float: ...
    @property
    def tokens_per_s(self) -> float: ...
    @property
    def mfu(self) -> float: ...
    @property
    def mfu_ceiling(self) -> float:
        """Best MFU measured for the plan's class (0: none measured)."""
    @property
    def uncapped_tokens_per_s(self) -> float:
        """The model's own tokens/s where the plan's speed, time, cost and rank were capped at mfu_ceiling (0: not capped)."""
    @property
    def rel_error_band(self) -> float:
        """Relative error band of the plan's speed."""
    @property
    def error_regime(self) -> str:
        """The regime the band comes from."""
    @property
    def attention(self) -> str:
        """The attention kernel the plan runs on its GPU type."""
    @property
    def est_time_s(self) -> float | None:
        """Time to train the job's total_tokens (None when it has no token budget)."""
    @property
    def gpu_hours(self) -> float | None: ...
    @property
    def billed_gpu_hours(self) -> float | None: ...
    @property
    def cost(self) -> float | None:
        """Billed GPU-hours x price (None without a budget or a price)."""

class PlanResult:
    """Every feasible plan, best first, and the GPU types that cannot run the job."""
    def charts(self) -> list[JsonDict]:
        """The report's charts: [{'name', 'title', 'spec'}], each spec a Vega-Lite v6 dict."""
    def report_html(self) -> str:
        """The self-contained HTML report, as `frenzy report` writes it."""
    def _repr_html_(self) -> str:
        """The report's title and tables as HTML (Jupyter shows this)."""
    def to_dataframe(self) -> Any:
        """The plans as a pandas DataFrame, one row per plan (needs pandas)."""
    def to_dict(self, top: int | None = None) -> JsonDict:
        """The CLI's `frenzy plan --json` (with `top`, `--top N`; None or 0: every plan)."""
    @property
    def parameters(self) -> float:
        """The job's parameters."""
    @property
    def active_parameters(self) -> float:
        """Parameters one token passes through (a mixture of experts' routed top-k and shared experts; the whole
        model otherwise)."""
    @property
    def plans(self) -> list[Plan]: ...
    @property
    def mixed_plans(self) -> list[Plan]:
        """With plan(mixed=True): the pipelines over two GPU types, best first, as Plans with stage groups (to_dict
        gives an element of `frenzy plan --json`'s mixed_plans); [] otherwise."""
    @property
    def best(self) -> Plan | None:
        """The best plan, or None when no GPU type can run the job."""
    @property
    def infeasible(self) -> list[dict[str, str]]:
        """[{'gpu': ..., 'reason': ...}] for each GPU type that cannot run the job."""
    def __len__(self) -> int: ...
    def __getitem__(self, i: int) -> Plan: ...
    def __iter__(self) -> Iterator[Plan]: ...

def plan(
    job: JobLike,
    cluster: ClusterLike,
    objective: str = "time",
    margin: float = 0.05,
    max_gpus: int = 0,
    prices: Mapping[str, float] | str | None = None,
    frameworks: Sequence[str] = ...,
    tp_across_nodes: bool = False,
    whole_nodes: bool = False,
    pin_precision: bool = False,
    mixed: bool = False,
) -> PlanResult:
    """Ranks GPU types, counts and parallel layouts for `job` on `cluster`; layout fields the job states are kept.
    `objective`: time | gpu-hours | cost (cost needs `prices`: {type: USD per GPU-hour} or "example"); `margin`:
    share of each GPU's memory kept free; `frameworks`: those to consider (default the job's); `whole_nodes`: bill
    whole nodes; `pin_precision`: never offer another precision on types that lack the job's; `mixed`: also plan
    pipelines whose stages run on two GPU types (Megatron-LM; PlanResult.mixed_plans)."""

class Launch:
    """A plan turned into launch files (launch.sbatch and the framework's configuration)."""
    def to_dict(self) -> JsonDict:
        """The CLI's `frenzy launch --json`: the plan, the job with the plan's layout and the files written."""
    @property
    def plan(self) -> Plan:
        """The plan the files run (with launch(mixed=True) a pipeline over two GPU types: Plan.mixed, Plan.groups)."""
    @property
    def job(self) -> Job:
        """The job with the plan's layout, micro-batch, framework and precision."""
    @property
    def files(self) -> dict[str, str]:
        """{file name: content}, launch.sbatch first."""
    @property
    def written(self) -> list[str]:
        """Paths of the files written, by out_dir or the last write() (empty before either)."""
    def write(self, dir: PathLike) -> list[str]:
        """Writes the files into `dir` (created if missing); returns their paths, which `written` and to_dict()'s
        "files" then hold."""

def launch(
    job: JobLike,
    cluster: ClusterLike,
    framework: str = "megatron",
    plan: int = 1,
    out_dir: PathLike | None = None,
    objective: str = "time",
    margin: float = 0.05,
    gres: Mapping[str, str] = ...,
    run_command: str = "",
    time_margin: float = 0.2,
    torchtitan_base: str = "",
    slurm: Mapping[str, object] = ...,
    mixed: bool = False,
) -> Launch:
    """Plans `job` on `cluster` for `framework` (megatron | torchtitan | deepspeed | fsdp | llm-foundry | hf | torchtune), takes plan number `plan`
    (1 = the best) and makes its launch files; with `out_dir` also writes them there (`frenzy launch -o DIR`).
    `slurm`: partition, account, qos, cpus_per_task, mem, requeue_signal_s; `mixed`: take mixed plan number `plan`
    (stages on two GPU types, Megatron-LM) as one Slurm heterogeneous job (Launch.plan.groups).
    Raises ConfigError when there is no such plan."""

class Import:
    """A job read from a launcher configuration, and what was not used."""
    def to_dict(self) -> JsonDict:
        """The CLI's `frenzy import --json`: {job, ignored, not_understood, notes}."""
    @property
    def job(self) -> Job: ...
    @property
    def world_size(self) -> int:
        """GPUs the launcher starts (0 = not said)."""
    @property
    def ignored(self) -> list[str]:
        """Arguments/keys irrelevant to memory and speed (or not modelled), as written."""
    @property
    def not_understood(self) -> list[str]:
        """Arguments/keys not understood, as written."""
    @property
    def notes(self) -> list[str]:
        """Shell constructs the script reader could not follow."""

def import_launcher(
    kind: str,
    path: PathLike,
    model: str | Mapping[str, Any] | None = None,
    name: str = "",
    world_size: int = 0,
    layout: Mapping[str, Any] | None = None,
    training: Mapping[str, Any] | None = None,
) -> Import:
    """Reads a launcher configuration (megatron | torchtitan | deepspeed | fsdp) into a job; megatron reads a launch
    script, a JSON argument list or a YAML argument file (*.yaml, *.yml: the `--yaml-cfg` form); torchtitan,
    deepspeed and fsdp configurations need `model`. `world_size`, `layout` and `training` supply what it does not
    say."""

class SimResult:
    """Metrics of one simulated run of a trace under one policy."""
    def to_dict(self) -> JsonDict:
        """The CLI's `frenzy simulate --json`."""
    def jobs_csv(self) -> str:
        """One CSV row per job (the file `frenzy simulate --jobs-csv` writes)."""
    @property
    def policy(self) -> str: ...
    @property
    def completed(self) -> int: ...
    @property
    def avg_jct_s(self) -> float: ...
    @property
    def makespan_s(self) -> float: ...
    @property
    def gpu_utilization(self) -> float: ...

def simulate(
    cluster: ClusterLike,
    trace: PathLike,
    policy: str = "has",
    seed: int = 1,
    startup_s: float = 30.0,
    restart_s: float = 30.0,
    mtbf_h: float = 0.0,
    repair_h: float = 1.0,
) -> SimResult | list[SimResult]:
    """Replays `trace` (a trace CSV path or its text) on `cluster` under `policy` (has | fcfs | tiresias | gavel |
    sia | gavel-las), as `frenzy simulate` does; policy="all" returns a list with one SimResult per policy of the
    first five, HAS first (gavel-las is selected by name only)."""

def gpus() -> list[JsonDict]:
    """The built-in GPU types, one dict each (`frenzy gpus --json`)."""

def models() -> list[JsonDict]:
    """The built-in model presets with their parameter counts (`frenzy models --json`)."""
