"""frenzy.plan(...).to_dict() is exactly the CLI's `frenzy plan --json` for the same job, cluster and options."""
import json
import sys

import pytest

import frenzy


@pytest.mark.parametrize(
    "job, cluster, objective",
    [
        ("plan-gpt3-125m.json", "three-type.json", "time"),
        ("plan-llama-2-7b.json", "three-type.json", "gpu-hours"),
        ("plan-mixtral-8x7b.json", "five-type.json", "time"),
    ],
)
def test_equals_cli_json(cli, root, job, cluster, objective):
    j = root / "examples" / "jobs" / job
    c = root / "examples" / "clusters" / cluster
    expected = cli("plan", "--job", j, "--cluster", c, "--objective", objective, "--margin", 0.1, "--json")
    got = frenzy.plan(j, c, objective=objective, margin=0.1)
    assert got.to_dict() == expected
    # The same job and cluster given as dicts.
    assert frenzy.plan(json.loads(j.read_text()), json.loads(c.read_text()), objective=objective,
                       margin=0.1).to_dict() == expected
    assert got.to_dict(top=2) == dict(expected, plans=expected["plans"][:2])
    assert got.to_dict(top=2) == cli("plan", "--job", j, "--cluster", c, "--objective", objective, "--margin", 0.1,
                                     "--top", 2, "--json")


def test_gpu_list_and_options_equal_cli_json(cli, root):
    j = root / "examples" / "jobs" / "plan-llama-2-7b.json"
    expected = cli("plan", "--job", j, "--gpus", "16xa100-80g,8xv100-32g", "--objective", "cost", "--price", "example",
                   "--whole-nodes", "--json")
    got = frenzy.plan(j, "16xa100-80g,8xv100-32g", objective="cost", prices="example", whole_nodes=True)
    assert got.to_dict() == expected
    expected = cli("plan", "--job", j, "--gpus", "8xh100-80g", "--framework", "megatron", "--framework", "fsdp",
                   "--max-gpus", 4, "--json")
    assert frenzy.plan(j, "8xh100-80g", frameworks=["megatron", "fsdp"], max_gpus=4).to_dict() == expected
    # Prices given as a dict: 2 USD per A100-hour and 1 per V100-hour.
    expected = cli("plan", "--job", j, "--gpus", "16xa100-80g,8xv100-32g", "--objective", "cost", "--price",
                   "a100-80g=2", "--price", "v100-32g=1", "--json")
    got = frenzy.plan(j, "16xa100-80g,8xv100-32g", objective="cost", prices={"a100-80g": 2, "v100-32g": 1.0})
    assert got.to_dict() == expected
    best = got.best
    # cost = billed GPU-hours x price, one IEEE multiplication on both sides: exact.
    assert best.cost == best.billed_gpu_hours * {"a100-80g": 2, "v100-32g": 1}[best.gpu]


def test_stated_layout_is_kept(cli, root, tmp_path):
    # A job that states tp = 2 and micro_batch 1: every plan keeps them (docs/formats.md: stated fields constrain).
    job = json.loads((root / "examples" / "jobs" / "plan-llama-2-7b.json").read_text())
    job["parallel"] = {"tp": 2}
    job["training"]["micro_batch"] = 1
    f = tmp_path / "job.json"
    f.write_text(json.dumps(job))
    r = frenzy.plan(job, "16xa100-80g")
    assert len(r) > 0 and all(p.parallel["tp"] == 2 and p.micro_batch == 1 for p in r)
    assert r.to_dict() == cli("plan", "--job", f, "--gpus", "16xa100-80g", "--json")


def test_plans_are_values(root):
    r = frenzy.plan(root / "examples" / "jobs" / "plan-gpt3-125m.json",
                    root / "examples" / "clusters" / "three-type.json")
    assert len(r) == len(r.plans) > 0
    best = r.best
    assert best.to_dict() == r.to_dict()["plans"][0] == r[0].to_dict()
    assert r[-1].to_dict() == r.to_dict()["plans"][-1]
    assert [p.to_dict() for p in r] == r.to_dict()["plans"]
    # A plan's GPU count is its layout's dp x tp x pp x cp, and a plan fits its usable memory.
    for p in r.plans:
        q = p.parallel
        assert p.gpus == q["dp"] * q["tp"] * q["pp"] * q["cp"]
        assert p.peak_allocated_bytes <= p.capacity_bytes
        # each plan carries its speed band, regime and attention kernel (docs/perf-model.md)
        d = p.to_dict()
        assert (p.rel_error_band, p.error_regime, p.attention, p.mfu_ceiling) == (
            d["rel_error_band"], d["error_regime"], d["attention"], d["mfu_ceiling"])
        # calibrated regimes: their LOSO p90s (0.13-0.40); a chip without calibration rows: 0.64, the p90 of the 20
        # held-out 2026 runs on such chips (include/frenzy/perf/error_band.hpp)
        if p.error_regime == "chip without calibration data":
            assert p.rel_error_band == 0.64
        else:
            assert 0.10 <= p.rel_error_band <= 0.40
        if p.gpu in ("v100-16g", "v100-32g", "t4"):
            assert p.attention != "flash"  # no flash kernel below sm80
    with pytest.raises(IndexError):
        r[len(r)]


def test_a_type_too_small_is_a_result_not_an_error(root):
    # Llama 3.1 70B does not fit 16 RTX 3090s (24 GiB each, 384 GiB together; its bf16 weights alone are 131 GiB
    # and with AdamW states ~1.1 TiB): no plans, one infeasible entry naming the type.
    cluster = {"nodes": [{"gpu": "rtx-3090", "gpus_per_node": 8, "count": 2}]}
    r = frenzy.plan(root / "examples" / "jobs" / "plan-llama-3.1-70b.json", cluster)
    assert r.best is None and len(r) == 0 and list(r) == []
    assert [f["gpu"] for f in r.infeasible] == ["rtx-3090"]


def test_bad_input(root):
    job = root / "examples" / "jobs" / "plan-gpt3-125m.json"
    cluster = root / "examples" / "clusters" / "three-type.json"
    with pytest.raises(frenzy.ConfigError, match="objective"):
        frenzy.plan(job, cluster, objective="fastest")
    with pytest.raises(frenzy.ConfigError, match="price"):
        frenzy.plan(job, cluster, objective="cost")
    with pytest.raises(frenzy.ConfigError, match=r"cluster\.nodes\[0\]\.count=0"):
        frenzy.plan(job, {"nodes": [{"gpu": "a100-80g", "count": 0}]})
    with pytest.raises(frenzy.ConfigError, match=r"cluster\.nodes\[0\]\.gpu=\"a100\""):
        frenzy.plan(job, {"nodes": [{"gpu": "a100", "count": 1}]})
    with pytest.raises(frenzy.IoError, match="cannot open"):
        frenzy.plan(job, "/nonexistent/cluster.json")
    with pytest.raises(frenzy.ConfigError, match="a100-81g"):
        frenzy.plan(job, "8xa100-81g")
    with pytest.raises(frenzy.ConfigError, match=r'prices\["a100-80g"\]'):
        frenzy.plan(job, cluster, objective="cost", prices={"a100-80g": -1})
    with pytest.raises(frenzy.ConfigError, match=r'prices\["a100-80g"\]=\'2\' is not a number'):
        frenzy.plan(job, cluster, objective="cost", prices={"a100-80g": "2"})
    with pytest.raises(TypeError):
        frenzy.plan(job, cluster, prices=[("a100-80g", 2)])
    with pytest.raises(frenzy.ConfigError, match="margin"):
        frenzy.plan(job, cluster, margin=1.0)
    with pytest.raises(frenzy.ConfigError, match="frameworks"):
        frenzy.plan(job, cluster, frameworks=["jax"])


def test_prices_through_the_cli_reader(root):
    # prices= goes through io/prices.hpp, the reader behind the CLI's --price: same bound, same catalog check.
    job = root / "examples" / "jobs" / "plan-gpt3-125m.json"
    cluster = "16xa100-80g"
    with pytest.raises(frenzy.ConfigError, match=r'prices\["a100-80g"\] must be a finite number of USD in \[0, 1e6\]'):
        frenzy.plan(job, cluster, objective="cost", prices={"a100-80g": 2e6})
    with pytest.raises(frenzy.ConfigError, match=r'prices\["a100-80g"\] must be a finite number'):
        frenzy.plan(job, cluster, objective="cost", prices={"a100-80g": float("inf")})
    with pytest.raises(frenzy.ConfigError, match="a100-81g"):
        frenzy.plan(job, cluster, objective="cost", prices={"a100-81g": 1})
    with pytest.raises(frenzy.ConfigError, match=r'prices="cheap" must be a dict'):
        frenzy.plan(job, cluster, objective="cost", prices="cheap")
    with pytest.raises(frenzy.ConfigError, match=r'prices\["a100-80g"\]=True is not a number'):
        frenzy.plan(job, cluster, objective="cost", prices={"a100-80g": True})
    top = frenzy.plan(job, cluster, objective="cost", prices={"a100-80g": 1e6}).best
    assert top is not None and top.gpu == "a100-80g"


def test_report_charts_and_notebook_html(cli, root, tmp_path):
    """PlanResult.charts() are the specs of `frenzy report`'s page; report_html() is that page; _repr_html_ shows
    the table in a notebook, one row per plan; to_dataframe() needs pandas and says so."""
    j = root / "examples" / "jobs" / "plan-llama-2-7b.json"
    c = root / "examples" / "clusters" / "three-type.json"
    r = frenzy.plan(j, c, objective="cost", prices="example")
    charts = r.charts()
    assert [ch["name"] for ch in charts] == ["plans"]
    points = charts[0]["spec"]["layer"][1]["data"]["values"]
    assert [p["gpu"] for p in points] == [p.gpu for p in r.plans]
    assert [p["y"] for p in points] == pytest.approx([p.cost for p in r.plans])
    html = r._repr_html_()
    assert html.count("<tr>") == 1 + len(r.plans) + (1 + len(r.infeasible) if r.infeasible else 0)
    assert "<script" not in html
    page = tmp_path / "plan.html"
    cli("plan", "--job", j, "--cluster", c, "--objective", "cost", "--price", "example", "--html", page, raw=True)
    assert r.report_html() == page.read_text()
    pytest.importorskip("pandas")  # scripts/setup.sh installs python3-pandas
    df = r.to_dataframe()
    assert list(df["gpu"]) == [p.gpu for p in r.plans]
    assert list(df["parallel.dp"]) == [p.parallel["dp"] for p in r.plans]
    assert list(df["tokens_per_s"]) == pytest.approx([p.tokens_per_s for p in r.plans])


def test_dataframes_say_when_pandas_is_missing(monkeypatch):
    """Without pandas, to_dataframe() raises ImportError naming the method and how to install pandas."""
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` now raises ImportError
    r = frenzy.plan({"model": {"preset": "gpt2"}}, "8xa100-80g")
    with pytest.raises(ImportError, match="PlanResult.to_dataframe needs pandas"):
        r.to_dataframe()
    with pytest.raises(ImportError, match="Estimate.to_dataframe needs pandas"):
        frenzy.estimate({"model": {"preset": "gpt2"}}).to_dataframe()


def test_plan_states_total_and_active_parameters(cli):
    """A MoE plan states its total and active parameters as `frenzy plan --json` does; a dense one only the total."""
    r = frenzy.plan({"model": {"preset": "mixtral-8x7b"}}, "16xh100-80g")
    doc = cli("plan", "--model", "mixtral-8x7b", "--gpus", "16xh100-80g", "--json")
    assert r.parameters == doc["parameters"] == pytest.approx(46.7e9, rel=0.01)  # Mixtral's model card: 46.7B
    assert r.active_parameters == doc["active_parameters"] == pytest.approx(12.9e9, rel=0.01)  # and 12.9B active
    dense = frenzy.plan({"model": {"preset": "gpt2"}}, "8xa100-80g")
    assert dense.active_parameters == dense.parameters
    assert "active_parameters" not in dense.to_dict()


def test_mixed_plans_equal_cli_json(cli, root):
    """plan(mixed=True) gives the CLI's mixed plans: pipelines over two GPU types of three-type.json for a 13B job."""
    c = root / "examples" / "clusters" / "three-type.json"
    expected = cli("plan", "--model", "llama-2-13b", "--cluster", c, "--total-tokens", "1e10", "--mixed", "--json")
    got = frenzy.plan({"model": {"preset": "llama-2-13b"}, "training": {"total_tokens": 1e10}}, c, mixed=True)
    assert got.to_dict() == expected
    assert [p.to_dict() for p in got.mixed_plans] == expected["mixed_plans"]
    assert got.mixed_plans, "three-type.json has pipelines over two types for a 13B job"
    for p in got.mixed_plans:
        assert p.mixed and len({g["gpu"] for g in p.groups}) == 2
        assert sum(p.parallel["stage_layers"]) == 40
        assert p.gpus == sum(g["gpus"] for g in p.groups) and p.gpu == "+".join(g["gpu"] for g in p.groups)
    assert not got.plans[0].mixed and got.plans[0].groups == []
    assert frenzy.plan({"model": {"preset": "llama-2-13b"}}, c).mixed_plans == []
