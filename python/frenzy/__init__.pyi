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
    def to_dict(self) -> JsonDict:
        """The CLI's `frenzy estimate --json` for the same job, GPU and margin."""
    @property
    def parameters(self) -> float: ...
    @property
    def peak_allocated_bytes(self) -> float: ...
    @property
    def peak_reserved_bytes(self) -> float: ...
    @property
    def bottleneck_stage(self) -> int: ...
    @property
    def stages(self) -> list[StageMemory]: ...
    @property
    def gpu(self) -> str | None: ...
    @property
    def fits(self) -> bool | None:
        """Whether it fits the GPU (None without a GPU)."""
    @property
    def step_time_s(self) -> float | None: ...
    @property
    def tokens_per_s(self) -> float | None: ...

def estimate(job: JobLike, gpu: GpuLike | None = None, margin: float = ...) -> Estimate:
    """Per-GPU peak training memory of `job` with its parallel layout; with `gpu`, whether it fits (keeping
    `margin` of the GPU's memory free) and the predicted step time."""

class Plan:
    """One way to run a job: a GPU type, a count and a parallel layout."""
    def to_dict(self) -> JsonDict:
        """One entry of the CLI's `frenzy plan --json` plans."""
    @property
    def gpu(self) -> str: ...
    @property
    def gpus(self) -> int: ...
    @property
    def nodes(self) -> int: ...
    @property
    def parallel(self) -> JsonDict: ...
    @property
    def micro_batch(self) -> int: ...
    @property
    def framework(self) -> str: ...
    @property
    def peak_allocated_bytes(self) -> float: ...
    @property
    def capacity_bytes(self) -> float: ...
    @property
    def step_time_s(self) -> float: ...
    @property
    def tokens_per_s(self) -> float: ...
    @property
    def est_time_s(self) -> float: ...
    @property
    def gpu_hours(self) -> float: ...
    @property
    def cost(self) -> float: ...
    @property
    def mfu(self) -> float: ...

class PlanResult:
    """Every feasible plan, best first, and the GPU types that cannot run the job."""
    def to_dict(self, top: int | None = None) -> JsonDict:
        """The CLI's `frenzy plan --json` (with `top`, `--top N`)."""
    @property
    def plans(self) -> list[Plan]: ...
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
    margin: float = ...,
    max_gpus: int = 0,
    prices: Mapping[str, float] = ...,
    frameworks: Sequence[str] = ...,
    tp_across_nodes: bool = False,
) -> PlanResult:
    """Ranks GPU types, counts and parallel layouts for `job` on `cluster`. `objective`: time | gpu-hours | cost
    (cost needs `prices`, USD per GPU-hour by type); `margin`: share of each GPU's memory kept free."""

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
) -> SimResult:
    """Replays `trace` (a trace CSV path or its text) on `cluster` under `policy` (has | fcfs | tiresias | gavel |
    sia), as `frenzy simulate` does."""

def gpus() -> list[JsonDict]:
    """The built-in GPU types, one dict each (the fields a cluster's gpu_types may override)."""

def models() -> list[JsonDict]:
    """The built-in model presets with their parameter counts (`frenzy models --json`)."""
