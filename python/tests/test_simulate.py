"""frenzy.simulate(...).to_dict() equals the CLI's `frenzy simulate --json` on the same trace, cluster and policy.
sched_mean_us and sched_p99_us are wall-clock times of the scheduler's decisions, so they differ from run to run:
they are compared for presence and sign only; every other metric is deterministic (seeded) and compared exactly."""
import subprocess

import pytest

import frenzy

TIMED = {"sched_mean_us", "sched_p99_us"}


def _deterministic(d):
    return {k: v for k, v in d.items() if k not in TIMED}


@pytest.mark.parametrize("policy", ["has", "fcfs"])
def test_equals_cli_json(cli, root, policy):
    trace = root / "examples" / "traces" / "small.csv"
    cluster = root / "examples" / "clusters" / "three-type.json"
    expected = cli("simulate", "--cluster", cluster, "--trace", trace, "--policy", policy, "--json", "--quiet")
    got = frenzy.simulate(cluster, trace, policy=policy).to_dict()
    assert got.keys() == expected.keys()
    assert _deterministic(got) == _deterministic(expected)
    assert all(got[k] >= 0 for k in TIMED)
    assert got["jobs"] == 30  # examples/traces/small.csv has 30 rows


def test_jobs_csv_equals_cli(cli_path, root, tmp_path):
    trace = root / "examples" / "traces" / "small.csv"
    cluster = root / "examples" / "clusters" / "three-type.json"
    out = tmp_path / "jobs.csv"
    subprocess.run([str(cli_path), "simulate", "--cluster", str(cluster), "--trace", str(trace), "--policy", "has",
                    "--jobs-csv", str(out), "--quiet"], check=True, capture_output=True)
    assert frenzy.simulate(cluster, trace, policy="has").jobs_csv() == out.read_text()


def test_trace_text_and_jobs_csv(root):
    trace = root / "examples" / "traces" / "small.csv"
    cluster = root / "examples" / "clusters" / "three-type.json"
    a = frenzy.simulate(cluster, trace, policy="fcfs")
    b = frenzy.simulate(cluster, trace.read_text(), policy="fcfs")
    assert _deterministic(a.to_dict()) == _deterministic(b.to_dict())
    rows = a.jobs_csv().strip().splitlines()
    assert rows[0].startswith("policy,job_id,") and len(rows) == 1 + 30


def test_bad_input(root):
    cluster = root / "examples" / "clusters" / "three-type.json"
    with pytest.raises(frenzy.ConfigError, match='policy="best"'):
        frenzy.simulate(cluster, root / "examples" / "traces" / "small.csv", policy="best")
    bad = "job_id,submit_s,model,seq_len,global_batch,total_tokens,requested_gpus,requested_type\nj1,0,gpt2,x,8,1e6,,\n"
    with pytest.raises(frenzy.ConfigError, match=r'trace line 2: seq_len="x" is not a number'):
        frenzy.simulate(cluster, bad)


def test_policy_all_equals_cli_json(cli, root):
    # policy="all" is `frenzy simulate --policy all`: one result per policy, in the CLI's order (HAS first), each
    # equal to the CLI's object for that policy (decision times excepted, see above).
    trace = root / "examples" / "traces" / "small.csv"
    cluster = root / "examples" / "clusters" / "three-type.json"
    expected = cli("simulate", "--cluster", cluster, "--trace", trace, "--policy", "all", "--json", "--quiet")
    got = frenzy.simulate(cluster, trace, policy="all")
    assert isinstance(got, list) and len(got) == len(expected)
    assert [r.to_dict()["policy"] for r in got] == [e["policy"] for e in expected]
    assert got[0].to_dict()["policy"] == "has"
    for r, e in zip(got, expected):
        assert _deterministic(r.to_dict()) == _deterministic(e)
