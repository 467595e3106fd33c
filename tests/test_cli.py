"""The headless CLI through its real entry point, on the real adapter."""

from __future__ import annotations

import json

import pytest

from conftest import KERNELS
from vajra_tui.cli.main import main

RESULT_KEYS = {"name", "status", "reason", "diagnostics", "max_rel_error", "median_ms", "iqr_ms",
               "timing", "gflops", "gbps", "pct_of_roofline", "regime", "workgroup_size", "grid",
               "speedup", "source_sha256"}


def test_bench_json_document(capsys, tmp_path):
    rec = tmp_path / "run.jsonl"
    code = main(["bench", "-w", "softmax", "--size", "64x300", "--reps", "3", "--warmup", "1",
                 "-k", str(KERNELS / "softmax_row.wgsl"), "-k", str(KERNELS / "noop.wgsl"),
                 "--json", "--record", str(rec), "-q"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert {"name", "backend", "adapter_type", "vendor", "driver", "software"} <= set(doc["device"])
    assert doc["workload"]["name"] == "softmax" and doc["workload"]["size"] == {"ROWS": 64, "COLS": 300}
    names = [r["name"] for r in doc["results"]]
    assert names == ["baseline", "softmax_row", "noop"]
    for r in doc["results"]:
        assert RESULT_KEYS <= set(r)
    base, row, noop = doc["results"]
    assert base["status"] == row["status"] == "verified" and base["speedup"] == pytest.approx(1.0)
    assert noop["status"] == "rejected"
    assert row["workgroup_size"] == [256, 1, 1] and row["grid"] == [1, 64, 1]
    assert rec.exists() and not rec.with_name(rec.name + ".partial").exists()
    # the recording replays headlessly into the same results
    assert main(["replay", str(rec), "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert [r["status"] for r in replayed["results"]] == ["verified", "verified", "rejected"]


def test_wall_clock_timing_and_browser_badge(capsys):
    """--timing wall takes the one-dispatch-per-request path; the winner gets a Tint verdict."""
    from vajra_tui.engine.browser import tint

    code = main(["bench", "-w", "sgemm", "--size", "64", "--reps", "3", "--warmup", "1",
                 "--timing", "wall", "-k", str(KERNELS / "sgemm_tiled.wgsl"), "--json", "-q"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    base, tiled = doc["results"]
    assert base["timing"] == tiled["timing"] == "wall"
    assert tiled["status"] == "verified" and tiled["median_ms"] > 0
    # One name per kernel: the winner is named as its result is, never by an internal id.
    # At 64³ on a software adapter the tiled kernel may not beat the naive one beyond noise.
    assert doc["winner"] in ("sgemm_tiled", None)
    assert doc["baseline_won"] == (doc["winner"] is None) and doc["headline"]
    winner = tiled
    if tint.node_available() and tint.ensure_node_modules() is not None:
        assert winner["browser"] == "browser-valid", winner["browser_diagnostics"]
    else:
        assert winner["browser"].startswith("unchecked")


@pytest.mark.parametrize("argv,needle", [
    (["bench", "-w", "nope"], "unknown workload"),
    (["bench", "-w", "sgemm", "--size", "12xfoo"], "bad size"),
    (["bench", "-w", "sgemm", "-k", "/no/such.wgsl"], "kernel file not found"),
    (["bench", "-w", "sgemm", "--reps", "0"], "--reps"),
    (["replay", "/no/such.jsonl", "--headless"], "no such recording"),
])
def test_bad_usage_is_one_line_and_exit_2(capsys, argv, needle):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err


def test_devices_lists_the_adapter(capsys):
    assert main(["devices", "--json"]) == 0
    adapters = json.loads(capsys.readouterr().out)
    assert adapters and all("name" in a and "limits" in a for a in adapters)


def test_config_path(capsys, user_dirs):
    assert main(["config", "path"]) == 0
    assert capsys.readouterr().out.strip().endswith("config.toml")
