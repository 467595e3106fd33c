"""Issue #25's rough edges in the TUI, each through the Textual pilot.

Most replay the recorded session fixture (no GPU); the user-workload and
``--record`` ones run the real engine on the local adapter (lavapipe in CI).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Sparkline, Static

from vajra_tui import fmt
from vajra_tui.engine.events import CandidateFinished, DispatchTimed, GenerationStarted, Notice
from vajra_tui.engine.store.record import read_recording
from vajra_tui.settings import Settings, TimingSettings
from vajra_tui.tui.app import VajraApp
from vajra_tui.tui.widgets.footer import FittingFooter, is_key

from tui_pilot import adapter, isolate, shared_roofline, wait_for  # noqa: F401 - fixtures too

DATA = Path(__file__).parent / "data"
FIXTURE = DATA / "session_fixture.jsonl"
TRANSPOSE = Path(__file__).parents[1] / "examples" / "workloads" / "transpose.py"


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    isolate(tmp_path, monkeypatch)




def replay_app(events=None) -> VajraApp:
    if events is None:
        _, events = read_recording(FIXTURE)
    return VajraApp(Settings(), replay_events=list(events), replay_label="fixture", speed=0)


async def settle(pilot) -> None:
    app = pilot.app
    await wait_for(pilot, lambda: app.state.events >= len(app.replay_events) and not app._dirty, "the replay", 30)
    await pilot.pause(0.3)


def footer_keys(app: VajraApp) -> list[tuple[str, str]]:
    footer = app.screen.query_one(FittingFooter)
    return [(key.key_display, key.description) for key in footer.children if is_key(key)]


def footer_width(app: VajraApp) -> int:
    return sum(len(f"{k} {d}") + 1 for k, d in footer_keys(app))


# ---- 1. the footer and the report card fit 80 columns ------------------------------
async def test_the_footer_keeps_quit_and_help_at_80_columns_during_a_live_generation():
    app = replay_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("v")
        await wait_for(pilot, lambda: app.current == "variants", "the variants screen")
        # a live run while a generation runs: cancel, and no evolve (the heading drops it too)
        replayed = app.driver
        app.driver = SimpleNamespace(replay=False, busy=True, ready=True, evolve=lambda: None,
                                     aclose=app.driver.aclose)
        await pilot.pause(0.5)
        keys = dict((d, k) for k, d in footer_keys(app))
        heading = str(app.screen.query_one("#variants-heading", Static).render())
        assert "cancel" in keys and "evolve" not in keys and "e evolves" not in heading, keys
        app.clear_notifications()
        await pilot.press("e")  # not offered, but pressed anyway: it says why, in one line
        said = [n.message for n in app._notifications]
        assert any("is still running: e evolves once it is ranked" in m for m in said), said
        # the generation ranked: evolve is back in both, and the footer still fits
        app.driver.busy = False
        await pilot.pause(0.5)
        keys = dict((d, k) for k, d in footer_keys(app))
        heading = str(app.screen.query_one("#variants-heading", Static).render())
        assert "evolve" in keys and "e evolves the winner" in heading, keys
        assert "quit" in keys and keys.get("all keys") == "?", keys
        assert footer_width(app) <= 80
        assert "vars" not in keys  # the key to the screen already shown goes first
        # the finished replay back (on the variants screen, where a replay's generation leaves
        # it) in a wider terminal: room for every key, none hidden. The same replay resized,
        # not a second one played from the start at 120x40
        app.driver = replayed
        await pilot.resize_terminal(120, 40)
        await pilot.pause(0.5)
        assert app.current == "variants"
        keys = dict((d, k) for k, d in footer_keys(app))
        assert {"picker", "base", "vars", "graves", "report", "help", "quit"} <= set(keys), keys


async def test_the_report_card_table_fits_80_columns():
    app = replay_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await wait_for(pilot, lambda: app.current == "report", "the report")
        await pilot.pause(0.3)
        table = app.screen.query_one("#ranking", DataTable)
        labels = [column.label.plain for column in table.columns.values()]
        assert table.max_scroll_x == 0 and table.virtual_size.width <= table.size.width
        assert {"kernel", "median", "GFLOP/s", "speedup"} <= set(labels) and "origin" not in labels
        assert ("q", "quit") in footer_keys(app)
        await pilot.resize_terminal(200, 40)  # wider: the dropped columns come back
        await pilot.pause(0.5)
        assert "origin" in [column.label.plain for column in table.columns.values()]


# ---- 2. a user workload with no library templates ----------------------------------
def _session_events():
    _, events = read_recording(FIXTURE)
    return [e for e in events if e.type in ("session_started", "calibration")]


async def test_no_library_templates_are_said_on_the_variants_screen():
    events = [*_session_events(), GenerationStarted(generation=1, source="library"),
              Notice(message="library: no templates for sgemm; measured the baseline and your own kernels")]
    app = replay_app(events)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("v")
        await wait_for(pilot, lambda: app.current == "variants", "the variants screen")
        await pilot.pause(0.3)
        heading = str(app.screen.query_one("#variants-heading", Static).render())
        assert "no library templates for sgemm: bring kernels with --kernel" in heading
        assert "params source" in heading and "LLM key" in heading


async def test_a_user_workload_on_the_library_source_says_it_has_no_templates(shared_roofline, adapter):
    app = VajraApp(Settings(timing=TimingSettings(warmup=1, reps=3)), workload=str(TRANSPOSE),
                   size="ROWS=32,COLS=32", source="library", probe=lambda: adapter)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.adapter_info is not None, "the adapter probe", 60)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.driver is not None and app.driver.ready and not app.driver.busy,
                       "generation 1", 120)
        await wait_for(pilot, lambda: app.current == "variants", "the variants screen")
        await pilot.pause(0.3)
        heading = str(app.screen.query_one("#variants-heading", Static).render())
        assert "no library templates for transpose" in heading
        await app.quit_now()


# ---- 3. --record FILE and a second run in the same session -------------------------
async def test_a_second_run_records_beside_the_first_and_says_where(tmp_path, shared_roofline, adapter):
    """What is recorded where is the point, not what is tuned: a workload the library has no
    templates for (the example transpose) finishes its first generation at its baseline, with
    no candidates to admit, time and judge in a browser before Escape."""
    record = tmp_path / "session.jsonl"
    app = VajraApp(Settings(timing=TimingSettings(warmup=1, reps=3)), workload=str(TRANSPOSE),
                   size="ROWS=32,COLS=32", source="library", record=record, probe=lambda: adapter)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.adapter_info is not None, "the adapter probe", 60)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.driver is not None and app.driver.ready and not app.driver.busy,
                       "generation 1", 120)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.current == "picker" and app.driver is None, "the picker")
        assert record.exists()
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.driver is not None, "the second run")
        second = tmp_path / "session-2.jsonl"
        assert app.driver.record_path == second
        said = [n.message for n in app._notifications]
        assert any(f"recording this run to {second}" in m for m in said), said
        await app.quit_now()
    assert second.exists() and record.exists()
    assert app.saved_recordings == [record, second]


# ---- 4. display faults -------------------------------------------------------------
def _until_timed(count: int, warmups: bool):
    """The fixture up to the baseline's ``count``-th timed dispatch; without its warm-up
    samples when ``warmups`` is False (a batched submission times none of them)."""
    _, events = read_recording(FIXTURE)
    out, timed = [], 0
    for event in events:
        if isinstance(event, DispatchTimed) and event.id == "baseline":
            if event.warmup and not warmups:
                continue
            if not event.warmup:
                if timed == count:
                    break
                timed += 1
        if isinstance(event, (GenerationStarted, CandidateFinished)):  # still mid-run: before any result
            break
        out.append(event)
    return out


async def _spark(events) -> tuple[str, list[float]]:
    app = replay_app(events)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        label = str(app.screen.query_one(".spark-label", Static).render())
        return label, list(app.screen.query_one(Sparkline).data or [])


async def test_mid_run_the_sparkline_counts_the_warmups_that_ran():
    label, data = await _spark(_until_timed(3, warmups=False))
    assert label.startswith("2 warm-up + 3 timed dispatches"), label
    assert len(data) == 3


async def test_a_baseline_timing_with_no_samples_yet_says_so_beside_its_progress():
    """The label said "no dispatches yet" under "✓ warm-up → ▶ timed dispatches" (samples
    arrive only when their batch ends); and no empty line is drawn as a one-value full block."""
    app = replay_app(_until_timed(0, warmups=False))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        progress = str(app.screen.query_one("#baseline-progress", Static).render())
        label = str(app.screen.query_one(".spark-label", Static).render())
        data = list(app.screen.query_one(Sparkline).data or [])
    assert "✓ warm-up" in progress and "▶ timed dispatches" in progress, progress
    assert label == "2 warm-up dispatches run; timed dispatches running…" and data == [], label


async def test_no_dispatches_yet_before_the_baseline_reaches_its_warm_ups():
    events = [e for e in _until_timed(0, warmups=False)
              if not (e.type == "stage" and e.stage in ("warmup", "timing"))]
    label, data = await _spark(events)
    assert label == "no dispatches yet" and data == []


def test_durations_in_seconds_keep_three_digits():
    assert fmt.ms(1000) == "1.00 s" and fmt.ms(1130) == "1.13 s" and fmt.ms(12_000) == "12.0 s"
    assert fmt.ms(999.7) == "1.00 s" and fmt.ms(9.9996) == "10.0 ms" and fmt.ms(0.0198) == "19.8 µs"


async def test_the_source_view_wraps_long_lines_beside_a_fixed_gutter():
    app = replay_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await wait_for(pilot, lambda: app.current == "report", "the report")
        await pilot.press("s")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "SourceScreen", "the source view")
        await pilot.pause(0.3)
        box = app.screen.query_one("#source-modal", VerticalScroll)
        source = app.screen.view.stitched_source
        assert max(len(line) for line in source.splitlines()) > box.size.width  # a line that must wrap
        assert box.max_scroll_x == 0  # nothing to scroll sideways: the numbers never move away
        await pilot.press("right", "end")
        assert box.scroll_x == 0
