"""The whole keyboard flow, live on the local adapter (lavapipe in CI): no GPU fakes.

picker → Enter → baseline → variants → graveyard (a broken and a wrong user
kernel injected through RunConfig.extra_kernels, the CLI's --kernel) → report
→ e evolve → x export → c copy → q quit (the recording is published).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from textual.widgets import Input

from vajra_tui.tui.app import VajraApp, run_app
from vajra_tui.engine.store.record import read_recording
from vajra_tui.settings import Settings, TimingSettings
from tui_pilot import shared_roofline  # noqa: F401 - a fixture

DATA = Path(__file__).parent / "data"
KERNELS = [DATA / "broken_kernel.wgsl", DATA / "wrong_kernel.wgsl"]


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    for name in ("VAJRA_CONFIG_DIR", "VAJRA_DATA_DIR", "VAJRA_CACHE_DIR"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    for name in ("NEBIUS_API_KEY", "TAVILY_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


async def wait_for(pilot, condition, what: str, timeout: float = 90.0) -> None:
    """Poll app state (never a bare sleep): engine progress is real GPU work."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.05)


def _why_no_crown(app) -> str:
    """The verdict and every ranked kernel's samples: what a failed crown needs to be read."""
    ranking = app.state.ranking
    if ranking is None:
        return "no ranking arrived"
    lines = [ranking.headline]
    for view in app.state.ranked:
        result = view.result
        lines.append(f"{view.id}: {result.status} batch={result.batch} times_ms={result.times_ms}")
    return "\n".join(lines)


def fast_settings(**kw) -> Settings:
    return Settings(timing=TimingSettings(warmup=1, reps=3), **kw)


async def test_full_keyboard_flow(tmp_path, shared_roofline):
    record = tmp_path / "session.jsonl"
    # 128³ on a GPU is all launch floor: with 3 reps nothing beats the naive kernel for
    # certain (found on the H200), and this flow needs a winner to export. On lavapipe,
    # 256³ rather than 128³: the best kernel's 0.75 ms dispatch (4.2x the naive one's) was
    # as short as a scheduler slice, and in a loaded CI run its samples overlapped the
    # naive kernel's so nothing was crowned; at 256³ it runs 2.9 ms against 24.8 (8.6x).
    # The size is given as -s would give it (M=256,N=256,K=128); the picker's own probe says whether the
    # adapter is a GPU, and there the size field is typed over with 512 before Enter (no
    # GPU worker of its own is started just to ask).
    # Fifteen reps: on a loaded 2-core CI machine one stalled dispatch of three, and later one
    # of five, put the best kernel's resampled median past the naive kernel's, so the bootstrap
    # could not tell an 8.6x kernel from the baseline and nothing was crowned. Fifteen tolerate
    # three stalls (tests/test_ranking.py shows the arithmetic) for about a second more.
    # An evolution round of two (Settings.budget, the TUI's only way to set it): what is under
    # test is that `e` runs a round and ranks it, not how many it proposes.
    # K = 128 halves every dispatch (the naive one's ~200 ms on a busy 2-core lavapipe) and keeps
    # the ratios, which are all the crown reads.
    settings = Settings(timing=TimingSettings(warmup=1, reps=15), budget=2)
    app = VajraApp(settings, workload="sgemm", size="M=256,N=256,K=128", source="library",
                   kernels=KERNELS, record=record)
    async with app.run_test(size=(120, 40)) as pilot:
        assert app.current == "picker"
        await wait_for(pilot, lambda: app.adapter_info is not None, "the adapter probe", 60)
        if not app.adapter_info.software:
            app.screen.query_one("#custom", Input).value = "512"
            app.screen.query_one("#workloads").focus()
            await pilot.pause(0.1)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.current == "baseline", "the baseline screen")
        await wait_for(pilot, lambda: app.state.baseline is not None
                       and app.state.baseline.result is not None, "the baseline result")
        assert app.state.baseline.result.status == "verified"
        assert app.state.baseline.dispatch_ms, "the sparkline has dispatch times"
        await wait_for(pilot, lambda: app.driver.ready and not app.driver.busy, "generation 1")
        assert app.current == "variants"
        assert {"g1-A", "g1-B", "g1-C"} <= set(app.state.candidates)

        # graveyard: the compile error sits at its line:column, the rejection has its worst element
        await pilot.press("g")
        await wait_for(pilot, lambda: app.current == "graveyard", "the graveyard")
        dead = {v.status: v for v in app.state.graveyard}
        assert {"compile_error", "rejected"} <= set(dead)
        assert dead["compile_error"].diagnostics[0].line == 7
        assert dead["rejected"].result.worst_index is not None
        await pilot.press("j")
        await pilot.pause(0.1)

        await pilot.press("r")
        await wait_for(pilot, lambda: app.current == "report", "the report")
        winner = app.state.winner
        assert winner is not None and winner.result.speedup is not None, _why_no_crown(app)

        await pilot.press("s")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "SourceScreen", "the source view")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.current == "report" and type(app.screen).__name__ == "ReportScreen",
                       "back to the report")

        await pilot.press("e")
        await wait_for(pilot, lambda: app.state.generation == 2, "generation 2 to start")
        assert app.current == "variants"
        await wait_for(pilot, lambda: not app.driver.busy, "generation 2 to finish")
        assert app.state.ranking.generation == 2
        assert len([cid for cid in app.state.candidates if cid.startswith("g2-")]) == 2, "the budget reached e"

        await pilot.press("x")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "ExportScreen", "the export modal")
        app.screen.query_one("#export-dir").value = str(tmp_path / "out")
        await pilot.press("enter")
        await wait_for(pilot, lambda: (tmp_path / "out" / "sgemm.wgsl").exists(), "the export")
        assert (tmp_path / "out" / "sgemm.wgsl").read_text() == app.state.winner.stitched_source

        # c copies the kernel selected on the current screen: the winner heads the report
        await pilot.press("r", "home", "c")
        await pilot.pause(0.1)
        assert app.screen.selected_view() is app.state.winner
        assert app.clipboard == app.state.winner.stitched_source

        await pilot.press("q")
        await wait_for(pilot, lambda: record.exists(), "the recording to be published", 30)
    header, events = read_recording(record)
    assert events[-1].type == "session_finished"
    assert any(e.type == "ranking" and e.generation == 2 for e in events)


async def test_keys_overridable_and_palette_names(tmp_path):
    app = VajraApp(fast_settings(keys={"graveyard": "G", "help": "f2"}), probe=lambda: None)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.key_for("graveyard") == "G"
        await pilot.press("f2")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "HelpScreen", "help on f2", 5)
        await pilot.press("escape")
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "Help: keys" in titles


async def test_no_adapter_offers_recordings(tmp_path):
    def no_adapter():
        raise RuntimeError("no WebGPU adapter found")

    app = VajraApp(fast_settings(), probe=no_adapter)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.screen.query_one("#recordings").display, "the fallback", 5)
        app.screen.query_one("#workloads").focus()
        await pilot.press("enter")  # cannot run without an adapter: told, no crash
        await pilot.pause(0.1)
        assert app.driver is None
        # the shipped recordings are offered; picking one plays it under a RECORDING banner
        app.speed = 0
        app.screen.query_one("#recording-list").focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.driver is not None and app.state.ranking is not None,
                       "the recorded session", 30)
        assert app.driver.replay and "RECORDING" in app.banner
        assert app.state.device is not None and app.state.winner is not None


def test_existing_recording_is_never_overwritten(tmp_path, capsys):
    target = tmp_path / "taken.jsonl"
    target.write_text("precious\n")
    assert run_app(fast_settings(), workload="sgemm", record=target) == 2
    assert target.read_text() == "precious\n"
    assert "refusing to overwrite" in capsys.readouterr().err


def test_bad_size_is_one_line(capsys):
    assert run_app(fast_settings(), workload="sgemm", size="12x") == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "bad size" in err
    json.dumps(err)  # plain text
