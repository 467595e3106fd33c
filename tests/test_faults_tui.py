"""Faults an audit found in the TUI, each driven through the Textual pilot (no GPU needed).

- A ``--size`` shaped for one workload branded every other picker row "invalid".
- A workload file given with ``-w`` showed as a bare name, like a built-in, beside the
  workloads folder's file of the same name ("transpose" and "transpose (yours)").
- A workload of no arithmetic (a copy, a transpose) got an empty GFLOP/s chart on its
  report card, and at 80 columns its GB/s column was the one dropped.
- The browser verdict's advice, "run vajra-tui setup-node", was said several times on the
  report card (the badge repeated the line under it, and each held it twice).
- A toast covered part of the quit question at 80x24.

The session fixture (a real lavapipe recording) is replayed at speed 0, edited where a fault
needs another workload or verdict; the picker gets a fake adapter.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
from rich.text import Text
from textual.widgets import DataTable, Static

from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.store.record import read_recording
from vajra_tui.settings import Settings
from vajra_tui.tui.app import VajraApp

from tui_pilot import isolate, wait_for

sys.path.insert(0, str(Path(__file__).parent))
from test_navigation import screen_text  # noqa: E402

DATA = Path(__file__).parent / "data"
FIXTURE = DATA / "session_fixture.jsonl"
EXAMPLES = Path(__file__).parents[1] / "examples" / "workloads"
TRANSPOSE = EXAMPLES / "transpose.py"
FAKE_DEVICE = DeviceInfo(name="llvmpipe (LLVM 15.0.6, 256 bits)", backend="Vulkan", adapter_type="CPU",
                         software=True)
SETUP_NODE = "vajra-tui setup-node"
# What the engine said when Dawn was not installed and Chromium had no transpiler: the
# advice twice in one verdict (engine/browser/verdict.py composed the two reasons).
DOUBLED = ("unchecked: browser check unavailable: run vajra-tui setup-node (no TypeScript transpiler: "
           "run vajra-tui setup-node (installs esbuild with Dawn), or put esbuild or typescript on "
           "PATH / in node_modules)")


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    isolate(tmp_path, monkeypatch)


# ---- helpers ---------------------------------------------------------------------------
def edited_fixture(out: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """The session fixture with ``edit`` applied to each event (as JSON), written to ``out``."""
    lines = FIXTURE.read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines[1:]]
    for event in events:
        edit(event)
    out.write_text("\n".join([lines[0], *(json.dumps(e) for e in events)]) + "\n", encoding="utf-8")
    return out


def winner_id() -> str:
    _, events = read_recording(FIXTURE)
    return [e for e in events if e.type == "ranking"][-1].winner_id


def no_arithmetic(event: dict[str, Any]) -> None:
    """The fixture as a workload of no arithmetic would have it: 0 FLOPs, 0 GFLOP/s, 0 FLOP/B."""
    if event["type"] == "session_started":
        event["workload"]["flops"] = 0.0
    elif event["type"] == "candidate_finished" and event["result"].get("gflops") is not None:
        event["result"].update(gflops=0.0, intensity=0.0)


def replay_app(path: Path = FIXTURE) -> VajraApp:
    _, events = read_recording(path)
    return VajraApp(Settings(), replay_events=events, replay_label=path.name, speed=0)


async def settle(pilot) -> None:
    app = pilot.app
    await wait_for(pilot, lambda: app.state.events >= len(app.replay_events) and not app._dirty, "the replay", 30)
    await pilot.pause(0.3)


async def open_report(pilot) -> None:
    await settle(pilot)
    await pilot.press("r")
    await wait_for(pilot, lambda: pilot.app.current == "report", "the report card")
    await pilot.pause(0.5)


def picker_rows(app: VajraApp) -> list[tuple[str, ...]]:
    table = app.screen.query_one("#workloads", DataTable)
    return [tuple(str(cell) for cell in table.get_row_at(i)) for i in range(table.row_count)]


async def picker(pilot) -> None:
    await wait_for(pilot, lambda: pilot.app.adapter_info is not None, "the adapter probe", 30)
    await pilot.pause(0.2)


# ---- 1. a size meant for one workload ---------------------------------------------------
async def test_a_size_for_the_chosen_workload_does_not_brand_the_others_invalid():
    app = VajraApp(Settings(), workload="sgemm", size="M=64,N=32,K=16", source="library",
                   probe=lambda: FAKE_DEVICE)
    async with app.run_test(size=(80, 24)) as pilot:
        await picker(pilot)
        rows = {row[0]: row[1:] for row in picker_rows(app)}
        assert rows["sgemm"][0] == "64×32×16", rows["sgemm"]
        assert not any("invalid" in cell for row in rows.values() for cell in row), rows
        assert rows["softmax"][0] == "does not apply" and rows["attention"][0] == "does not apply"
        assert app.screen.query_one("#workloads", DataTable).cursor_row == 0  # sgemm, ready to run


# ---- 2. a given file beside a folder workload of the same name ------------------------------
async def test_a_given_file_and_a_folder_workload_of_one_name_are_told_apart(tmp_path):
    folder = tmp_path / "vajra_config_dir" / "workloads"
    folder.mkdir(parents=True)
    shutil.copy(TRANSPOSE, folder / "transpose.py")
    app = VajraApp(Settings(), workload=str(TRANSPOSE), size="ROWS=32,COLS=16", source="library",
                   probe=lambda: FAKE_DEVICE)
    started: list[str] = []
    app.start_live = lambda workload, size, source: started.append(workload)  # type: ignore[method-assign]
    async with app.run_test(size=(80, 24)) as pilot:
        await picker(pilot)
        labels = [row[0] for row in picker_rows(app)]
        assert "transpose" not in labels, labels  # never shown as if it were a built-in
        assert labels[-2:] == ["transpose (yours)", "transpose (yours: transpose.py)"], labels
        assert len(set(labels)) == len(labels)
        table = app.screen.query_one("#workloads", DataTable)
        assert table.cursor_row == len(labels) - 1  # -w named the file: its row, not the folder's
        what = str(app.screen.query_one("#workload-what", Static).render())
        assert str(TRANSPOSE) in what
        await pilot.press("enter")
        table.move_cursor(row=len(labels) - 2)
        await pilot.pause(0.2)
        assert str(folder / "transpose.py") in str(app.screen.query_one("#workload-what", Static).render())
        await pilot.press("enter")
        await pilot.pause(0.2)
    assert started == [str(TRANSPOSE), str(folder / "transpose.py")]


async def test_the_folder_file_given_by_its_path_is_its_folder_row(tmp_path):
    folder = tmp_path / "vajra_config_dir" / "workloads"
    folder.mkdir(parents=True)
    shutil.copy(TRANSPOSE, folder / "transpose.py")
    another_way = f"{folder}/../workloads/transpose.py"  # the same file, spelt otherwise
    app = VajraApp(Settings(), workload=another_way, source="library", probe=lambda: FAKE_DEVICE)
    async with app.run_test(size=(80, 24)) as pilot:
        await picker(pilot)
        labels = [row[0] for row in picker_rows(app)]
        assert [label for label in labels if label.startswith("transpose")] == ["transpose (yours)"], labels
        assert app.screen.query_one("#workloads", DataTable).cursor_row == labels.index("transpose (yours)")


# ---- 3. no arithmetic: GB/s on the report card ----------------------------------------------
async def test_a_workload_of_no_arithmetic_is_reported_in_gbps_at_80_columns(tmp_path):
    app = replay_app(edited_fixture(tmp_path / "copy.jsonl", no_arithmetic))
    async with app.run_test(size=(80, 24)) as pilot:
        await open_report(pilot)
        table = app.screen.query_one("#ranking", DataTable)
        labels = [column.label.plain for column in table.columns.values()]
        assert "GB/s" in labels and "GFLOP/s" not in labels and "FLOP/B" not in labels, labels
        assert table.max_scroll_x == 0
        headline = app.screen.query_one("#report-winner", Static).render()
        assert "0.40 GB/s" in str(headline) and "GFLOP/s" not in str(headline)
        text = screen_text(app)
        assert "GB/s per kernel" in text and "GFLOP/s per kernel" not in text
        chart = text[text.index("GB/s per kernel"):]
        assert "█" in chart and "0.40" in chart  # bars with the winner's GB/s, not an empty chart


async def test_a_workload_with_arithmetic_keeps_its_gflops_chart():
    app = replay_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await open_report(pilot)
        text = screen_text(app)
        assert "GFLOP/s per kernel" in text and "8.58 GFLOP/s" in text


# ---- 4. the browser advice, once --------------------------------------------------------
async def test_the_report_card_says_the_setup_node_advice_once(tmp_path):
    """The card shows the verdict once (the badge is only its status word); the engine now
    says the advice once per verdict (test_faults_cli), and a recording made before that
    shows it as often as its verdict holds it, no more."""
    crowned = winner_id()
    verdict = ("unchecked: browser check unavailable: run vajra-tui setup-node (no TypeScript transpiler: "
               "put esbuild or typescript on PATH / in node_modules)")

    def judged(text: str) -> Callable[[dict[str, Any]], None]:
        def edit(event: dict[str, Any]) -> None:
            if event["type"] == "candidate_finished" and event["result"]["id"] == crowned:
                event["result"].update(browser=text, browser_judge="")
        return edit

    for text, said in ((verdict, 1), (DOUBLED, 2)):
        app = replay_app(edited_fixture(tmp_path / f"judged{said}.jsonl", judged(text)))
        async with app.run_test(size=(120, 40)) as pilot:
            await open_report(pilot)
            headline = app.screen.query_one("#report-winner", Static).render()
            shown = headline.plain if isinstance(headline, Text) else str(headline)
            assert "[unchecked]" in shown and shown.count(SETUP_NODE) == said, shown


# ---- 5. toasts and the quit question ------------------------------------------------------
async def test_toasts_wait_while_the_quit_question_is_asked_at_80x24():
    app = replay_app()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        app.clear_notifications()
        app.driver.replay, app.driver.busy = False, True  # as a live generation is: q asks first
        for i in range(3):
            app.notify(f"toast {i} " * 8, timeout=60)
        app.notify("GPU worker warning: a long message about the candidate in flight", severity="warning",
                   timeout=60)
        await pilot.pause(0.3)
        assert "toast 0" in screen_text(app)
        await pilot.press("q")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen", "the question", 5)
        await pilot.pause(0.3)
        text = screen_text(app)
        assert "Stop it and quit?" in text and "The candidates in flight are cancelled; the recording so far" in text
        assert "Stop and quit (y)" in text and "Keep running (n)" in text
        assert "toast" not in text and "GPU worker warning" not in text, text
        await pilot.press("n")
        await pilot.pause(0.3)
        assert "toast 2" in screen_text(app)  # held, not lost
        app.driver.busy = False
