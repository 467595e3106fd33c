"""Snapshots of every screen at 80×24 and 120×40, driven by a fixed recorded session.

The screens are fed ``tests/data/session_fixture.jsonl`` (a real lavapipe run
recorded once: Nemotron streams from the loopback test server, library
kernels, and broken and wrong user kernels) at speed 0, so no live timing
reaches a snapshot. Regenerate the fixture with::

    .venv/bin/python tests/test_snapshots.py   # then: pytest tests/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data"
FIXTURE = DATA / "session_fixture.jsonl"
SIZES = [(80, 24), (120, 40)]

sys.path.insert(0, str(ROOT))
from vajra_tui.tui.app import VajraApp  # noqa: E402
from vajra_tui.engine.events import DeviceInfo  # noqa: E402
from vajra_tui.engine.store.record import read_recording  # noqa: E402
from vajra_tui.settings import Settings  # noqa: E402

FAKE_DEVICE = DeviceInfo(name="llvmpipe (LLVM 15.0.6, 256 bits)", backend="Vulkan", adapter_type="CPU",
                         software=True)


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    for name in ("VAJRA_CONFIG_DIR", "VAJRA_DATA_DIR", "VAJRA_CACHE_DIR"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    for name in ("NEBIUS_API_KEY", "TAVILY_API_KEY", "VAJRA_THEME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir("/tmp")  # the export modal shows its folder in full: the same on every machine


def replay_app(theme: str = "textual-dark") -> VajraApp:
    _, events = read_recording(FIXTURE)
    return VajraApp(Settings(theme=theme), replay_events=events, replay_label=FIXTURE.name, speed=0)


async def settle(pilot) -> None:
    """Wait (polling, bounded) until the replay is folded in and drawn; drop toasts."""
    app = pilot.app
    deadline = time.monotonic() + 30
    while app.state.events < len(app.replay_events) or app._dirty:
        assert time.monotonic() < deadline, "replay did not finish"
        await pilot.pause(0.05)
    await pilot.pause(0.2)
    app.clear_notifications()
    await pilot.pause()


def goto(keys: str, screen: str):
    """Press keys, then wait until ``screen`` (a class name) is on top and drawn."""
    async def run_before(pilot) -> None:
        await settle(pilot)
        for key in keys.split():
            await pilot.press(key)
            await pilot.pause(0.05)
        deadline = time.monotonic() + 10
        while type(pilot.app.screen).__name__ != screen:
            assert time.monotonic() < deadline, f"{screen} never showed"
            await pilot.pause(0.05)
        await pilot.pause(0.3)
        pilot.app.clear_notifications()
        # work queued for after a refresh (the selected card scrolled into view, the footer
        # fitted to the width) lands a refresh or two later: on a loaded machine (a second
        # test worker beside this one) 0.3 s was once not enough (VariantsScreen at 80x24, in CI)
        for _ in range(3):
            await pilot.wait_for_scheduled_animations()
            await pilot.pause(0.1)
        await selected_card_in_view(pilot)
        await steady(pilot)
    return run_before


async def tables_measured(pilot, limit_s: float = 10.0) -> None:
    """Wait until every list on screen has measured its rows. Textual's DataTable sizes its
    columns for new rows when the app next goes idle; in a loaded CI run (2026-12-05) the
    variants list was caught with its columns at their labels' widths ("verifi"). Reads the
    table's private ``_require_update_dimensions``: Textual has no public "measured" flag."""
    from textual.widgets import DataTable

    deadline = time.monotonic() + limit_s
    while any(getattr(t, "_require_update_dimensions", False) for t in pilot.app.screen.query(DataTable)):
        assert time.monotonic() < deadline, "a list never measured its rows"
        await pilot.pause(0.05)


async def selected_card_in_view(pilot, limit_s: float = 10.0) -> None:
    """On the variants screen, wait until the selected card sits inside the scrolling panel.
    The card follows the list after a refresh; in a loaded CI run (2026-12-05) that scroll
    landed after two identical renders, so ``steady`` alone let the snapshot catch the panel
    at its top, the selected card still below it."""
    screen = pilot.app.screen
    bodies, cards = screen.query("#variants-body"), screen.query(".-selected")
    if not bodies or not cards:
        return
    body, card = bodies.first(), cards.first()
    deadline = time.monotonic() + limit_s
    while not body.region.contains_region(card.region) or not card.region.height:
        assert time.monotonic() < deadline, f"the selected card never scrolled into view: {card.region} in {body.region}"
        await pilot.pause(0.05)


async def steady(pilot, apart: float = 0.2, limit_s: float = 10.0) -> None:
    """Wait until two renders ``apart`` seconds apart are the same: on a loaded 2-core CI machine
    the selected card's scroll (queued after a refresh) once landed after the pauses above, and
    the snapshot caught the list before it moved (VariantsScreen at 80x24, 2026-12-03)."""
    deadline = time.monotonic() + limit_s
    await tables_measured(pilot, limit_s)
    last = pilot.app.export_screenshot()
    while time.monotonic() < deadline:
        await pilot.wait_for_scheduled_animations()
        await pilot.pause(apart)
        shot = pilot.app.export_screenshot()
        if shot == last:
            return
        last = shot


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_picker(snap_compare, size):
    app = VajraApp(Settings(), workload="sgemm", size="128", source="library", probe=lambda: FAKE_DEVICE)

    async def run_before(pilot) -> None:
        deadline = time.monotonic() + 10
        while pilot.app.adapter_info is None:
            assert time.monotonic() < deadline
            await pilot.pause(0.05)
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("screen,keys", [
    ("BaselineScreen", "b"), ("VariantsScreen", "v"), ("GraveyardScreen", "g"),
    ("GraveyardScreen", "g j"), ("ReportScreen", "r"), ("HelpScreen", "r question_mark"),
    ("SourceScreen", "r s"), ("ExportScreen", "r x"),
])
def test_screen(snap_compare, size, screen, keys):
    assert snap_compare(replay_app(), terminal_size=size, run_before=goto(keys, screen))


def test_report_light_theme(snap_compare):
    assert snap_compare(replay_app("textual-light"), terminal_size=(120, 40), run_before=goto("r", "ReportScreen"))


def test_variants_light_theme(snap_compare):
    assert snap_compare(replay_app("textual-light"), terminal_size=(80, 24), run_before=goto("v", "VariantsScreen"))


# ---- regenerating the fixture (a real run on the local adapter) ----------------------
def _library_sources() -> list[str]:
    from vajra_tui.engine.candidate import GenerationContext
    from vajra_tui.engine.sources.library import LibrarySource
    from vajra_tui.engine.workloads import get_workload

    sgemm = get_workload("sgemm")
    ctx = GenerationContext(workload=sgemm.info(sgemm.size("128")), device=FAKE_DEVICE, generation=1)
    return [c.source for c in asyncio.run(LibrarySource(FAKE_DEVICE).propose(ctx))]


async def _record(out: Path) -> None:
    import llm_server
    from vajra_tui.settings import LLMSettings, TimingSettings

    sources = _library_sources()
    llm_server.THINK_REPLY = (f"<think>{llm_server.THINK_TEXT} A 128x128 tile with vec4 loads "
                              f"should beat the naive loop.</think>\n```wgsl\n{sources[-1]}```\n")
    llm_server.KERNEL_REPLY = f"Here is a tiled kernel:\n```wgsl\n{sources[1]}```\nIt reuses tiles.\n"
    server = llm_server.LLMServer(chunk_size=12, chunk_delay=0.01).start()
    server.script("nemotron-test", "think", "reasoning_field", "prose")
    import os

    os.environ["NEBIUS_API_KEY"] = "sk-test-not-a-real-key"
    settings = Settings(llm=LLMSettings(base_url=server.url, model="nemotron-test",
                                        fallback_model="nemotron-test", first_token_timeout_s=5,
                                        timeout_s=30),
                        timing=TimingSettings(warmup=2, reps=5, deadline_s=4))
    kernels = [DATA / "broken_kernel.wgsl", DATA / "wrong_kernel.wgsl"]
    app = VajraApp(settings, workload="sgemm", size="128", source="nemotron", kernels=kernels,
                   record=out)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("enter")
        while not (app.driver and app.driver.ready and not app.driver.busy):
            await pilot.pause(0.2)
        await pilot.press("e")
        await pilot.pause(0.5)
        while app.driver.busy:
            await pilot.pause(0.2)
        await app.action_quit()
    server.stop()


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    FIXTURE.unlink(missing_ok=True)
    asyncio.run(_record(FIXTURE))
    header, events = read_recording(FIXTURE)
    print(f"{FIXTURE}: {len(events)} events")
