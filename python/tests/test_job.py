"""Job parsing goes through io/job_json.hpp: the three constructors agree, to_dict() round-trips, and bad input
raises ConfigError (a ValueError) or IoError (an OSError) naming the field or the file."""
import json

import pytest

import frenzy

JOB = {
    "name": "t",
    "model": {"preset": "llama-3.1-8b"},
    "training": {"seq_len": 4096, "micro_batch": 1, "global_batch": 8},
    "parallel": {"dp": 2, "tp": 4},
}


def test_constructors_agree(root, tmp_path):
    path = root / "examples" / "jobs" / "llama-3.1-8b-fsdp.json"
    a = frenzy.Job.from_file(path)  # a pathlib.Path works too
    b = frenzy.Job.from_json(path.read_text())
    c = frenzy.Job.from_dict(json.loads(path.read_text()))
    assert a == b == c
    # The example's own values survive: dp 8 x tp 1 x pp 1 x cp 1 = 8 GPUs.
    assert a.name == "llama-3.1-8b-pretrain"
    assert a.has_parallel and a.gpus == 8


def test_to_dict_fills_defaults_and_round_trips():
    j = frenzy.Job.from_dict(JOB)
    d = j.to_dict()
    # Defaults of docs/formats.md: pp = cp = 1, sharding none, precision bf16-mixed, framework megatron.
    assert d["parallel"]["pp"] == 1 and d["parallel"]["cp"] == 1 and d["parallel"]["sharding"] == "none"
    assert d["training"]["precision"] == "bf16-mixed" and d["runtime"]["framework"] == "megatron"
    assert d["model"]["hidden"] == 4096 and d["model"]["kv_heads"] == 8  # the llama-3.1-8b preset
    assert frenzy.Job.from_dict(d) == j
    assert j.gpus == 8  # dp 2 x tp 4
    assert j != frenzy.Job.from_dict({**JOB, "parallel": {"dp": 4, "tp": 2}})
    assert j != d  # a Job is not equal to its dict


def test_job_without_parallel_is_left_to_the_planner():
    j = frenzy.Job.from_dict({"model": {"preset": "gpt2"}})
    assert not j.has_parallel and j.name == "gpt2"


@pytest.mark.parametrize(
    "bad, words",
    [
        ({**JOB, "parallel": {"tp": 3}}, ["parallel.tp=3", "model.heads=32"]),
        ({**JOB, "parallel": {"dp": 2, "tpp": 2}}, ["parallel.tpp", "not a known field"]),
        ({**JOB, "training": {"precision": "bf17"}}, ["training.precision", "bf17"]),
        ({**JOB, "model": {"preset": "llama-9"}}, ["llama-9"]),
        ({**JOB, "training": {"seq_len": "long"}}, ["training.seq_len", "integer"]),
        ({"training": {"seq_len": 1}}, ["model is missing"]),
        ({**JOB, "training": {"seq_len": 1.5}}, ["training.seq_len", "integer"]),
    ],
)
def test_bad_input_names_the_field(bad, words):
    with pytest.raises(frenzy.ConfigError) as e:
        frenzy.Job.from_dict(bad)
    for w in words:
        assert w in str(e.value)
    assert isinstance(e.value, ValueError) and isinstance(e.value, frenzy.Error)


def test_non_json_python_values_name_their_place():
    with pytest.raises(frenzy.ConfigError, match=r"training\.seq_len has Python type set"):
        frenzy.Job.from_dict({**JOB, "training": {"seq_len": {1}}})
    with pytest.raises(frenzy.ConfigError, match=r"training: key 1 must be a string"):
        frenzy.Job.from_dict({**JOB, "training": {1: 2}})


def test_files_and_text():
    with pytest.raises(frenzy.IoError, match="cannot open /nonexistent/job.json") as e:
        frenzy.Job.from_file("/nonexistent/job.json")
    assert isinstance(e.value, OSError)
    with pytest.raises(frenzy.IoError, match="invalid JSON"):
        frenzy.Job.from_json("{not json")
    with pytest.raises(TypeError):
        frenzy.Job.from_dict([1, 2])
