"""A tune on a machine whose every core is busy: what the engine guarantees there.

Users run Vajra (and its tests) beside builds, browsers and other test suites. On a
software adapter a dispatch is CPU work, so a loaded machine makes every kernel several
times slower. The default deadline adapts (a floor that is longer on a software adapter,
and 20x the baseline measured on this adapter, in this session), so the guarantees are:

- no legitimate library kernel is killed by a deadline, however slow the machine;
- a kernel that never finishes (tests/kernels/hang.wgsl) is still killed, at that deadline;
- every candidate ends with a verdict, and the ranking holds one batch;
- the default deadline is the floor, or 20x this session's baseline where that is longer.

Everything runs with N CPU hogs beside it (N = os.cpu_count()). The hang comes with the
library's generation 1 under a deadline of a few seconds, far shorter than the default: a
library kernel that survives it survives the default too, and the test does not wait out the
30 s software floor with every core taken (it is ``serial``, so the suite's other worker waits
too). The default itself is read from a plain bench's baseline, which records its deadline.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vajra_tui.engine.session import DEADLINE_FLOOR_S, SOFTWARE_DEADLINE_FLOOR_S

KERNELS = Path(__file__).parent / "kernels"
HOG = "while True: pass"  # one busy core each; the test ends them by pid
# its hogs would starve a test beside it on another xdist worker (tests/conftest.py)
pytestmark = pytest.mark.serial


@pytest.fixture
def cpu_hogs():
    """N busy processes (N = os.cpu_count()) for the test's length, ended by their own pids."""
    hogs = [subprocess.Popen([sys.executable, "-c", HOG], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(os.cpu_count() or 1)]
    time.sleep(0.5)  # running before the tune starts
    try:
        assert all(h.poll() is None for h in hogs), "a CPU hog did not start"
        yield hogs
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait(timeout=10)


HANG_DEADLINE_S = 5.0  # the library's sgemm kernels at 64 take milliseconds, even on a loaded lavapipe


def test_a_loaded_machine_kills_only_the_hung_kernel(cpu_hogs):
    import vajra_tui

    began = time.monotonic()
    report = vajra_tui.tune("sgemm", [KERNELS / "hang.wgsl"], size="64", source="library", generations=0,
                            warmup=1, reps=3, deadline=HANG_DEADLINE_S)
    took = time.monotonic() - began
    assert all(h.poll() is None for h in cpu_hogs), "the hogs ran the whole tune"

    by_name = {r.name: r for r in report.results}
    hang, baseline = by_name["hang"], by_name["baseline"]
    assert baseline.status == "verified" and baseline.median_ms
    assert hang.status == "timeout" and f"{HANG_DEADLINE_S} s deadline" in hang.reason, (hang.status, hang.reason)
    assert hang.deadline_s == HANG_DEADLINE_S
    assert took < HANG_DEADLINE_S + 120, f"the tune took {took:.0f} s beside a {HANG_DEADLINE_S:.0f} s hang"

    library = [r for r in report.results if r.strategy not in ("baseline", "user")]
    assert library, "generation 1 proposed no library kernels"
    killed = [(r.name, r.reason) for r in library if r.status == "timeout"]
    assert not killed, f"library kernels killed by the deadline on a loaded machine: {killed}"
    assert all(r.status == "verified" for r in library), [(r.name, r.status, r.reason) for r in library]

    # every verified kernel is ranked, within the final shoot-out's one batch
    assert report.final_batch is not None
    ranked = [r for r in report.results if r.status == "verified" and r.batch == report.final_batch]
    assert baseline in ranked and len(ranked) >= 2
    if report.winner is not None:  # whichever was fastest in that batch, not a fixed name
        assert report.winner.batch == report.final_batch and not report.baseline_won
        assert report.winner.median_ms == min(r.median_ms for r in ranked)
    else:
        assert report.baseline_won or report.ties


def test_the_default_deadline_on_a_loaded_machine_is_the_floor_or_20x_the_baseline(cpu_hogs):
    import vajra_tui

    report = vajra_tui.bench("sgemm", size="64", warmup=1, reps=3)
    assert all(h.poll() is None for h in cpu_hogs), "the hogs ran the whole bench"
    baseline = next(r for r in report.results if r.name == "baseline")
    assert baseline.status == "verified" and baseline.median_ms
    floor = SOFTWARE_DEADLINE_FLOOR_S if report.device.software else DEADLINE_FLOOR_S
    expected = max(floor, 20 * baseline.median_ms / 1e3)
    assert baseline.deadline_s is not None and baseline.deadline_s >= floor
    assert baseline.deadline_s == pytest.approx(expected, rel=0.5)  # the baseline's median moves a little
