"""A hang that outlasts wgpu-native's own blocking wait is still a timeout at its deadline.

Kept apart from tests/test_under_load.py, whose CPU hogs make its tests ``serial``: this one
only waits out a 36 s deadline, and another xdist worker can run beside it meanwhile.
"""

from __future__ import annotations

from pathlib import Path

KERNELS = Path(__file__).parent / "kernels"


def test_a_hang_past_the_drivers_own_wait_is_a_timeout_not_a_rejection(monkeypatch):
    """wgpu-native's blocking poll gives up after about 30 s on lavapipe, the kernel still
    running; with a deadline past that, the hang was read back as finished and rejected
    ("never written") instead of killed at its deadline (a held-out fault audit).

    lavapipe spins the hang on one thread here (LP_NUM_THREADS=1, read by the worker this run
    starts): on every core, its 36 s took both of a 2-core machine from the test beside it."""
    import vajra_tui

    monkeypatch.setenv("LP_NUM_THREADS", "1")

    report = vajra_tui.bench("sgemm", [KERNELS / "hang.wgsl"], size="64", deadline=36.0, warmup=0, reps=1)
    hang = next(r for r in report.results if r.name == "hang")
    assert hang.status == "timeout" and "36.0 s deadline" in hang.reason, (hang.status, hang.reason)
