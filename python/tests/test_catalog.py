"""frenzy.models() is the CLI's `frenzy models --json`; frenzy.gpus() is the catalog of data/gpus.csv."""
import csv

import frenzy


def test_models_equal_cli_json(cli):
    assert frenzy.models() == cli("models", "--json")


def test_gpus_equal_cli_json(cli):
    assert frenzy.gpus() == cli("gpus", "--json")


def test_models_include_the_documented_presets():
    names = {m["name"] for m in frenzy.models()}
    # docs/formats.md promises at least these.
    assert {"gpt2", "llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b", "qwen2.5-72b", "bloom-176b"} <= names
    llama = next(m for m in frenzy.models() if m["name"] == "llama-3.1-8b")
    # Meta's model card: 32 layers, hidden 4096, 8 KV heads; 8.03B parameters.
    assert (llama["layers"], llama["hidden"], llama["kv_heads"]) == (32, 4096, 8)
    assert abs(llama["parameters"] / 8.03e9 - 1) < 0.005


def test_gpus_match_the_datasheet_table(data_dir):
    rows = {}
    with open(data_dir / "gpus.csv") as f:
        for row in csv.DictReader(line for line in f if not line.startswith("#")):
            rows[row["name"]] = row
    gpus = {g["name"]: g for g in frenzy.gpus()}
    # every datasheet row is in the catalog; the catalog adds newer types, each citing its datasheet in hw/gpu.hpp
    assert set(rows) <= set(gpus)
    for name, g in gpus.items():
        if name not in rows:
            continue
        # "~" marks an approximate datasheet value (gpus.csv header); the catalog keeps the number.
        assert g["memory_mib"] == float(rows[name]["memory_mib"].lstrip("~")), name
        assert g["gpus_per_node"] == int(rows[name]["gpus_per_node_typical"]), name
        assert g["memory_bytes"] == g["memory_mib"] * 2**20, name
