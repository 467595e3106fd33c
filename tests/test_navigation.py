"""Getting around at 80×24 over a recorded session: lists that follow their selection,
``s``/``c`` on the selected kernel, the way back to the picker, the footer, the Keys
panel, the chart's labels, the software flag on one line and sideways scrolling of
long source lines. Driven through Textual's pilot on the snapshot fixture at speed 0.
"""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest
from rich.console import Console

from vajra_tui.tui.app import VajraApp
from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.store.record import read_recording
from vajra_tui.settings import Settings

FIXTURE = Path(__file__).parent / "data" / "session_fixture.jsonl"
FAKE_DEVICE = DeviceInfo(name="llvmpipe (LLVM 15.0.6, 256 bits)", backend="Vulkan", adapter_type="CPU",
                         software=True)


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    for name in ("VAJRA_CONFIG_DIR", "VAJRA_DATA_DIR", "VAJRA_CACHE_DIR"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    for name in ("NEBIUS_API_KEY", "TAVILY_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def screen_text(app) -> str:
    """What the terminal shows, as text (the same render a screenshot is made from)."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True, record=True,
                      legacy_windows=False, safe_box=False)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens,
                                                       simplify=True))
    return console.export_text()


def replay_app() -> VajraApp:
    _, events = read_recording(FIXTURE)
    return VajraApp(Settings(), replay_events=events, replay_label=FIXTURE.name, speed=0,
                    probe=lambda: FAKE_DEVICE)


async def until(pilot, condition, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.05)


async def settled(pilot) -> None:
    app = pilot.app
    await until(pilot, lambda: app.driver is not None and app.driver.done and not app._dirty, "the replay")
    await pilot.pause(0.2)


async def keys(pilot, *names: str) -> None:
    for name in names:
        await pilot.press(name)
        await pilot.pause(0.05)
    await pilot.pause(0.15)


def visible(app, widget) -> bool:
    """The widget's whole region lies inside the screen region its scroll container shows."""
    region = widget.region
    return region.height > 0 and app.screen.region.contains_region(region) and \
        widget.parent.parent.region.contains_region(region)


async def test_lists_follow_their_selection_at_80x24():
    app = replay_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot)
        await keys(pilot, "v")
        table = app.screen.query_one("#variant-list")
        rows = table.row_count
        assert rows >= 12
        await keys(pilot, *["j"] * 7)
        chosen = app.screen.selected_view()
        assert table.cursor_row == 7 and chosen is not None
        panel = app.screen.query_one(f"#panel-{chosen.id}")
        assert visible(app, panel), "the selected card is on screen"
        await keys(pilot, "end")
        assert table.cursor_row == rows - 1
        last = app.screen.selected_view()
        assert visible(app, app.screen.query_one(f"#panel-{last.id}")), "End reaches the last card"
        await keys(pilot, "home")
        assert table.cursor_row == 0
        await keys(pilot, "pagedown")
        assert table.cursor_row > 1, "PageDown moves a page"
        down = table.cursor_row
        await keys(pilot, "pageup")
        assert table.cursor_row < down
        # s opens the kernel selected here, and c copies it
        await keys(pilot, "end", "s")
        assert type(app.screen).__name__ == "SourceScreen" and app.screen.view.id == last.id
        await keys(pilot, "c")
        assert app.clipboard == (last.stitched_source or last.source)
        await keys(pilot, "escape")
        assert app.current == "variants", "escape closes the source view first"
        # in the graveyard, s opens the failure under the cursor, not the variants' selection
        await keys(pilot, "g", "j")
        grave = app.screen.selected_view()
        assert grave is not None and grave.failed and grave.id != last.id
        await keys(pilot, "s")
        assert app.screen.view.id == grave.id
        await keys(pilot, "escape", "r", "end")
        ranking = app.screen.query_one("#ranking")
        last_row = ranking.coordinate_to_cell_key((ranking.row_count - 1, 0)).row_key.value
        ranked = app.screen.selected_view()
        assert ranked.id == last_row and ranked.id != app.state.winner.id
        await keys(pilot, "c")
        assert app.clipboard == ranked.stitched_source, "c copies the selected kernel, not the winner"


async def test_escape_and_backspace_return_to_the_picker():
    app = replay_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot)
        await keys(pilot, "r", "question_mark")
        assert type(app.screen).__name__ == "HelpScreen"
        await keys(pilot, "escape")
        assert app.current == "report", "escape closes a modal before it goes back"
        await keys(pilot, "escape")
        await until(pilot, lambda: app.current == "picker", "the picker")
        assert app.driver is None and app.state.session is None and app.banner == ""
        assert not any(app.is_screen_installed(n) for n in ("baseline", "variants", "graveyard", "report"))
        await until(pilot, lambda: app.adapter_info is not None, "the adapter probe")
        assert "pick a workload" in screen_text(app)
        # a second replay, then Backspace from another screen
        _, events = read_recording(FIXTURE)
        app.start_replay(events)
        await settled(pilot)
        await keys(pilot, "g", "backspace")
        await until(pilot, lambda: app.current == "picker", "the picker again")


async def test_footer_shows_only_what_works_and_keys_panel_closes():
    app = replay_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot)
        await keys(pilot, "r")
        footer = screen_text(app).splitlines()[-1]
        assert "evolve" not in footer and "cancel" not in footer, footer  # a replay cannot evolve
        assert "export" in footer and "picker" in footer and "src" in footer
        assert app.check_action("evolve", ()) is False and app.check_action("cancel", ()) is False
        app.action_show_help_panel()  # the command palette's "Keys"
        await pilot.pause(0.2)
        assert app.screen.query("HelpPanel")
        await keys(pilot, "escape")
        assert not app.screen.query("HelpPanel") and app.current == "report"


async def test_layout_at_80x24_software_flag_chart_labels_and_source_scroll():
    app = replay_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot)
        await keys(pilot, "b")
        text = screen_text(app)
        assert "SOFTWARE (CPU timings)" in text, "the software flag is never split across lines"
        await keys(pilot, "r")
        text = screen_text(app)
        chart = text[text.index("GFLOP/s per kernel"):]
        labels = {v.label for v in app.state.ranked} | {"baseline"}
        bars = [line.strip() for line in chart.splitlines() if "█" in line]
        named = [line.split()[0] for line in bars]
        assert len(bars) >= 5 and all(name in labels for name in named), f"every bar is labelled: {bars}"
        assert named[0] == app.state.winner.label and "baseline" in named
        await keys(pilot, "home", "s")
        box = app.screen.query_one("#source-modal")
        longest = max(len(line) for line in app.screen.view.stitched_source.splitlines())
        assert longest > box.size.width, "long lines are wider than the view"
        assert box.max_scroll_x == 0, "and wrap beside their line numbers (no sideways scroll took them away)"
        await keys(pilot, "end")
        await keys(pilot, "right", "right", "right")
        assert box.scroll_x == 0 and box.max_scroll_y > 0, "scrolled down, never sideways"


async def test_cards_keep_their_verdict_at_120_columns():
    app = replay_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settled(pilot)
        await keys(pilot, "v")
        app.screen.query_one("#variants-body").scroll_home(animate=False)  # it follows the selected card
        await pilot.pause(0.1)
        text = screen_text(app)
        first_row = [v for v in app.state.variants][:3]
        for view in first_row:  # three cards across: each still shows its verdict
            verdict = "verified ✓" if view.result.status == "verified" else \
                view.result.status.replace("_", " ") + " ✗"
            assert verdict in text, (view.label, verdict)
        rejected = next(v for v in app.state.graveyard if v.status == "rejected")
        for _ in range(20):  # select it: its card scrolls into view
            if app.screen.selected_view().id == rejected.id:
                break
            await keys(pilot, "j")
        text = screen_text(app)
        words = rejected.result.reason.split()
        assert words[0] in text and words[-1] in text, "a failure reason wraps in its card, whole"
