"""Replay in the same screens: every shipped recording reaches the report card;
a corrupt, truncated or newer recording is one line on stderr and exit code 2."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from vajra_tui.tui.app import VajraApp, run_app
from vajra_tui.engine.store.record import Recording, read_recording
from vajra_tui.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted((ROOT / "vajra_tui" / "recordings").glob("*.jsonl"))
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


@pytest.mark.parametrize("kind", ["corrupt", "newer", "empty", "missing"])
def test_bad_recording_is_one_line_exit_2(tmp_path, capsys, kind):
    path = tmp_path / f"{kind}.jsonl"
    lines = _lines()
    if kind == "corrupt":
        lines[5] = lines[5][: len(lines[5]) // 2] + "}{"
        path.write_text("\n".join(lines) + "\n")
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
    if kind == "corrupt":
        assert "corrupt at line 6" in err


async def test_a_cut_recording_replays_up_to_the_cut_and_says_where(tmp_path):
    """kill -9 leaves a recording cut mid-line: the screens replay it, the banner and a notice say where."""
    lines = _lines()
    path = tmp_path / "cut.jsonl"
    path.write_text("\n".join(lines[:40]) + "\n" + lines[40][:25])
    recording = Recording(path).check()
    assert recording.cut == 41
    app = VajraApp(Settings(), replay_events=recording, replay_label="cut.jsonl (cut at line 41)", speed=0)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.driver is not None and app.driver.done, "the replay")
        await pilot.pause(0.1)
        assert app.state.events == 39 + 1  # the events before the cut, then the notice
        assert any("cut at line 41" in n.message for n in app.state.notices)
        assert "cut at line 41" in app.banner
        for key, screen in (("v", "variants"), ("g", "graveyard"), ("r", "report")):
            await pilot.press(key)
            await wait_for(pilot, lambda: app.current == screen, screen)
        await pilot.press("q")


def test_a_cut_recording_replays_headless_with_a_warning(tmp_path, capsys):
    from vajra_tui.cli.main import main

    lines = _lines()
    path = tmp_path / "cut.jsonl"
    path.write_text("\n".join(lines) + "\n" + lines[-1][:30])
    assert main(["replay", str(path), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["results"]
    assert f"cut at line {len(lines) + 1}" in captured.err and captured.err.count("\n") == 1


async def test_a_long_recording_streams_through_the_ui_in_bounded_memory(tmp_path):
    """Events are read from disk as the UI takes them (the queue stays short), and what the
    screens keep per candidate stays bounded however long the stream or the rounds."""
    from vajra_tui.engine.events import DispatchTimed, StreamDelta
    from vajra_tui.engine.store.record import Recorder
    from vajra_tui.tui.state import KEEP_SAMPLES, STREAM_KEEP_CHARS

    _, events = read_recording(FIXTURE)
    path = tmp_path / "long.jsonl"
    rec = Recorder(path)
    rec(events[0])
    for i in range(6000):
        rec(StreamDelta(id="long", kind="content", text=f"token {i} " * 4))
        rec(DispatchTimed(id="long", round=i + 1, ms=0.1, method="wall"))
    for event in events[1:]:
        rec(event)
    rec.close()
    app = VajraApp(Settings(), replay_events=Recording(path).check(), replay_label="long.jsonl", speed=0)
    queued = 0
    async with app.run_test(size=(100, 30)) as pilot:
        while not (app.driver is not None and app.driver.done):
            queued = max(queued, app.message_queue_size)
            await pilot.pause(0.02)
        await pilot.pause(0.2)
        view = app.state.candidates["long"]
        assert sum(map(len, view.content)) <= STREAM_KEEP_CHARS + 4096 * 40
        assert view.content[-1].endswith("token 5999 ")  # the tail a panel shows is intact
        assert len(view.dispatch_ms) <= KEEP_SAMPLES
        await pilot.press("v")
        await wait_for(pilot, lambda: app.current == "variants", "variants")
        assert app.is_running
        await pilot.press("q")
    assert queued < 1000, queued


async def _variant_widths(events, step: bool) -> list[int]:
    """The variants table's column widths after folding ``events``, drawn after every
    event (a fast host: rows appear early and are updated) or once at the end."""
    from vajra_tui.tui.state import RunState

    app = VajraApp(Settings(), replay_events=[], replay_label="widths", speed=0)
    async with app.run_test(size=(80, 24)) as pilot:
        app.goto("variants")
        await wait_for(pilot, lambda: app.current == "variants", "the variants screen")
        await pilot.pause(0.2)  # composed
        screen, state = app.screen, RunState()
        table = screen.query_one("#variant-list")
        for event in events:
            state.apply(event)
            if step:
                rows = len(table.rows)
                screen.sync(state)
                if len(table.rows) != rows:
                    await pilot.pause()  # the table measures a new row when idle, as it is then
        screen.sync(state)
        await pilot.pause()
        return [column.get_render_width(table) for column in table.columns.values()]


async def test_variant_table_widths_do_not_depend_on_host_speed():
    """Found on the H200: cells updated in place kept the width of their first value, so
    a column's width (and the 80×24 snapshot) depended on how events were batched."""
    _, events = read_recording(FIXTURE)
    assert await _variant_widths(events, step=True) == await _variant_widths(events, step=False)
