"""frenzy.estimate(...).to_dict() is exactly the CLI's `frenzy estimate --json` for the same job, GPU and margin
(same C++ code, same build flags: the doubles match bit for bit, so the comparison is exact), but for the CLI's own
`flags` of each piece of advice (the command-line options that reproduce it; docs/formats.md)."""
import json

import pytest

import frenzy

DENSE_PP = {
    "name": "llama-2-7b-pp",
    "model": {"preset": "llama-2-7b"},
    "training": {"seq_len": 4096, "micro_batch": 1, "global_batch": 64, "precision": "bf16-mixed"},
    "parallel": {"dp": 2, "tp": 2, "pp": 4, "sequence_parallel": True, "sharding": "optimizer",
                 "recompute": "selective"},
    "runtime": {"framework": "megatron"},
}
MOE = {
    "name": "mixtral-ep",
    "model": {"preset": "mixtral-8x7b"},
    "training": {"seq_len": 4096, "micro_batch": 1, "global_batch": 32},
    "parallel": {"dp": 8, "tp": 2, "pp": 2, "ep": 8, "sequence_parallel": True, "sharding": "optimizer"},
}
EXPLICIT = {
    "model": {"layers": 12, "hidden": 768, "heads": 12, "ffn_hidden": 3072, "activation": "gelu", "vocab": 50257,
              "tied_embeddings": True, "position_embedding": "learned", "norm": "layernorm"},
    "training": {"seq_len": 1024, "micro_batch": 8, "global_batch": 32, "precision": "fp16-mixed"},
    "parallel": {"dp": 4},
    "runtime": {"framework": "ddp", "attention": "unfused"},
}


def _cli_estimate(cli, *args):
    """`frenzy estimate --json` without the flags of its advice, which only a command line has."""
    d = cli(*args)
    for advice in d.get("nearest_fits", []) + [d.get("planner_same_gpus", {}), d.get("planner_fewest_gpus", {})]:
        advice.pop("flags", None)
    return d


def _file(tmp_path, job):
    p = tmp_path / "job.json"
    p.write_text(json.dumps(job))
    return p


@pytest.mark.parametrize("job", [DENSE_PP, MOE, EXPLICIT], ids=["dense-pp", "moe", "explicit"])
@pytest.mark.parametrize("gpu, margin", [(None, None), ("a100-80g", None), ("a100-80g", 0.0), ("h100-80g", 0.1),
                                         ("v100-32g", 0.05)])
def test_equals_cli_json(cli, tmp_path, job, gpu, margin):
    f = _file(tmp_path, job)
    args = ["estimate", "--job", f, "--json"]
    if gpu:
        args += ["--gpu", gpu]
    if margin is not None:
        args += ["--margin", margin]
    expected = _cli_estimate(cli, *args)
    if margin is None:  # the default on both sides
        assert frenzy.estimate(job, gpu=gpu).to_dict() == expected
        margin = expected["margin"]
    assert frenzy.estimate(job, gpu=gpu, margin=margin).to_dict() == expected
    assert frenzy.estimate(frenzy.Job.from_dict(job), gpu=gpu, margin=margin).to_dict() == expected
    assert frenzy.estimate(f, gpu=gpu, margin=margin).to_dict() == expected


def test_example_job_file(cli, root):
    f = root / "examples" / "jobs" / "llama-3.1-8b-fsdp.json"
    assert frenzy.estimate(f, gpu="a100-80g").to_dict() == _cli_estimate(cli, "estimate", "--job", f, "--gpu", "a100-80g",
                                                                         "--json")
    assert frenzy.estimate(f).to_dict() == cli("estimate", "--job", f, "--json")


def test_properties_are_the_report():
    e = frenzy.estimate(DENSE_PP, gpu="a100-80g")
    d = e.to_dict()
    assert len(e.stages) == 4  # pp = 4: one entry per pipeline stage
    # The peak is the bottleneck stage's allocated peak.
    assert e.peak_allocated_bytes == max(s.peak_allocated_bytes for s in e.stages)
    assert e.stages[e.bottleneck_stage].peak_allocated_bytes == e.peak_allocated_bytes
    assert [s.weights_bytes for s in e.stages] == [s["weights_bytes"] for s in d["stages"]]
    assert e.fits == d["fits"] and e.step_time_s == d["step_time_s"] and e.gpu == "a100-80g"
    assert e.required_bytes == d["required_bytes"] and e.capacity_bytes == d["capacity_bytes"]
    assert e.margin == d["margin"] == 0.05  # docs/formats.md: default margin 5%
    assert e.job == d["job"]
    # the speed's band and MFU ceiling (docs/perf-model.md): pp = 4 is the pipeline regime, band 13%
    assert e.rel_error_band == d["rel_error_band"] == 0.13 and e.error_regime == d["error_regime"] == "pipeline parallel"
    assert e.mfu_ceiling == d["mfu_ceiling"] and e.above_mfu_ceiling == d["above_mfu_ceiling"]
    assert e.above_mfu_ceiling == (e.mfu > e.mfu_ceiling > 0)


def test_without_gpu_there_is_no_verdict():
    e = frenzy.estimate(EXPLICIT)
    assert e.gpu is None and e.fits is None and e.step_time_s is None and e.required_bytes is None
    assert e.rel_error_band is None and e.mfu_ceiling is None and e.above_mfu_ceiling is None


def test_v100_has_no_bf16():
    # V100 has no bf16 tensor cores (gpus.csv: bf16_tflops empty), so no step time; the memory verdict stays.
    e = frenzy.estimate(DENSE_PP, gpu="v100-32g")
    assert e.step_time_s is None and e.tokens_per_s is None
    assert "bf16" in e.to_dict()["perf_reason"]


def test_gpu_as_dict_overrides_a_catalog_type():
    # The fit rule (memory/fit.hpp) compares required = reserved x (1 + uncertainty) with (1 - margin) x memory.
    # With no margin, the same A100 with its memory 1 MiB below the required bytes cannot hold the job; 1 MiB above
    # it can. Memory is the only field overridden: the step time, from the A100's other fields, stays the same.
    # Even with no margin the device keeps its CUDA context and NCCL's buffers (memory/device.hpp) free.
    full = frenzy.estimate(DENSE_PP, gpu="a100-80g", margin=0.0)
    outside_mib = (full.readouts["cuda_context_bytes"] + full.readouts["nccl_bytes"]) / 2**20
    need_mib = full.required_bytes / 2**20 + outside_mib
    assert full.required_bytes == full.peak_reserved_bytes * (1 + full.uncertainty)
    small = frenzy.estimate(DENSE_PP, gpu={"name": "a100-80g", "memory_mib": need_mib - 1}, margin=0.0)
    large = frenzy.estimate(DENSE_PP, gpu={"name": "a100-80g", "memory_mib": need_mib + 1}, margin=0.0)
    assert not small.fits and large.fits
    # A 10% margin takes 10% of the memory away: (1 - 0.1) x 80 GiB.
    assert frenzy.estimate(DENSE_PP, gpu="a100-80g", margin=0.1).capacity_bytes == 0.9 * 81920 * 2**20
    assert small.peak_reserved_bytes == full.peak_reserved_bytes
    assert small.step_time_s == full.step_time_s


def test_bad_input():
    with pytest.raises(frenzy.ConfigError, match=r'gpu="a100-81g" is not a known GPU type'):
        frenzy.estimate(DENSE_PP, gpu="a100-81g")
    with pytest.raises(frenzy.ConfigError, match=r"margin=1\.5.* in \[0, 1\)"):
        frenzy.estimate(DENSE_PP, gpu="a100-80g", margin=1.5)
    with pytest.raises(frenzy.ConfigError, match=r"gpu\.memory_mib"):
        frenzy.estimate(DENSE_PP, gpu={"name": "a100-80g", "memory_mib": "lots"})
    with pytest.raises(frenzy.ConfigError, match=r"parallel\.ep"):
        frenzy.estimate({**MOE, "parallel": {**MOE["parallel"], "ep": 3}})
    with pytest.raises(TypeError):
        frenzy.estimate(42)


def test_three_verdicts():
    # memory/fit.hpp: fits when reserved x (1 + band) fits the usable memory; tight when only the central estimate
    # (reserved) does, or when only the allocated peak with its band does (the allocator releases its cache and
    # retries); does_not_fit beyond both. Memory set 1 MiB around each threshold, no margin.
    full = frenzy.estimate(DENSE_PP, gpu="a100-80g", margin=0.0)
    assert full.verdict == "fits" and full.central_bytes == full.peak_reserved_bytes
    assert full.allocated_required_bytes == pytest.approx(full.peak_allocated_bytes * (1 + full.uncertainty))
    outside_mib = (full.readouts["cuda_context_bytes"] + full.readouts["nccl_bytes"]) / 2**20  # kept free: device.hpp
    need_mib, central_mib = full.required_bytes / 2**20 + outside_mib, full.central_bytes / 2**20 + outside_mib
    alloc_mib = full.allocated_required_bytes / 2**20 + outside_mib
    tight = frenzy.estimate(DENSE_PP, gpu={"name": "a100-80g", "memory_mib": need_mib - 1}, margin=0.0)
    assert tight.verdict == "tight" and not tight.fits and not tight.cache_flushes
    if alloc_mib < central_mib - 2:
        flush = frenzy.estimate(DENSE_PP, gpu={"name": "a100-80g", "memory_mib": central_mib - 1}, margin=0.0)
        assert flush.verdict == "tight" and flush.cache_flushes
    over = frenzy.estimate(DENSE_PP, gpu={"name": "a100-80g", "memory_mib": min(central_mib, alloc_mib) - 1},
                           margin=0.0)
    assert over.verdict == "does_not_fit" and not over.fits and not over.cache_flushes
    assert over.to_dict()["verdict"] == "does_not_fit"
    assert frenzy.estimate(EXPLICIT).verdict is None


def test_readme_example_global_batch_follows_dp():
    # README's Python example: a job dict without training.global_batch takes micro_batch x dp, as the CLI does
    # (docs/formats.md); before, it defaulted to 1 and the example raised
    e = frenzy.estimate({"model": {"preset": "llama-3.1-8b"}, "training": {"seq_len": 8192},
                         "parallel": {"dp": 8, "sharding": "optimizer"}}, gpu="h100-80g")
    assert e.job["training"]["global_batch"] == 8
    assert e.to_dict()["fits"] in (True, False)
    e2 = frenzy.estimate({"model": {"preset": "llama-3.1-8b"}, "training": {"micro_batch": 2, "global_batch": 32},
                          "parallel": {"dp": 8}})
    assert e2.job["training"]["global_batch"] == 32  # a stated global batch is kept


def test_moe_active_parameters():
    # Mistral AI, "Mixtral of experts": 46.7B parameters, 12.9B used per token (2 of 8 experts); 1% as presets_test
    e = frenzy.estimate(MOE)
    assert abs(e.active_parameters / 12.9e9 - 1) < 0.01
    assert e.active_parameters == e.to_dict()["active_parameters"]
    dense = frenzy.estimate(DENSE_PP)
    assert "active_parameters" not in dense.to_dict()  # dense models: the whole model, not repeated in the JSON
    assert dense.active_parameters < dense.parameters * 1.01


def test_report_charts():
    """Estimate.charts(): the memory chart has one bar segment per stage and kind (5 kinds and the allocator's
    reserve), the reserve being reserved - allocated of the stage; the step chart's shares add up to the step time."""
    e = frenzy.estimate({"model": {"preset": "llama-3.1-8b"}, "training": {"seq_len": 4096, "global_batch": 32},
                         "parallel": {"pp": 2, "dp": 4}}, gpu="h100-80g")
    charts = {c["name"]: c["spec"] for c in e.charts()}
    assert set(charts) == {"memory", "step"}
    bars = charts["memory"]["layer"][0]["data"]["values"]
    assert len(bars) == 6 * len(e.stages) == 12
    d = e.to_dict()
    for st, reserve in zip(d["stages"], [b for b in bars if b["kind"] == "allocator reserve"]):
        assert reserve["GiB"] == pytest.approx((st["peak_reserved_bytes"] - st["peak_allocated_bytes"]) / 2**30)
    assert sum(p["seconds"] for p in charts["step"]["data"]["values"]) == pytest.approx(d["step_time_s"], rel=1e-12)
    assert "<table>" in e._repr_html_() and "<script" not in e._repr_html_()


def test_to_dataframe_one_row_per_stage():
    """Estimate.to_dataframe(): to_dict()'s stages, one row per pipeline stage, the bytes unchanged."""
    pytest.importorskip("pandas")  # scripts/setup.sh installs python3-pandas
    e = frenzy.estimate({"model": {"preset": "llama-3.1-8b"}, "parallel": {"pp": 4, "dp": 2}}, gpu="h100-80g")
    df = e.to_dataframe()
    stages = e.to_dict()["stages"]
    assert list(df["stage"]) == [0, 1, 2, 3]
    assert list(df["peak_reserved_bytes"]) == [s["peak_reserved_bytes"] for s in stages]
    assert df["weights_bytes"].sum() == pytest.approx(sum(s["weights_bytes"] for s in stages), rel=1e-12)


def test_readouts_and_paged_states():
    """The readouts (memory/device.hpp) equal to_dict()'s; a paged 8-bit AdamW's moments are 2 bytes a parameter in
    unified memory, outside both peaks (bitsandbytes get_state_buffer)."""
    job = {"model": {"preset": "llama-3.2-3b"},
           "training": {"seq_len": 1024, "micro_batch": 1, "global_batch": 8, "precision": "bf16",
                        "optimizer": "adamw-8bit"},
           "runtime": {"framework": "hf", "paged_optimizer": True}}
    e = frenzy.estimate(job, "rtx-4090")
    assert e.readouts == e.to_dict()["readouts"]
    assert e.paged_bytes == pytest.approx(2 * e.parameters, rel=1e-9)
    r = e.readouts
    assert r["device_bytes"] == pytest.approx(r["reserved_bytes"] + r["cuda_context_bytes"] + r["nccl_bytes"]
                                              + r["paged_resident_bytes"], rel=1e-12)
    assert frenzy.estimate(job).readouts is None


def test_offloaded_checkpoints_pinned_host_memory():
    """Unsloth's offloaded checkpoints pin 200 x 256 KiB buffers and one per layer grown to its input
    (unsloth_zoo@ce232d6c gradient_checkpointing.py): Llama 3.2 1B (16 layers, h 2048) at 2048 tokens, 8 MiB inputs:
    16 x 8 MiB + 50 MiB = 178 MiB, outside both peaks; to_dict() carries it per GPU and per node."""
    job = {"model": {"preset": "llama-3.2-1b"},
           "training": {"seq_len": 2048, "micro_batch": 1, "global_batch": 1,
                        "finetune": {"method": "lora"}},
           "parallel": {"recompute": "full"},
           "runtime": {"framework": "unsloth"}}
    e = frenzy.estimate(job, "rtx-4090")
    assert e.host_activation_bytes_per_gpu == pytest.approx(178 * 2**20, rel=1e-12)
    d = e.to_dict()
    assert d["host_activation_bytes_per_gpu"] == pytest.approx(178 * 2**20, rel=1e-12)
    assert d["host_activation_bytes_per_node"] == pytest.approx(178 * 2**20, rel=1e-12)  # one GPU on the node
