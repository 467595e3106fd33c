"""The UI never blocks: the event loop's largest stall during a full tune on the local adapter.

A 10 ms timer records the largest gap between ticks while the app runs
calibrate → baseline → A/B/C live. The target is < 100 ms; a noisy 2-core CI
gets a looser bound. The figure is printed; with VAJRA_LOOP_STALL_JSON=<path> it is
also written there (benchmarks/results/loop_stall.json holds the committed figure).

Each gap is measured twice: in wall time, and in the CPU time the loop's own thread spent
in it. Work done on the loop (what this test exists to catch) shows in both; a loaded
machine that does not schedule the process for a while shows only in the first (589 ms
seen beside three other test runs on 2 cores). So the loop's own work is held to the
bound and the wall gap to four times it.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import platform
import time
from pathlib import Path

import pytest

from vajra_tui.tui.app import VajraApp
from vajra_tui.settings import Settings, TimingSettings

TARGET_MS, CI_BOUND_MS, LOADED_WALL_FACTOR = 100.0, 500.0, 4
SIZE = "M=256,N=256,K=128"  # the same events as 256³ (K is each kernel's inner loop), half the dispatch time
# Not ``serial``: the bound is on the loop thread's own CPU time, which a test beside it does
# not add to (589 ms of wall seen beside three other runs, under the 4x wall bound); alone, it
# kept the suite's other worker idle for its 15 s.


@pytest.fixture
def frozen_heap():
    """The suite's own leftovers (a thousand tests' objects in this one process) moved out of
    the collector's reach: a full collection walking them stalled the loop 709 ms in CI while
    the app's own work was 135 ms, which is what this test measures (a user's process has no
    such heap)."""
    started = time.perf_counter()
    gc.collect()
    print(f"\na full collection of this process's heap took {(time.perf_counter() - started) * 1000:.1f} ms")
    gc.freeze()
    yield
    gc.unfreeze()


async def test_event_loop_never_stalls(tmp_path, monkeypatch, frozen_heap):
    for name in ("VAJRA_CONFIG_DIR", "VAJRA_DATA_DIR", "VAJRA_CACHE_DIR"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    monkeypatch.delenv("NEBIUS_API_KEY", raising=False)
    app = VajraApp(Settings(timing=TimingSettings(warmup=2, reps=5)), workload="sgemm", size=SIZE,
                   source="library", kernels=[Path(__file__).parent / "data" / "broken_kernel.wgsl"],
                   record=tmp_path / "stall.jsonl")
    gaps: list[float] = []
    cpu_gaps: list[float] = []  # the loop thread's own CPU time in each gap
    async with app.run_test(size=(120, 40)) as pilot:
        deadline = time.monotonic() + 60
        while app.adapter_info is None:
            assert time.monotonic() < deadline
            await pilot.pause(0.05)
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()

        async def ticker() -> None:
            last, last_cpu = loop.time(), time.thread_time()
            while not stop.is_set():
                await asyncio.sleep(0.01)
                now, now_cpu = loop.time(), time.thread_time()
                gaps.append((now - last - 0.01) * 1000.0)
                cpu_gaps.append((now_cpu - last_cpu) * 1000.0)
                last, last_cpu = now, now_cpu

        task = asyncio.create_task(ticker())
        started = time.monotonic()
        await pilot.press("enter")
        await pilot.pause(0.2)
        while app.driver is None or app.driver.busy or not app.driver.ready:
            assert time.monotonic() - started < 180, "the tune did not finish"
            await pilot.pause(0.05)
        tune_s = time.monotonic() - started
        stop.set()
        await task
        await pilot.press("q")
    worst, worst_cpu = max(gaps), max(cpu_gaps)
    events = app.state.events
    print(f"\nlargest event-loop stall during a {tune_s:.1f} s tune ({events} events): {worst:.1f} ms "
          f"({worst_cpu:.1f} ms of it the loop's own work)")
    target = os.environ.get("VAJRA_LOOP_STALL_JSON")
    out = Path(target) if target else tmp_path / "loop_stall.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "max_stall_ms": round(worst, 2), "max_loop_cpu_ms": round(worst_cpu, 2),
        "target_ms": TARGET_MS, "bound_ms": CI_BOUND_MS,
        "p99_gap_ms": round(sorted(gaps)[int(len(gaps) * 0.99) - 1], 2), "ticks": len(gaps),
        "tune_s": round(tune_s, 2), "events": events, "workload": f"sgemm {SIZE} (library, warmup 2, reps 5)",
        "device": app.state.device.name if app.state.device else "", "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }, indent=2) + "\n")
    assert app.state.ranking is not None, "the tune ranked its kernels"
    assert worst_cpu < CI_BOUND_MS, f"the event loop worked {worst_cpu:.1f} ms without yielding"
    assert worst < CI_BOUND_MS * LOADED_WALL_FACTOR, f"event loop stalled {worst:.1f} ms"
