"""The variants list against the engine's final ranking, and e/x that say why not.

Found at 80x24 in tmux: the variants table put batch 3's D2 (10.07x of its own batch's
baseline) beside batch 6's D3 (9.55x), though D3 is twice as fast, and cut its last column
at 80 columns; with no library templates the TUI offered an ``e`` that ran an empty
generation; ``x`` with nothing crowned did nothing at all. Driven through Textual's pilot:
the shipped lavapipe recording replayed, or a small real run on the local adapter.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import DataTable, Static

from vajra_tui.engine.events import RankingReady
from vajra_tui.engine.store.record import read_recording
from vajra_tui.settings import Settings, TimingSettings
from vajra_tui.shipped import find_shipped
from vajra_tui.tui.app import VajraApp
from vajra_tui.tui.widgets.footer import FittingFooter, is_key

from tui_pilot import adapter, isolate, shared_roofline, wait_for  # noqa: F401 - fixtures too

EXAMPLES = Path(__file__).parents[1] / "examples" / "workloads"
SGEMM = find_shipped("lavapipe-sgemm")
FIXTURE = Path(__file__).parent / "data" / "session_fixture.jsonl"  # a lavapipe run with user kernels


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    isolate(tmp_path, monkeypatch)




def replay(events=None) -> VajraApp:
    if events is None:
        _, events = read_recording(SGEMM)
    return VajraApp(Settings(), replay_events=list(events), replay_label="lavapipe-sgemm", speed=0)


async def on_variants(pilot) -> DataTable:
    app = pilot.app
    await wait_for(pilot, lambda: app.state.events >= len(app.replay_events) and not app._dirty, "the replay")
    await pilot.press("v")
    await wait_for(pilot, lambda: app.current == "variants", "the variants screen")
    await pilot.pause(0.3)
    return app.screen.query_one("#variant-list", DataTable)


def rows(table: DataTable) -> dict[str, dict[str, str]]:
    """Each row's shown cells by column label, keyed by candidate id, in the list's order."""
    labels = [column.label.plain for column in table.columns.values()]
    return {str(key.value): dict(zip(labels, map(str, table.get_row(key)))) for key in
            (table.coordinate_to_cell_key((i, 0)).row_key for i in range(table.row_count))}


def footer_keys(app: VajraApp) -> set[str]:
    return {key.description for key in app.screen.query_one(FittingFooter).children if is_key(key)}


# ---- 1. no speedup beside the final batch's from another batch; the ranking's order -----
async def test_variants_list_follows_the_final_ranking_and_its_batch():
    app = replay()
    async with app.run_test(size=(80, 24)) as pilot:
        table = await on_variants(pilot)
        shown = rows(table)
        ranking = app.state.ranking
        assert ranking is not None and ranking.batch == 6
        ranked = [cid for cid in ranking.ranked_ids if cid != "baseline"]
        assert list(shown)[:len(ranked)] == ranked  # the engine's order, not the order they came
        assert shown["g2-D3"]["speedup"] == "9.55×" and shown["g2-D3"]["batch"] == "6"
        # D2 was timed in batch 3: its 10.07x divides that batch's baseline, so it is not shown
        assert shown["g2-D2"]["speedup"] == "—"
        assert shown["g2-D2"]["batch"] == "3: 10.07× of its baseline"
        for cid, cells in shown.items():  # every speedup shown is batch 6's
            assert cells["speedup"] == "—" or cells["batch"] == "6", (cid, cells)
        heading = str(app.screen.query_one("#variants-heading", Static).render())
        assert "vs batch 6's baseline" in heading
        verdict = str(app.screen.query_one("#panel-g2-D2 .panel-verdict", Static).render())
        assert "batch 3: 10.07× of that batch's baseline" in verdict, verdict


# ---- 2. whole columns at 80 columns --------------------------------------------------
def screen_text(app: VajraApp) -> str:
    """What the terminal shows, as text (the same render a screenshot is made from)."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True, record=True,
                      legacy_windows=False, safe_box=False)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens,
                                                       simplify=True))
    return console.export_text()


@pytest.mark.parametrize("recording", [SGEMM, FIXTURE], ids=["lavapipe-sgemm", "session-fixture"])
async def test_variants_list_drops_whole_columns_to_fit_80_columns(recording):
    _, events = read_recording(recording)
    app = replay(events)
    async with app.run_test(size=(80, 24)) as pilot:
        table = await on_variants(pilot)
        labels = [column.label.plain for column in table.columns.values()]
        header = next(line for line in screen_text(app).splitlines() if line.split()[:1] == ["kernel"])
        assert header.split() == labels, header  # every label shown is whole: none cut at the edge
        assert table.max_scroll_x == 0 and table.virtual_size.width <= table.scrollable_content_region.width
        assert {"kernel", "status", "median", "speedup", "GFLOP/s"} <= set(labels) and "origin" not in labels
        await pilot.resize_terminal(200, 40)  # wider: the dropped columns come back
        await pilot.pause(0.5)
        assert "origin" in [column.label.plain for column in table.columns.values()]
        assert table.max_scroll_x == 0


# ---- 3. nothing can evolve: e not offered, and says why when pressed (real runs) --------
@pytest.mark.parametrize("source, kernels", [("library", []),
                                             ("auto", [EXAMPLES / "transpose_tiled.wgsl"])])
async def test_no_templates_means_no_evolve_and_e_and_x_say_why(source, kernels, shared_roofline, adapter):
    app = VajraApp(Settings(timing=TimingSettings(warmup=1, reps=3)), workload=str(EXAMPLES / "transpose.py"),
                   size="64", source=source, kernels=kernels, probe=lambda: adapter)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.adapter_info is not None, "the adapter probe")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.driver is not None and app.driver.ready and not app.driver.busy,
                       "generation 1", 180)
        await wait_for(pilot, lambda: app.current == "variants", "the variants screen")
        await pilot.pause(0.5)
        heading = str(app.screen.query_one("#variants-heading", Static).render())
        assert "e evolves" not in heading and "evolve" not in footer_keys(app), heading
        assert "templates for transpose" in heading
        app.clear_notifications()
        await pilot.press("e")
        await pilot.pause(0.5)
        said = [n.message for n in app._notifications]
        assert any(m.startswith("nothing to evolve: the library has no templates for transpose") and
                   "--kernel" in m and "--source params" in m and "\n" not in m for m in said), said
        assert list(app.state.generations) == [1] and not app.driver.busy  # no empty generation ran
        # ---- 5. x with nothing crowned says why; the user's tiled transpose may beat the
        # baseline on a fast machine, and then x is offered (a replay below checks the words)
        if app.state.winner is not None:
            assert source == "auto" and app.check_action("export", ()) is True
        else:
            assert "export" not in footer_keys(app)
            await pilot.press("x")
            await pilot.pause(0.3)
            said = [n.message for n in app._notifications]
            assert any(m.startswith("nothing to export: no candidate beat the baseline") for m in said), said
        await app.quit_now()


# ---- 5. x when nothing beat the baseline (the recording's last ranking, without a crown) --
async def test_export_with_nothing_crowned_says_why():
    _, events = read_recording(SGEMM)
    events = list(events)
    last = max(i for i, e in enumerate(events) if isinstance(e, RankingReady))
    events[last] = events[last].model_copy(update={"winner_id": None, "baseline_won": True})
    app = replay(events)
    async with app.run_test(size=(80, 24)) as pilot:
        await on_variants(pilot)
        app.clear_notifications()
        await pilot.press("x")
        await pilot.pause(0.3)
        said = [n.message for n in app._notifications]
        assert said == ["nothing to export: no candidate beat the baseline, so none is crowned (r: the report)"]
        assert not app.screen_stack[-1].__class__.__name__ == "ExportScreen"


# ---- 5b. the report says why a faster median was not crowned -----------------------------
async def test_report_names_the_kernel_the_noise_left_uncrowned():
    _, events = read_recording(SGEMM)
    events = list(events)
    last = max(i for i, e in enumerate(events) if isinstance(e, RankingReady))
    fast = events[last].winner_id
    events[last] = events[last].model_copy(update={"winner_id": None, "baseline_won": True,
                                                   "undecided_id": fast})
    app = replay(events)
    async with app.run_test(size=(80, 24)) as pilot:
        await on_variants(pilot)
        await pilot.press("r")
        await wait_for(pilot, lambda: app.current == "report", "the report")
        await pilot.pause(0.2)
        said = str(app.screen.query_one("#report-winner", Static).render())
        view = app.state.candidates[fast]
        assert said.startswith("No candidate beat the baseline: nothing is crowned.")
        assert f"{view.label}'s median is" in said and "more reps can tell" in said, said
