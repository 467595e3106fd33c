"""The worker, the adapter listing and the staging children import what the CLI imports,
whatever folder the user runs it from.

`python -m` and `python -c` children put the current folder first on their path, so a
user's own `wgpu.py` or `numpy.py` there, or another Vajra version's `vajra_tui/`, was
what the GPU worker imported ("the GPU worker died while starting")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

CLI = Path(sys.executable).parent / "vajra-tui"


@pytest.fixture
def cluttered(tmp_path: Path) -> Path:
    """A working folder with the kind of files a GPU engineer keeps next to their experiments."""
    for name in ("wgpu", "numpy", "pydantic"):
        (tmp_path / f"{name}.py").write_text(f'raise ImportError("the user\'s own {name}.py was imported")\n')
    other = tmp_path / "vajra_tui"
    (other / "engine" / "gpu").mkdir(parents=True)
    for init in (other, other / "engine", other / "engine" / "gpu"):
        (init / "__init__.py").write_text('raise ImportError("another vajra_tui was imported")\n')
    return tmp_path


@pytest.mark.skipif(not CLI.exists(), reason="the console script is installed by the setup script")
def test_a_tune_runs_from_a_folder_whose_files_shadow_its_imports(cluttered: Path):
    proc = subprocess.run([str(CLI), "tune", "-w", "softmax", "--size", "32x128", "--source", "library",
                           "--generations", "0", "--budget", "1", "--reps", "2", "--warmup", "1",
                           "--json", "-q", "--no-cache"],
                          cwd=cluttered, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert any(r["status"] == "verified" for r in doc["results"] if r["name"] != "baseline")
    listing = subprocess.run([str(CLI), "devices", "--json"], cwd=cluttered, capture_output=True,
                             text=True, timeout=120)
    assert listing.returncode == 0 and json.loads(listing.stdout), listing.stderr


async def test_staging_processes_started_from_such_a_folder_stay_up(cluttered: Path, monkeypatch):
    """A staging child that cannot import dies, and its jobs are staged here, silently slower."""
    from test_staging import _jobs
    from vajra_tui.engine.admission import staging
    from vajra_tui.engine.admission.staging import Limits, stage_all
    from vajra_tui.engine.workloads import get_workload

    monkeypatch.chdir(cluttered)
    monkeypatch.setenv("VAJRA_STAGING_PROCESSES", "2")
    w = get_workload("conv1d")
    try:
        staged = await stage_all(w, "conv1d", w.size("1000x16"), _jobs(), Limits(65535, 16384))
        alive = [s.alive() for s in staging._STAGERS]
    finally:
        staging.shutdown()
    assert len(staged) == len(_jobs()) and alive == [True, True]


def test_a_workload_module_on_a_folder_a_script_added_to_its_path_is_tuned(tmp_path, monkeypatch):
    """A script that appends its workloads' folder to ``sys.path``: the GPU worker imports
    the module by the same spec (it failed to before, with the folder missing there)."""
    import shutil

    import vajra_tui

    root = Path(__file__).resolve().parent.parent
    folder = tmp_path / "my_workloads"
    folder.mkdir()
    shutil.copy(root / "examples" / "workloads" / "rowhist.py", folder / "appended_hist.py")
    monkeypatch.setattr(sys, "path", [*sys.path, str(folder)])
    monkeypatch.chdir(tmp_path)
    try:
        # a small size: what is tested is the import, and the seed's naive baseline (1024 rows
        # of 1024, 64 bins) took most of this test's 17 s on lavapipe
        report = vajra_tui.tune("appended_hist:WORKLOAD", size="ROWS=16,COLS=300,BINS=20", generations=0,
                                budget=1, warmup=1, reps=2)
    finally:
        sys.modules.pop("appended_hist", None)
    baseline = next(r for r in report.results if r.name == "baseline")
    assert baseline.status == "verified"
