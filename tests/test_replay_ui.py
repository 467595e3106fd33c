"""Replay in the same screens: every shipped recording reaches the report card;
a corrupt, truncated or newer recording is one line on stderr and exit code 2."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from vajra_tui.app import VajraApp, run_app
from vajra_tui.engine.record import read_recording
from vajra_tui.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted((ROOT / "recordings").glob("*.jsonl"))
FIXTURE = Path(__file__).parent / "data" / "session_fixture.jsonl"


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    for name in ("VAJRA_CONFIG_DIR", "VAJRA_DATA_DIR", "VAJRA_CACHE_DIR"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))


async def wait_for(pilot, condition, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.05)


async def replay_to_report(path: Path, size: tuple[int, int] = (120, 40)) -> None:
    _, events = read_recording(path)
    app = VajraApp(Settings(), replay_events=events, replay_label=path.name, speed=0)
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.state.events == len(events), "the replay")
        assert app.banner.startswith("▶ RECORDING")
        streamed = [v for v in app.state.candidates.values() if v.streamed]
        recorded = any(e.type == "stream_delta" for e in events)
        assert bool(streamed) == recorded, "LLM streams are replayed into the panels"
        for key, screen in (("v", "variants"), ("g", "graveyard"), ("r", "report")):
            await pilot.press(key)
            await wait_for(pilot, lambda: app.current == screen, screen)
        if app.state.ranking is not None:
            assert app.state.ranking.ranked_ids == [v.id for v in app.state.ranked]
        await pilot.press("e")  # evolve is disabled in replay: a notice, no crash
        await pilot.pause(0.1)
        assert app.current == "report"
        await pilot.press("q")


@pytest.mark.skipif(not SHIPPED, reason="no shipped recordings in recordings/ yet")
@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
async def test_shipped_recording_reaches_report(path):
    await replay_to_report(path)


async def test_fixture_replays_at_80x24():
    await replay_to_report(FIXTURE, (80, 24))


def _lines() -> list[str]:
    return FIXTURE.read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("kind", ["corrupt", "truncated", "newer", "empty", "missing"])
def test_bad_recording_is_one_line_exit_2(tmp_path, capsys, kind):
    path = tmp_path / f"{kind}.jsonl"
    lines = _lines()
    if kind == "corrupt":
        lines[5] = lines[5][: len(lines[5]) // 2] + "}{"
        path.write_text("\n".join(lines) + "\n")
    elif kind == "truncated":
        path.write_text("\n".join(lines[:40]) + "\n" + lines[40][:25])
    elif kind == "newer":
        header = json.loads(lines[0])
        header["schema_version"] = 999
        path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    elif kind == "empty":
        path.write_text("")
    assert run_app(Settings(), replay=path, speed=0) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert err and "\n" not in err and "Traceback" not in err, err
    assert str(path) in err
    if kind in ("corrupt", "truncated"):
        assert kind in err
