"""A workload's own code (make_inputs, reference) runs under a deadline of its own.

It used to share the worker's 900 s Prepare deadline: a ``make_inputs`` that never returns
held ``bench`` for a quarter of an hour and then said "GPU worker failed". Now the limit is
``timing.prepare_deadline_s`` and the message names it, in one line, exit 2.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import cache_with_this_runs_calibration
from vajra_tui.settings import Settings, TimingSettings

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "workloads" / "transpose.py"


def _sleeper(tmp_path: Path) -> Path:
    """The example workload, with a make_inputs that never returns."""
    path = tmp_path / "sleeper.py"
    path.write_text(EXAMPLE.read_text() + "\n\nimport time as _time\n\n\n"
                    "def _forever(size, rng):\n    while True:\n        _time.sleep(3600)\n\n\n"
                    "import dataclasses\nWORKLOAD = dataclasses.replace(WORKLOAD, make_inputs=_forever)\n")
    return path


def test_a_make_inputs_that_never_returns_is_stopped_by_its_deadline(tmp_path):
    env = {**os.environ, "VAJRA_TIMING__PREPARE_DEADLINE_S": "3", "XDG_RUNTIME_DIR": "/tmp"}
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "vajra_tui", "bench", "-w", str(_sleeper(tmp_path)),
                           "--size", "ROWS=32,COLS=32", "-q"],
                          capture_output=True, text=True, env=env, timeout=240)
    took = time.monotonic() - began
    err = done.stderr.strip()
    assert done.returncode == 2, err
    assert err.count("\n") == 0 and "Traceback" not in err and "GPU worker failed" not in err
    assert "make_inputs/reference ran past its 3 s deadline (timing.prepare_deadline_s)" in err
    assert took < 120  # a worker start, a calibration and 3 s; it was 900 s before


def test_the_deadline_is_a_setting_with_a_shorter_default(monkeypatch):
    assert TimingSettings().prepare_deadline_s == 300
    monkeypatch.setenv("VAJRA_TIMING__PREPARE_DEADLINE_S", "1200")
    assert Settings().timing.prepare_deadline_s == 1200  # a large reference may be given longer
    for bad in (0, -1, float("inf"), float("nan")):
        with pytest.raises(ValueError):
            TimingSettings(prepare_deadline_s=bad)



def _bench_one_line(tmp_path: Path, workload: Path) -> str:
    """``bench -w workload`` in a child under a 3 s deadline: its one stderr line, exit 2 asserted."""
    env = {**os.environ, "VAJRA_TIMING__PREPARE_DEADLINE_S": "3", "XDG_RUNTIME_DIR": "/tmp",
           "VAJRA_CACHE_DIR": str(cache_with_this_runs_calibration(tmp_path / "cache"))}
    done = subprocess.run([sys.executable, "-m", "vajra_tui", "bench", "-w", str(workload),
                           "--size", "ROWS=32,COLS=32", "-q"], capture_output=True, text=True, env=env, timeout=240)
    err = done.stderr.strip()
    assert done.returncode == 2, err
    assert err.count("\n") == 0 and "Traceback" not in err and "GPU worker failed" not in err, err
    return err


def test_a_workload_file_whose_import_never_returns_is_stopped_by_the_deadline(tmp_path):
    """Module-level code that loops forever held `bench` (and the TUI's picker) for good: the
    import had no deadline, only the functions did."""
    path = tmp_path / "hangs.py"
    path.write_text(EXAMPLE.read_text() + "\n\nwhile True:\n    pass\n")
    began = time.monotonic()
    err = _bench_one_line(tmp_path, path)
    assert "importing it ran past its 3 s deadline" in err and "hangs.py" in err
    assert time.monotonic() - began < 60


@pytest.mark.parametrize("ending, said", [
    ("raise KeyboardInterrupt", "make_inputs or reference raised KeyboardInterrupt"),
    ("raise GeneratorExit", "make_inputs or reference raised GeneratorExit"),
    ("import os; os._exit(0)", "the GPU worker ended while preparing this workload"),
])
def test_a_make_inputs_that_ends_the_worker_its_own_way_is_the_workloads_error(tmp_path, ending, said):
    """KeyboardInterrupt, GeneratorExit or os._exit from make_inputs killed the worker and read
    'GPU worker failed: ... died during prepare', exit 1: the workload's fault, said as such."""
    path = tmp_path / "ends.py"
    path.write_text(EXAMPLE.read_text() + f"\n\ndef _ends(size, rng):\n    {ending}\n\n\n"
                    "import dataclasses\nWORKLOAD = dataclasses.replace(WORKLOAD, make_inputs=_ends)\n")
    assert said in _bench_one_line(tmp_path, path)
