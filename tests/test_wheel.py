"""The package as a pipx user gets it: built (sdist, then the wheel from the sdist), installed
into a clean venv from the registry, and run from an empty folder with no source tree.

It needs the package registry (the build backend and the dependencies come from it);
where pip cannot reach it, the tests skip and say so. Everything is bounded in time.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
IGNORE = shutil.ignore_patterns(".git", ".venv", "node_modules", "__pycache__", "*.egg-info", "build",
                                "dist", ".pytest_cache", "snapshot_report.html", ".gl", ".whl")
OFFLINE = ("Could not find a version", "NewConnectionError", "Temporary failure in name resolution",
           "Network is unreachable", "ConnectTimeout", "ReadTimeout", "No matching distribution")
SHIPPED = sorted(p.name for p in (ROOT / "vajra_tui" / "recordings").glob("*.jsonl"))


def _run(cmd: list[str], timeout: float, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, **kw)


def _skip_if_offline(proc: subprocess.CompletedProcess, what: str) -> None:
    text = proc.stdout + proc.stderr
    if proc.returncode != 0 and any(word in text for word in OFFLINE):
        pytest.skip(f"{what}: the package registry is not reachable from here ({text.strip().splitlines()[-1]})")
    assert proc.returncode == 0, f"{what} failed:\n{text[-3000:]}"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    """``python -m build``: the sdist from a copy of the tree, then the wheel from that sdist."""
    pytest.importorskip("build", reason="the 'build' package (a test extra) is not installed")
    base = tmp_path_factory.mktemp("dist")
    src = base / "src"
    shutil.copytree(ROOT, src, ignore=IGNORE)
    out = base / "out"
    proc = _run([sys.executable, "-m", "build", "--outdir", str(out), str(src)], timeout=420)
    _skip_if_offline(proc, "building the sdist and wheel")
    wheels, sdists = list(out.glob("*.whl")), list(out.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1
    return {"wheel": wheels[0], "sdist": sdists[0]}


def test_wheel_holds_the_recordings_and_honest_metadata(built):
    wheel = built["wheel"]
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        metadata = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        entry_points = zf.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    # the built-ins are plugins of the same group any package uses for its own workloads
    assert "[vajra_tui.workloads]" in entry_points and "gemv = vajra_tui.engine.workloads.gemv:WORKLOAD" \
        in entry_points
    assert sorted(Path(n).name for n in names if n.startswith("vajra_tui/recordings/")) == SHIPPED
    for needed in ("vajra_tui/tui/styles.tcss", "vajra_tui/node/tint_check.mjs", "vajra_tui/node/package-lock.json"):
        assert needed in names
    assert not any("node_modules" in n or n.startswith("tests/") for n in names)
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    requires = [line.split(": ", 1)[1] for line in metadata.splitlines() if line.startswith("Requires-Dist: ")]
    assert any(r.startswith("rich>=") for r in requires), "rich is imported, so it is declared"
    assert any(r.startswith("textual>=6.2") for r in requires)
    assert any(r.startswith("tomli") and "python_version < \"3.11\"" in r for r in requires)
    assert any(r.startswith("ray>=") and 'extra == "ray"' in r for r in requires)  # optional: the `ray` extra
    assert any(r.startswith("playwright>=") and 'extra == "browser"' in r for r in requires)
    assert "License-Expression: MIT" in metadata and "Classifier: Environment :: Console" in metadata
    assert wheel.stat().st_size < 2_000_000


def test_sdist_carries_what_its_tests_need(built):
    with tarfile.open(built["sdist"]) as tf:
        names = {"/".join(n.split("/")[1:]) for n in tf.getnames()}
    for needed in ("tests/conftest.py", "tests/data/session_fixture.jsonl", "tests/kernels/hang.wgsl",
                   "tests/test_snapshots.py", "LICENSE", "scripts/test.sh", "pyproject.toml",
                   "examples/workloads/transpose.py", "examples/workloads/rowhist_shared.wgsl",
                   "tests/published/SOURCES.sha256", "tests/published/LICENSES/wgpu.LICENSE.APACHE",
                   "tests/published/LICENSES/wgpu.LICENSE.MIT", "tests/published/LICENSES/gpu.cpp.LICENSE",
                   "benchmarks/experiments/fft2_cols_first.py", ".ci/run"):
        assert needed in names, needed
    assert any(n.startswith("tests/__snapshots__/") and n.endswith(".svg") for n in names)
    assert {n for n in names if n.startswith("vajra_tui/recordings/")} == \
        {f"vajra_tui/recordings/{n}" for n in SHIPPED}
    assert not any("node_modules" in n or "__pycache__" in n for n in names)


@pytest.mark.timeout(900)
def test_installed_wheel_runs_bench_and_replays_without_the_source_tree(built, tmp_path):
    # A clean venv without pip of its own: this environment's pip installs into it (``--python``),
    # and skips byte-compiling what it installs (Python compiles a module when it first imports
    # it). What lands in the venv is the same wheel and dependencies from the registry; seeding
    # pip (ensurepip) and compiling every dependency cost about 20 of this test's 33 s.
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], timeout=120).check_returncode()
    python, cli = venv / "bin" / "python", venv / "bin" / "vajra-tui"
    install = _run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-compile",
                    "--timeout", "30", str(built["wheel"])], timeout=720)
    _skip_if_offline(install, "installing the wheel's dependencies")
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(VAJRA_CACHE_DIR=str(tmp_path / "cache"), VAJRA_DATA_DIR=str(tmp_path / "data"),
               VAJRA_CONFIG_DIR=str(tmp_path / "config"), COLUMNS="80", PYTHONNOUSERSITE="1")
    where = _run([str(python), "-c", "import vajra_tui; print(vajra_tui.__file__)"], 60, cwd=empty, env=env)
    assert str(venv) in where.stdout and str(ROOT) not in where.stdout, where.stdout

    bench = _run([str(cli), "bench", "-w", "sgemm", "--size", "32", "--reps", "2", "--warmup", "1",
                  "--json", "-q"], 300, cwd=empty, env=env)
    assert bench.returncode == 0, bench.stderr[-3000:]
    doc = json.loads(bench.stdout)
    assert doc["results"][0]["name"] == "baseline" and doc["results"][0]["status"] == "verified"

    listed = _run([str(cli), "replay", "--list"], 60, cwd=empty, env=env)
    assert sorted(Path(line).name for line in listed.stdout.split()) == SHIPPED
    replay = _run([str(cli), "replay", "lavapipe-sgemm", "--headless"], 120, cwd=empty, env=env)
    assert replay.returncode == 0, replay.stderr[-3000:]
    assert "baseline" in replay.stdout
    assert max(len(line) for line in replay.stdout.splitlines()) <= 80, "the table fits 80 columns"
