"""Headless output a person reads or a script parses: tables at the real terminal width,
CSV, ``lock diff``, ``doctor``, the export's wording and file modes, and the browser
check's answer when its Node sidecar is not installed."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import stat

import pytest

from vajra_tui.cli.main import main
from vajra_tui.engine.events import CandidateResult, DeviceInfo
from vajra_tui.engine.export.lockfile import build_lock, dump_lock, lock_entry
from vajra_tui.engine.workloads import WORKLOADS
from vajra_tui.shipped import find_shipped

SOFTMAX = "nvidia-h200-softmax"


@pytest.mark.parametrize("columns", [80, 120])
def test_tables_fit_the_terminal(capsys, monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    assert main(["replay", SOFTMAX, "--headless"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= columns, max(lines, key=len)
    assert "baseline" in out and "speedup" in out
    if columns == 80:
        assert "not shown at 80 columns" in out  # what was dropped is said, with where to find it


def test_csv_has_every_result_and_refuses_to_overwrite(capsys, tmp_path):
    target = tmp_path / "results.csv"
    assert main(["replay", SOFTMAX, "--headless", "--csv", str(target)]) == 0
    capsys.readouterr()
    rows = list(csv.DictReader(io.StringIO(target.read_text())))
    doc_code = main(["replay", SOFTMAX, "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc_code == 0 and [r["name"] for r in rows] == [r["name"] for r in doc["results"]]
    first = rows[0]
    assert first["device"] == doc["device"]["name"] and first["workload"] == "softmax"
    assert float(first["median_ms"]) == doc["results"][0]["median_ms"]
    before = target.read_text()
    assert main(["replay", SOFTMAX, "--headless", "--csv", str(target)]) == 2
    assert "exists" in capsys.readouterr().err and target.read_text() == before


def test_csv_says_which_kernels_break_the_portable_limits_and_why():
    """The table marks a kernel over WebGPU's default limits with * and a footnote; the CSV,
    read by a script, has the same verdict and reasons in columns of their own."""
    from vajra_tui.cli.tables import results_csv

    sgemm = WORKLOADS["sgemm"]
    info = sgemm.info(sgemm.size("64"))
    dev = DeviceInfo(name="H200", backend="Vulkan", adapter_type="DiscreteGPU", driver="1.0")
    over = ["workgroup storage 32768 B over 16384", "1024 invocations over 256"]
    results = [CandidateResult(id="a", name="a", status="verified", portable=True, workgroup_size=[16, 16, 1]),
               CandidateResult(id="b", name="b", status="verified", portable=False, portability=over),
               CandidateResult(id="c", name="c", status="compile_error")]
    rows = list(csv.DictReader(io.StringIO(results_csv(results, dev, info))))
    assert [(r["portable"], r["portability"]) for r in rows] == [
        ("True", ""), ("False", "; ".join(over)), ("", "")]
    assert rows[0]["workgroup_size"] == "16x16x1"  # shapes still join with x


def _lock(tmp_path, name: str, device: str, medians: dict[str, float]):
    sgemm = WORKLOADS["sgemm"]
    info = sgemm.info(sgemm.size("64"))
    dev = DeviceInfo(name=device, backend="Vulkan", adapter_type="DiscreteGPU", driver="1.0")
    entries = []
    for kernel, median in medians.items():
        source = f"// {kernel}\n@compute @workgroup_size(1) fn main() {{}}\n"
        result = CandidateResult(id=kernel, name=kernel, status="verified", stitched_source=source,
                                 source_sha256=hashlib.sha256(source.encode()).hexdigest(),
                                 grid=[1, 1, 1], workgroup_size=[1, 1, 1], median_ms=median, timing="timestamp")
        entries.append(lock_entry(result, dev, info))
    path = tmp_path / name
    path.write_text(dump_lock(build_lock(entries)))
    return path


def test_lock_diff_side_by_side(capsys, tmp_path, monkeypatch):
    a = _lock(tmp_path, "a.lock.json", "GPU one", {"tiled": 1.0, "vec4": 0.5})
    b = _lock(tmp_path, "b.lock.json", "GPU two", {"tiled": 0.75, "naive": 4.0})
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["lock", "diff", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "GPU one" in out and "GPU two" in out and "-25%" in out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert main(["lock", "diff", str(a), str(b), "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert rows["tiled"]["change"] == pytest.approx(-0.25)
    assert rows["vec4"]["b_median_ms"] is None and rows["naive"]["a_median_ms"] is None
    (tmp_path / "bad.json").write_text("{nope")
    assert main(["lock", "diff", str(a), str(tmp_path / "bad.json")]) == 2
    assert "not valid JSON" in capsys.readouterr().err


def test_doctor_says_what_works_here(capsys):
    assert main(["doctor", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["checks"]
    checks = {c["name"]: c for c in listed}
    assert checks["adapter"]["state"] in ("ok", "warn") and "timestamps" in checks
    assert {"node", "dawn/tint", "nvml", "ray", "config", "cache", "llm key"} <= set(checks)
    assert "NEBIUS_API_KEY" in checks["llm key"]["detail"]
    # llvmpipe's loop limit is said where the adapter is llvmpipe, and only there
    assert ("loops" in checks) == any("llvmpipe" in c["detail"].lower() for c in listed if c["name"] == "adapter")
    assert "loops" not in checks or "65,535 loop steps" in checks["loops"]["detail"]


def test_export_follows_the_umask_and_speaks_the_users_words(capsys, tmp_path):
    out = tmp_path / "out"
    old = os.umask(0o022)
    try:
        assert main(["export", "lavapipe-sgemm", "--out", str(out)]) == 0
    finally:
        os.umask(old)
    err = capsys.readouterr().err
    assert f"to {out}" in err.splitlines()[0], "the folder is stated before anything is written"
    for path in out.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path
    lock = json.loads((out / "vajra.lock.json").read_text())
    for name, sha in lock["files"].items():  # each file's own sha256
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == sha
    assert main(["export", "lavapipe-sgemm", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "already exists; pass --force to overwrite" in err and "overwrite=True" not in err


def test_browser_check_without_the_sidecar_answers_at_once(monkeypatch, tmp_path):
    from vajra_tui.engine.browser import tint

    if not tint.node_available():
        pytest.skip("node is not installed: the answer is then 'node is not installed'")
    monkeypatch.setenv("VAJRA_NODE_DIR", str(tmp_path / "no-sidecar"))
    result = tint.tint_check("@compute @workgroup_size(1) fn main() {}")
    assert not result.available and result.reason == "browser check unavailable: run vajra-tui setup-node"
    assert not (tmp_path / "no-sidecar").exists(), "nothing is installed behind the user's back"
    assert find_shipped("lavapipe-sgemm") is not None


@pytest.mark.parametrize("command", [
    ["replay", SOFTMAX, "--headless"],  # a table printed through rich
    ["replay", "--list"],               # plain prints
    ["tune", "-w", "softmax", "--size", "32x128", "--source", "library", "--generations", "0",
     "--budget", "1", "--reps", "2", "--warmup", "1", "-q", "--no-cache"],
])
def test_a_reader_that_leaves_early_gets_no_traceback(command):
    """`vajra-tui ... | head`: the reader is gone before the first line. One status, as a
    shell tool's (141), whether rich or print met the closed pipe; nothing on stderr."""
    import subprocess
    import sys
    from pathlib import Path

    cli = Path(sys.executable).parent / "vajra-tui"
    if not cli.exists():
        pytest.skip("the console script is installed by the setup script")
    proc = subprocess.Popen([str(cli), *command], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=300) == 141, err
    assert "Traceback" not in err and "Exception ignored" not in err, err
