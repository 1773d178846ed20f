"""Shared fixtures: the repository root, the built CLI (FRENZY_CLI, set by scripts/test_python.sh) and a helper
that runs it with --json and parses what it prints."""
import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _cli_path():
    p = os.environ.get("FRENZY_CLI", str(ROOT / "build" / "examples" / "frenzy"))
    return pathlib.Path(p)


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def data_dir():
    """The reference data (FRENZY_DATA_DIR of the build, set by scripts/test_python.sh)."""
    return pathlib.Path(os.environ.get("FRENZY_DATA_DIR", str(ROOT / "data")))


@pytest.fixture(scope="session")
def cli_path():
    path = _cli_path()
    if not path.is_file():
        pytest.fail(f"the frenzy CLI is not built at {path} (set FRENZY_CLI or run scripts/test_python.sh)")
    return path


@pytest.fixture(scope="session")
def cli(cli_path):
    """cli(*args) runs the frenzy CLI and returns its parsed --json output (args must include --json); with
    raw=True, its standard output as text."""
    path = cli_path

    def run(*args, raw=False):
        r = subprocess.run([str(path), *map(str, args)], capture_output=True, text=True, timeout=600)
        ok = (0, 4) if args and args[0] == "estimate" else (0,)  # estimate exits 4 when the job does not fit
        assert r.returncode in ok, f"frenzy {' '.join(map(str, args))} exited {r.returncode}: {r.stderr}"
        return r.stdout if raw else json.loads(r.stdout)

    return run
