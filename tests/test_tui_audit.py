"""What a newcomer at 80x24 found (a held-out audit), each pinned by the pilot.

A recording the picker plays is a replay (its roofline "recorded", not this machine's cache);
a remapped key is named whole in help; the TUI's export is the CLI's (the browser's block
in the lockfile); with no adapter the recordings list is on screen; a size the adapter cannot
bind, or an empty custom size, is refused in the picker; a run that ended before its baseline
does not say it is still calibrating; an empty graveyard says so truly when candidates were
cancelled; Tab on the variants screen leaves the list its keys; the picker's footer says how
to run; a tie is said on the headline; the source view's hint covers the footer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, OptionList, RadioButton, RadioSet, Static

from test_navigation import screen_text
from vajra_tui.engine.events import (
    CandidateFinished, CandidateQueued, CandidateResult, DeviceInfo, Notice,
)
from vajra_tui.engine.store.record import read_recording
from vajra_tui.settings import Settings
from vajra_tui.tui.app import VajraApp
from vajra_tui.tui.driver import EngineEvent
from vajra_tui.tui.screens.report import headline
from vajra_tui.tui.state import RunState
from vajra_tui.tui.widgets.footer import FittingFooter, is_key

from tui_pilot import isolate, wait_for

FIXTURE = Path(__file__).parent / "data" / "session_fixture.jsonl"
LIMITS = {"max-storage-buffer-binding-size": 1 << 27, "max-buffer-size": 1 << 31}  # lavapipe's
DEVICE = DeviceInfo(name="llvmpipe (LLVM 15.0.6, 256 bits)", backend="Vulkan", adapter_type="CPU",
                    software=True, limits=LIMITS)


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    isolate(tmp_path, monkeypatch)


def shown(widget: Static) -> str:
    return str(widget.render())


def on_screen(app, widget) -> bool:
    """The widget's whole region lies between the header and the footer."""
    region = widget.region
    return region.height > 0 and region.y >= 1 and region.bottom <= app.size.height - 1


def no_adapter() -> DeviceInfo:
    raise RuntimeError("no WebGPU adapter found")


def fixture_events() -> list:
    return list(read_recording(FIXTURE)[1])


async def replayed(pilot) -> None:
    app = pilot.app
    await wait_for(pilot, lambda: app.driver is not None and app.driver.done and not app._dirty, "the replay", 60)
    await pilot.pause(0.2)
    app.clear_notifications()


def no_run(app, monkeypatch) -> list:
    """start_live recorded, never run: a refusal that fails to refuse starts no GPU worker."""
    started: list = []
    monkeypatch.setattr(app, "start_live", lambda *args: started.append(args))
    return started


# ---- 1 and 4: no adapter: the recordings list is on screen, and what it plays is a replay -----

async def test_with_no_adapter_the_focused_recordings_list_is_on_screen_at_80x24():
    app = VajraApp(Settings(), probe=no_adapter)
    async with app.run_test(size=(80, 24)) as pilot:
        options = app.screen.query_one("#recording-list", OptionList)
        await wait_for(pilot, lambda: app.focused is options, "the recordings list to take focus", 30)
        await wait_for(pilot, lambda: on_screen(app, options), f"the list on screen (at {options.region})", 10)


async def test_a_recording_the_picker_plays_shows_its_roofline_as_recorded_not_cached():
    app = VajraApp(Settings(), probe=no_adapter, speed=0)
    async with app.run_test(size=(120, 40)) as pilot:
        options = app.screen.query_one("#recording-list", OptionList)
        await wait_for(pilot, lambda: app.focused is options, "the recordings list", 30)
        names = [str(options.get_option_at_index(i).id) for i in range(options.option_count)]
        options.highlighted = next(i for i, n in enumerate(names) if n.endswith("nvidia-h200-attention.jsonl"))
        await pilot.press("enter")
        await replayed(pilot)
        await pilot.press("b")
        await wait_for(pilot, lambda: app.current == "baseline", "the baseline screen", 10)
        await pilot.pause(0.2)
        roofline = shown(app.screen.query_one("#baseline-calibration", Static))
        assert "(recorded, measured " in roofline and "UTC" in roofline and "cached" not in roofline, roofline
        await pilot.press("r")
        await wait_for(pilot, lambda: app.current == "report", "the report", 10)
        await pilot.pause(0.2)
        said = shown(app.screen.query_one("#provenance", Static))
        assert "(recorded, measured " in said and "cached" not in said, said


# ---- 2: help names a remapped key whole ----------------------------------------------------------

async def test_help_names_a_remapped_key_whole_and_a_key_list_by_its_keys():
    keys = {"report": "R", "back": "ctrl+b", "export": "X", "graveyard": "G,f5"}
    app = VajraApp(Settings(keys=keys), probe=lambda: DEVICE)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.key_for("back") == "ctrl+b"
        assert app.key_for("graveyard") == "G / f5"
        assert app.key_for("help") == "? / f1"  # a default binding's list, as before
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "HelpScreen", "the help screen", 10)
        await pilot.pause(0.2)
        text = screen_text(app)
        assert "ctrl+b" in text and "G / f5" in text, text
        assert "c / t" not in text, text


# ---- 3: the TUI's export is the CLI's: the browser's verdict in the lockfile ---------------------

async def test_the_tui_export_writes_the_browser_block_the_cli_export_writes(tmp_path):
    app = VajraApp(Settings(), replay_events=fixture_events(), replay_label="fixture", speed=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await replayed(pilot)
        winner = app.state.winner
        assert winner is not None and winner.result is not None
        winner.result = winner.result.model_copy(update={  # as a browser judged it in the run
            "browser": "browser-valid", "browser_judge": "Chromium 140 (Dawn)",
            "browser_adapter": "SwiftShader (software)", "browser_ms": 1.5})
        out = tmp_path / "out"
        for attempt in range(2):
            await pilot.press("x")
            await wait_for(pilot, lambda: type(app.screen).__name__ == "ExportScreen", "the export modal", 10)
            app.screen.query_one("#export-dir", Input).value = str(out)
            await pilot.press("enter")
            if attempt == 0:
                await wait_for(pilot, lambda: type(app.screen).__name__ != "ExportScreen", "the export", 20)
        # the second time the files exist: the modal says how to overwrite here (no --force)
        error = app.screen.query_one("#export-error", Static)
        await wait_for(pilot, lambda: shown(error) != "", "the export's refusal", 10)
        assert "overwrite existing files" in shown(error) and "--force" not in shown(error), shown(error)
    lock = json.loads((out / "vajra.lock.json").read_text())
    blocks = [entry.get("browser") for entry in lock["entries"]]
    assert blocks and blocks[0] and blocks[0]["status"] == "browser-valid", lock["entries"]
    assert blocks[0]["browser"] == "Chromium 140 (Dawn)"


# ---- 5: a size the adapter cannot bind is refused in the picker; an ended run is not waiting ------

async def test_the_picker_refuses_a_size_the_adapter_cannot_bind_as_the_cli_does(monkeypatch):
    app = VajraApp(Settings(), workload="sgemm", size="100000", source="library", probe=lambda: DEVICE)
    started = no_run(app, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.adapter_info is not None, "the adapter probe", 30)
        await pilot.press("enter")
        error = app.screen.query_one("#picker-error", Static)
        await wait_for(pilot, lambda: shown(error) != "", "the refusal", 10)
        assert not started and app.current == "picker"
        # the CLI's words (vajra-tui: size: ...), from the same check the engine makes
        assert shown(error).startswith("size: sgemm at 100000x100000x100000: binding 'A' needs"), shown(error)
        assert "choose a smaller size" in shown(error)
        await wait_for(pilot, lambda: on_screen(app, error), "the refusal on screen at 80x24", 10)
        # a size that fits still runs
        app.screen.query_one("#custom", Input).value = "64"
        await pilot.pause(0.1)
        app.screen.query_one("#workloads", DataTable).focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(started), "the run to start", 10)
        assert started[0][:2] == ("sgemm", "64")


async def test_the_picker_refuses_a_workload_whose_feature_the_adapter_lacks_as_the_cli_does(tmp_path, monkeypatch):
    """An f16 workload on an adapter without shader-f16: Enter started a run, and the engine's
    refusal came only after a GPU worker had started. Now the picker says it in the engine's
    own line and starts nothing; a built-in still runs."""
    from test_browser_chromium import HALF

    path = tmp_path / "half_double.py"
    path.write_text(HALF)
    app = VajraApp(Settings(), workload=str(path), size="N=256", source="library", probe=lambda: DEVICE)
    started = no_run(app, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.adapter_info is not None and not app.screen.still_importing,
                       "the probe and the file's import", 30)
        await pilot.press("enter")
        error = app.screen.query_one("#picker-error", Static)
        await wait_for(pilot, lambda: "shader-f16" in shown(error), "the refusal", 10)
        assert not started and app.current == "picker"
        assert shown(error) == ("half_double has f16 bindings, which need shader-f16; "
                                "llvmpipe (LLVM 15.0.6, 256 bits) does not offer it"), shown(error)
        table = app.screen.query_one("#workloads", DataTable)
        table.move_cursor(row=0)
        app.screen.query_one("#custom", Input).value = "64"
        await pilot.pause(0.1)
        table.focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(started), "sgemm's run to start", 10)
        assert started[0][0] == "sgemm"


class _Ended:
    """A live driver whose first step ended (an error before the baseline): not busy, not ready."""

    replay = False
    busy = False
    ready = False

    async def aclose(self) -> None:
        return None


async def test_a_run_that_ended_before_its_baseline_is_not_said_to_be_calibrating():
    app = VajraApp(Settings(), probe=lambda: DEVICE)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.adapter_info is not None, "the adapter probe", 30)
        driver = _Ended()
        driver.busy = True  # still starting: it is waiting, and says so
        app.driver = driver  # type: ignore[assignment]
        app.goto("baseline")
        await wait_for(pilot, lambda: app.current == "baseline", "the baseline screen", 10)
        await pilot.pause(0.2)
        device = app.screen.query_one("#baseline-device", Static)
        roofline = app.screen.query_one("#baseline-calibration", Static)
        assert "waiting for the GPU worker" in shown(device)
        assert "calibrating the roofline" in shown(roofline)
        app.post_message(EngineEvent(Notice(level="error", message="size: too large for this adapter")))
        driver.busy = False  # the step ended on that error
        await wait_for(pilot, lambda: "calibrating" not in shown(roofline), "the roofline line to move", 10)
        assert "ended before it was calibrated" in shown(roofline), shown(roofline)
        assert "waiting" not in shown(device) and "ended" in shown(device), shown(device)


# ---- 6: an empty graveyard is true of cancelled candidates -----------------------------------------

async def test_an_empty_graveyard_says_cancelled_candidates_were_not_verified():
    events = [e for e in fixture_events() if e.type in ("session_started", "calibration")]
    queued = CandidateQueued(id="g2-D1", name="D1", strategy="D", origin="library", generation=2)
    result = CandidateResult(id="g2-D1", name="D1", strategy="D", origin="library", generation=2,
                             status="cancelled", reason="cancelled by the user before it was judged")
    app = VajraApp(Settings(), replay_events=[*events, queued, CandidateFinished(result=result)],
                   replay_label="cancelled", speed=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await replayed(pilot)
        await pilot.press("g")
        await wait_for(pilot, lambda: app.current == "graveyard", "the graveyard", 10)
        await pilot.pause(0.3)
        text = shown(app.screen.query_one("#grave-text", Static))
        assert "every candidate so far compiled and verified" not in text, text
        assert "1 cancelled before they were judged (D1)" in text, text


# ---- 7: Tab on the variants screen leaves the list its keys -----------------------------------------

async def test_after_tab_the_variants_list_still_moves_with_arrows_pages_home_and_end():
    app = VajraApp(Settings(), replay_events=fixture_events(), replay_label="fixture", speed=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await replayed(pilot)
        await pilot.press("v")
        await wait_for(pilot, lambda: app.current == "variants", "the variants screen", 10)
        await pilot.pause(0.3)
        table = app.screen.query_one("#variant-list", DataTable)
        assert table.row_count > 3
        for key, row in (("end", table.row_count - 1), ("home", 0), ("down", 1)):
            await pilot.press("tab")
            await pilot.press(key)
            await pilot.pause(0.2)
            assert table.cursor_row == row, (key, table.cursor_row, app.focused)
        await pilot.press("tab", "pagedown")
        await pilot.pause(0.2)
        assert table.cursor_row > 1, ("pagedown", table.cursor_row, app.focused)


# ---- 8 and 9: the picker's footer says how to run; an empty custom size is refused ------------------

def footer_descriptions(app) -> list[str]:
    footer = app.screen.query_one(FittingFooter)
    return [key.description for key in footer.children if is_key(key)]


async def test_the_picker_footer_says_enter_runs():
    app = VajraApp(Settings(), workload="sgemm", size="128", probe=lambda: DEVICE)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.adapter_info is not None, "the adapter probe", 30)
        await wait_for(pilot, lambda: "Run" in footer_descriptions(app), "enter Run in the footer", 10)
        app.screen.query_one("#custom", Input).focus()  # typing a size: enter runs there too
        await pilot.pause(0.3)
        await wait_for(pilot, lambda: "Run" in footer_descriptions(app), "enter Run from the size field", 10)


async def test_an_empty_custom_size_is_refused_in_one_line_not_run_as_the_seed(monkeypatch):
    app = VajraApp(Settings(), workload="sgemm", size="seed", source="library", probe=lambda: DEVICE)
    started = no_run(app, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.adapter_info is not None, "the adapter probe", 30)
        presets = app.screen.query_one("#preset", RadioSet)
        list(presets.query(RadioButton))[2].value = True  # custom, its field left empty
        await pilot.pause(0.2)
        app.screen.query_one("#workloads", DataTable).focus()
        await pilot.press("enter")
        error = app.screen.query_one("#picker-error", Static)
        await wait_for(pilot, lambda: shown(error) != "", "the refusal", 10)
        assert not started and "custom size" in shown(error) and "\n" not in shown(error)


# ---- 10: a tie on the headline; the source view's hint covers the footer ---------------------------

def test_the_tie_note_is_on_the_headline_not_after_the_browser_line():
    state = RunState()
    for event in fixture_events():
        state.apply(event)
    winner = state.winner
    assert winner is not None and winner.result is not None and state.ranking is not None
    other = next(v for v in state.ranked if v is not winner and v.id != "baseline")
    state.ranking = state.ranking.model_copy(update={"tie_ids": [other.id]})
    winner.result = winner.result.model_copy(update={"browser": "unchecked: node not found"})
    lines = headline(state, "GFLOP/s").plain.splitlines()
    assert f"(tie with {other.label}: within noise)" in lines[0], lines
    assert lines[1].startswith("browser: unchecked") and "tie" not in lines[1], lines


async def test_the_source_view_hint_hides_the_footer_under_it():
    app = VajraApp(Settings(), replay_events=fixture_events(), replay_label="fixture", speed=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await replayed(pilot)
        await pilot.press("r")
        await wait_for(pilot, lambda: app.current == "report", "the report", 10)
        await pilot.press("s")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "SourceScreen", "the source view", 10)
        await pilot.pause(0.3)
        last = screen_text(app).rstrip("\n").splitlines()[-1]
        assert last.rstrip().endswith("c copies"), repr(last)
