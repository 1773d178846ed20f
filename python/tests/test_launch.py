"""frenzy.launch: the launch helper (include/frenzy/launch/launch.hpp) from Python, and the example launcher
examples/launch_from_hf.py end to end."""
import json
import re
import subprocess
import sys

import pytest

import frenzy

JOB = {
    "name": "llama8b",
    "model": {"preset": "llama-3.1-8b"},
    # 10000 steps of 256 sequences of 4096 tokens: a whole number of steps, so the launchers' step and sample
    # counts (torchtitan's training.steps, Megatron's --train-samples) give back the same budget on import.
    "training": {"seq_len": 4096, "global_batch": 256, "total_tokens": 4096 * 256 * 10_000},
}
CONFIG_FILE = {"megatron": None, "torchtitan": "frenzy_torchtitan.py", "deepspeed": "ds_config.json",
               "fsdp": "fsdp_settings.json"}
PLAN_FRAMEWORKS = {"megatron": ["megatron"], "torchtitan": ["fsdp"], "deepspeed": ["deepspeed"], "fsdp": ["fsdp", "ddp"]}
# DeepSpeed's and FSDP's files configure the user's own training script, which must be named (issue 53)
SCRIPT = {"deepspeed": {"run_command": "train.py"}, "fsdp": {"run_command": "train.py"}}


@pytest.mark.parametrize("framework", ["megatron", "torchtitan", "deepspeed", "fsdp"])
def test_launch_writes_the_plan(tmp_path, framework):
    cluster = "16xa100-80g,8xv100-32g"
    r = frenzy.launch(JOB, cluster, framework=framework, out_dir=tmp_path / "out", **SCRIPT.get(framework, {}))
    # The plan is the planner's best for the launcher's frameworks (launcher_frameworks in launch.hpp).
    best = frenzy.plan(JOB, cluster, frameworks=PLAN_FRAMEWORKS[framework]).best
    assert r.plan.to_dict() == best.to_dict()
    names = list(r.files)
    assert names[0] == "launch.sbatch"
    if CONFIG_FILE[framework]:
        assert CONFIG_FILE[framework] in names
    assert r.written == [str(tmp_path / "out" / n) for n in names]
    for n, text in r.files.items():
        assert (tmp_path / "out" / n).read_text() == text
    sbatch = r.files["launch.sbatch"]
    per_node = best.gpus // best.nodes
    assert f"#SBATCH --nodes={best.nodes}\n" in sbatch
    assert f"#SBATCH --gres=gpu:{best.gpu}:{per_node}\n" in sbatch
    assert f"--nproc-per-node {per_node}" in sbatch
    # The job the files describe carries the plan's layout.
    assert r.job.to_dict()["parallel"] == best.parallel
    d = r.to_dict()
    assert d["plan"] == best.to_dict() and d["files"] == r.written and d["job"] == r.job.to_dict()


def test_plan_number_and_gres_map():
    second = frenzy.launch(JOB, "16xa100-80g", plan=2, gres={"a100-80g": "a100"})
    assert second.plan.to_dict() == frenzy.plan(JOB, "16xa100-80g", frameworks=["megatron"])[1].to_dict()
    assert re.search(r"#SBATCH --gres=gpu:a100:\d+\n", second.files["launch.sbatch"])
    assert second.written == []  # nothing written without out_dir


def test_write_later_records_the_files(tmp_path):
    r = frenzy.launch(JOB, "16xa100-80g")
    paths = r.write(tmp_path / "later")
    assert paths == [str(tmp_path / "later" / n) for n in r.files]
    # What write() wrote is what the launch result reports afterwards, as with out_dir.
    assert r.written == paths and r.to_dict()["files"] == paths
    for n, text in r.files.items():
        assert (tmp_path / "later" / n).read_text() == text


def test_cli_launch_json(cli, cli_path, tmp_path):
    help_text = subprocess.run([str(cli_path), "--help"], capture_output=True, text=True).stdout
    if not re.search(r"^\s+launch\s", help_text, re.M):  # CLI11 lists each subcommand on its own line
        pytest.skip("this build's CLI has no `frenzy launch` subcommand yet (examples/frenzy/cmd_launch.cpp)")
    f = tmp_path / "job.json"
    f.write_text(json.dumps(JOB))
    expected = cli("launch", "--job", f, "--gpus", "16xa100-80g", "--framework", "deepspeed", "--run-command", "train.py",
                   "-o", tmp_path / "cli", "--json")
    got = frenzy.launch(f, "16xa100-80g", framework="deepspeed", out_dir=tmp_path / "cli", run_command="train.py")
    assert got.to_dict() == expected


def test_bad_input():
    with pytest.raises(frenzy.ConfigError, match="framework"):
        frenzy.launch(JOB, "16xa100-80g", framework="jax")
    with pytest.raises(frenzy.ConfigError, match="plan=0"):
        frenzy.launch(JOB, "16xa100-80g", plan=0)
    # Llama 3.1 8B with AdamW needs more than two 16 GiB V100s hold: no plan 1 at all.
    with pytest.raises(frenzy.ConfigError, match="no plan 1"):
        frenzy.launch(JOB, "2xv100-16g")
    with pytest.raises(frenzy.ConfigError, match=r"gres"):
        frenzy.launch(JOB, "16xa100-80g", gres={"a100": "x"})


def test_example_launcher_runs(root, tmp_path):
    out = tmp_path / "launch"
    r = subprocess.run([sys.executable, str(root / "examples" / "launch_from_hf.py"),
                        str(root / "tests" / "data" / "hf" / "llama-3.1-8b.json"), "16xa100-80g,8xv100-32g",
                        "--framework", "megatron", "-o", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert (out / "launch.sbatch").is_file()
    assert f"cd {out} && sbatch launch.sbatch" in r.stdout
    assert "best plan:" in r.stdout
    # The launcher's job is the HF config's model: the same plan as asking the planner directly.
    job = {"name": "llama-3.1-8b",
           "model": {"hf_config": str(root / "tests" / "data" / "hf" / "llama-3.1-8b.json")},
           "training": {"seq_len": 4096, "global_batch": 512, "total_tokens": 1e11,
                        "precision": "bf16-mixed"}}
    best = frenzy.plan(job, "16xa100-80g,8xv100-32g", frameworks=["megatron"]).best
    assert f"{best.gpus} x {best.gpu}" in r.stdout
    assert (out / "launch.sbatch").read_text() == frenzy.launch(job, "16xa100-80g,8xv100-32g").files["launch.sbatch"]


def test_example_launcher_reports_no_plan(root, tmp_path):
    r = subprocess.run([sys.executable, str(root / "examples" / "launch_from_hf.py"),
                        str(root / "tests" / "data" / "hf" / "llama-3.1-8b.json"), "1xt4", "-o", str(tmp_path)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "error:" in r.stderr and "no plan" in r.stderr


def test_import_megatron_example_script(root):
    # Megatron-LM's own Llama 3 8B H100 FP8 example (tests/data/launch, copied with its commit): the script sets
    # NUM_LAYERS=32, --hidden-size 4096, --ffn-hidden-size 14336, --num-query-groups 8, SEQ_LENGTH=8192,
    # MICRO_BATCH_SIZE=1, GLOBAL_BATCH_SIZE=128, TP=CP=1 on 8 GPUs of one node, DTYPE=fp8.
    r = frenzy.import_launcher("megatron", root / "tests" / "data" / "launch" / "megatron_llama3_8b_h100_fp8.sh")
    j = r.job.to_dict()
    m, t, p = j["model"], j["training"], j["parallel"]
    assert (m["layers"], m["hidden"], m["ffn_hidden"], m["kv_heads"]) == (32, 4096, 14336, 8)
    assert (t["seq_len"], t["micro_batch"], t["global_batch"], t["precision"]) == (8192, 1, 128, "fp8-mixed")
    assert (p["tp"], p["cp"], p["pp"]) == (1, 1, 1)
    assert r.world_size == 8 and p["dp"] == 8
    assert r.ignored  # data paths, logging, checkpointing: listed, not silently dropped
    d = r.to_dict()
    assert d["job"] == j and d["ignored"] == r.ignored and d["not_understood"] == r.not_understood


@pytest.mark.parametrize("framework, config", [("megatron", "launch.sbatch"), ("torchtitan", "frenzy_torchtitan.py"),
                                               ("deepspeed", "ds_config.json"), ("fsdp", "fsdp_settings.json")])
def test_launch_then_import_gives_the_same_job(tmp_path, framework, config):
    launched = frenzy.launch(JOB, "16xa100-80g", framework=framework, out_dir=tmp_path, **SCRIPT.get(framework, {}))
    want = launched.job.to_dict()
    if framework == "megatron" and "dropout" not in want["runtime"]:
        want["runtime"]["dropout"] = False  # a rotary model trains without dropout, as published (issue 53)
    # What the configuration does not carry, as a user states it beside it (the model for all but Megatron; the
    # model-parallel layout, sequence length, budget and optimizer beside a ds_config.json).
    back = frenzy.import_launcher(framework, tmp_path / config, model=None if framework == "megatron" else want["model"],
                                  name=want["name"], layout=want["parallel"],
                                  training={k: want["training"][k] for k in ("seq_len", "total_tokens", "optimizer")})
    assert back.not_understood == []
    got = back.job.to_dict()
    if framework == "megatron":
        # Megatron's arguments describe the architecture but carry no model name: the importer names the model
        # after the job. Everything else must come back.
        assert got["model"]["name"] == want["name"]
        got["model"]["name"] = want["model"]["name"]
    assert got == want
    # Equal jobs, equal estimates (the estimator is deterministic): compared without the echoed job. The job the
    # files train is `want` (for Megatron without dropout, which the launched job left unset and the estimator
    # counts as Megatron's default 0.1 masks)
    strip = lambda d: {k: v for k, v in d.items() if k != "job"}  # noqa: E731
    assert strip(frenzy.estimate(back.job, gpu="a100-80g").to_dict()) == \
        strip(frenzy.estimate(want, gpu="a100-80g").to_dict())


def test_import_bad_input(tmp_path):
    with pytest.raises(frenzy.ConfigError, match="does not describe the model"):
        frenzy.import_launcher("deepspeed", tmp_path / "ds_config.json")
    with pytest.raises(frenzy.ConfigError, match="must be megatron, torchtitan, deepspeed, fsdp, llm-foundry, hf, torchtune, litgpt, axolotl or llamafactory"):
        frenzy.import_launcher("jax", tmp_path / "x", model="gpt2")
    with pytest.raises(frenzy.Error):
        frenzy.import_launcher("megatron", tmp_path / "missing.sh")


def test_import_equals_cli_json(cli, root, tmp_path):
    script = root / "tests" / "data" / "launch" / "megatron_llama3_8b_h100_fp8.sh"
    assert frenzy.import_launcher("megatron", script).to_dict() == cli("import", "--from", f"megatron:{script}", "--json")
    # A ds_config.json written by frenzy.launch, read back with the model named beside it, as `--model` does.
    frenzy.launch(JOB, "16xa100-80g", framework="deepspeed", out_dir=tmp_path, run_command="train.py")
    ds = tmp_path / "ds_config.json"
    assert frenzy.import_launcher("deepspeed", ds, model="llama-3.1-8b").to_dict() == \
        cli("import", "--from", f"deepspeed:{ds}", "--model", "llama-3.1-8b", "--json")


def test_import_megatron_yaml_equals_script_and_cli(cli, root):
    # The same Megatron example restated in Megatron's YAML argument form (pretrain_gpt.py --yaml-cfg; the fixture's
    # header says how): the world size, which the script's torchrun gives (8), is not in a YAML file.
    data = root / "tests" / "data" / "launch"
    script = frenzy.import_launcher("megatron", data / "megatron_llama3_8b_h100_fp8.sh")
    yaml = frenzy.import_launcher("megatron", data / "megatron_llama3_8b_h100_fp8.yaml", world_size=8)
    assert yaml.job == script.job and yaml.world_size == 8
    assert yaml.to_dict() == cli("import", "--from", f"megatron:{data / 'megatron_llama3_8b_h100_fp8.yaml'}",
                                 "--world-size", "8", "--json")


def test_errors_name_the_keyword_argument(tmp_path):
    with pytest.raises(frenzy.ConfigError, match=r'^cluster="8xh100": "h100" is not a known GPU type'):
        frenzy.plan(JOB, "8xh100")
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(frenzy.IoError, match=r"^out_dir: launch output directory"):
        frenzy.launch(JOB, "16xa100-80g", out_dir=blocker / "sub")


def test_slurm_settings_and_requeue():
    r = frenzy.launch(JOB, "16xa100-80g", slurm={"partition": "gpu", "account": "proj", "qos": "high",
                                                  "cpus_per_task": 32, "mem": "0", "requeue_signal_s": 600})
    sbatch = r.files["launch.sbatch"]
    for line in ("--partition=gpu", "--account=proj", "--qos=high", "--cpus-per-task=32", "--mem=0", "--requeue",
                 "--signal=B:USR1@600"):
        assert f"#SBATCH {line}\n" in sbatch
    off = frenzy.launch(JOB, "16xa100-80g", slurm={"requeue_signal_s": 0}).files["launch.sbatch"]
    assert "--requeue" not in off and "trap " not in off
    with pytest.raises(frenzy.ConfigError, match=r'slurm\["queue"\]'):
        frenzy.launch(JOB, "16xa100-80g", slurm={"queue": "gpu"})
    with pytest.raises(frenzy.ConfigError, match="launch_options::mem"):
        frenzy.launch(JOB, "16xa100-80g", slurm={"mem": "lots"})
    with pytest.raises(frenzy.ConfigError, match=r'slurm\["cpus_per_task"\]'):
        frenzy.launch(JOB, "16xa100-80g", slurm={"cpus_per_task": "many"})


def test_mixed_plan_is_one_heterogeneous_job(cli, cli_path, tmp_path):
    # llama-2-13b on one node of 8 x V100 and one of 4 x T4: neither type alone holds it there; the mixed plan puts the
    # first stage on the T4s (issue 27). The Python answer is the CLI's --json, the script one Slurm hetjob.
    job = {"name": "het", "model": {"preset": "llama-2-13b"},
           "training": {"seq_len": 2048, "global_batch": 64, "total_tokens": 1e9}}
    got = frenzy.launch(job, "8xv100-32g,4xt4", framework="megatron", mixed=True, gres={"v100-32g": "v100"})
    assert got.plan.mixed
    assert [(g["gpu"], g["gpus"]) for g in got.plan.groups] == [("t4", 4), ("v100-32g", 8)]
    script = got.files["launch.sbatch"]
    assert script.count("#SBATCH hetjob") == 1 and "#SBATCH --gres=gpu:v100:8" in script
    assert "--pipeline-model-parallel-layout" in script
    assert repr(got).startswith("<frenzy.Launch 4x t4 + 8x v100-32g,")
    f = tmp_path / "job.json"
    f.write_text(json.dumps(job))
    expected = cli("launch", "--job", f, "--gpus", "8xv100-32g,4xt4", "--framework", "megatron", "--mixed",
                   "--gres-map", "v100-32g=v100", "-o", tmp_path / "cli", "--json")
    got.write(tmp_path / "cli")
    assert got.to_dict() == expected
    with pytest.raises(frenzy.ConfigError, match="torchtitan launcher cannot write a pipeline over several GPU types"):
        frenzy.launch(job, "8xv100-32g,4xt4", framework="torchtitan", mixed=True)
