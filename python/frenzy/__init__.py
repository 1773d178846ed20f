"""Frenzy: per-GPU memory (MARP), GPU plans and heterogeneity-aware scheduling of LLM training jobs.

Everything here is the C++ library (frenzy._frenzy); this file only re-exports it. Each result's ``to_dict()``
equals the ``frenzy`` CLI's ``--json`` output for the same input. See docs/python.md.
"""
from ._frenzy import (  # noqa: F401
    ConfigError,
    Error,
    Estimate,
    Import,
    IoError,
    Job,
    Launch,
    Plan,
    PlanResult,
    SimResult,
    SolverError,
    StageMemory,
    __version__,
    estimate,
    gpus,
    import_launcher,
    launch,
    models,
    plan,
    simulate,
)

__all__ = [
    "ConfigError", "Error", "Estimate", "Import", "IoError", "Job", "Launch", "Plan", "PlanResult", "SimResult", "SolverError",
    "StageMemory", "__version__", "estimate", "gpus", "import_launcher", "launch", "models", "plan", "simulate",
]
