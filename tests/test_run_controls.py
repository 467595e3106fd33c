"""Cancel, the deadline countdown and the way back during a live run, on the real adapter.

A kernel that runs far past its deadline (tests/kernels/hang.wgsl) keeps the first
generation in verification, so the countdown shows; the cancel key stops it at once
(not after the deadline), marks what was in flight "cancelled", and the run stays
usable: ``e`` evolves on a fresh GPU worker. Escape during a run asks first, and the
recording is kept and named.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from conftest import KERNELS
from tui_pilot import adapter  # noqa: F401 - a fixture
from test_navigation import screen_text
from vajra_tui.tui.app import VajraApp
from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.store.record import read_recording
from vajra_tui.settings import Settings, TimingSettings

DEADLINE_S = 40.0


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    for name in ("VAJRA_CONFIG_DIR", "VAJRA_DATA_DIR"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    for name in ("NEBIUS_API_KEY", "TAVILY_API_KEY"):
        monkeypatch.delenv(name, raising=False)



async def until(pilot, condition, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.05)


def hanging_app(record: Path, adapter: DeviceInfo) -> VajraApp:
    settings = Settings(timing=TimingSettings(warmup=1, reps=3, deadline_s=DEADLINE_S))
    return VajraApp(settings, workload="sgemm", size="64", source="library",
                    kernels=[KERNELS / "hang.wgsl"], record=record, probe=lambda: adapter)


def hang(app):
    return next((v for v in app.state.candidates.values() if v.name == "hang"), None)


async def start_and_wait_for_the_countdown(pilot) -> None:
    app = pilot.app
    await until(pilot, lambda: app.adapter_info is not None, "the adapter probe", 60)
    await pilot.press("enter")
    await until(pilot, lambda: hang(app) is not None and hang(app).countdown is not None,
                "the hanging kernel's countdown")
    await pilot.pause(0.3)


def footer(app) -> str:
    return screen_text(app).splitlines()[-1]


async def test_cancel_stops_the_generation_and_the_run_goes_on(tmp_path, adapter):
    record = tmp_path / "run.jsonl"
    app = hanging_app(record, adapter)
    async with app.run_test(size=(80, 24)) as pilot:
        await start_and_wait_for_the_countdown(pilot)
        assert app.current == "variants"
        assert "killed in" in screen_text(app), "a deadline wait counts down, not a bare 'verify'"
        assert "cancel" in footer(app) and "evolve" not in footer(app)
        began = time.monotonic()
        await pilot.press("ctrl+x")
        await until(pilot, lambda: not app.driver.busy, "the cancel", 30)
        assert time.monotonic() - began < DEADLINE_S / 2, "stopped at once, not at the deadline"
        assert hang(app).result.status == "cancelled"
        cancelled = [v for v in app.state.candidates.values()
                     if v.result is not None and v.result.status == "cancelled"]
        assert cancelled and all(v not in app.state.graveyard for v in cancelled)
        assert app.state.baseline.result.status == "verified" and app.driver.ready
        await pilot.pause(0.2)
        assert "evolve" in footer(app) and "cancel" not in footer(app)

        await pilot.press("e")  # the run is still usable: a fresh worker, the next generation
        await until(pilot, lambda: app.state.generation == 2, "generation 2 to start", 30)
        await until(pilot, lambda: not app.driver.busy, "generation 2 to finish", 180)
        second = [v for v in app.state.candidates.values() if v.generation == 2]
        assert second and any(v.result is not None and v.result.status == "verified" for v in second)

        await pilot.press("q")
        await until(pilot, lambda: record.exists(), "the recording", 30)
    assert app.saved_recordings == [record]
    _, events = read_recording(record)
    assert any(e.type == "candidate_finished" and e.result.status == "cancelled" for e in events)
    assert any(e.type == "stage" and e.stage == "verifying" and e.detail.startswith("deadline ")
               for e in events), "the deadline is recorded, so a replay counts down too"


async def test_escape_during_a_run_asks_then_returns_to_the_picker(tmp_path, adapter):
    record = tmp_path / "run.jsonl"
    app = hanging_app(record, adapter)
    async with app.run_test(size=(80, 24)) as pilot:
        await start_and_wait_for_the_countdown(pilot)
        await pilot.press("escape")
        await until(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen", "the question", 5)
        await pilot.press("n")
        await pilot.pause(0.2)
        assert app.current == "variants" and app.driver is not None and app.driver.busy
        await pilot.press("escape")
        await until(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen", "the question again", 5)
        await pilot.press("y")
        await until(pilot, lambda: app.current == "picker" and app.driver is None, "the picker", 30)
        assert record.exists() and app.saved_recordings == [record]
        assert app.state.session is None
        assert any("recording saved" in n.message for n in app._notifications)


async def test_q_during_a_run_asks_first_and_keeps_running_on_no(tmp_path, adapter):
    """q quit mid-generation without a word, while Escape asked."""
    record = tmp_path / "run.jsonl"
    app = hanging_app(record, adapter)
    async with app.run_test(size=(80, 24)) as pilot:
        await start_and_wait_for_the_countdown(pilot)
        await pilot.press("q")
        await until(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen", "the question", 5)
        assert "Stop it and quit?" in screen_text(app)
        await pilot.press("n")
        await pilot.pause(0.2)
        assert app.is_running and app.driver is not None and app.driver.busy
        await pilot.press("q")
        await until(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen", "the question again", 5)
        await pilot.press("y")
        await until(pilot, lambda: record in app.saved_recordings or not app.is_running, "the quit", 30)
    assert app.saved_recordings == [record] and record.exists()
