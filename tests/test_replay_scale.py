"""Replay scales linearly with the number of candidates a recording queues.

Recordings of tens of thousands of candidates (a long ``// tune:`` search, or a hostile
file) once took quadratic time: 50k queued candidates ran 13 s headless, and the TUI sat
for minutes on 2k, deaf to ``q``. The recordings here are synthetic but real: the header
and every line come from the :class:`Recorder` itself.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import child_pythonpath

from vajra_tui.cli.main import main
from vajra_tui.engine.events import (
    CandidateFinished, CandidateQueued, CandidateResult, DeviceInfo, GenerationStarted, RankingReady,
    SessionFinished, SessionStarted, StageChanged, WorkloadInfo,
)
from vajra_tui.engine.store.record import Recorder, Recording
from vajra_tui.tui.state import RunState

ROOT = Path(__file__).resolve().parents[1]
FINISH_EVERY = 100  # one candidate in this many gets a result: the table stays small, the replay does not


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    for name in ("VAJRA_CONFIG_DIR", "VAJRA_DATA_DIR", "VAJRA_CACHE_DIR"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))


def _result(i: int) -> CandidateResult:
    verified = i % 3 != 0
    return CandidateResult(id=f"c{i}", name=f"cand-{i}", strategy="params", origin="synthetic",
                           status="verified" if verified else "rejected",
                           reason="" if verified else "max relative error 1.0",
                           median_ms=1.0 + i / 1000 if verified else None,
                           speedup=1.5 if verified else None, gflops=2.0 if verified else None)


def make_recording(path: Path, candidates: int, finish_every: int = FINISH_EVERY) -> Path:
    """A session that queues ``candidates`` kernels, then finishes one in ``finish_every``,
    last queued first (so the order results are reported in is the queue's, not the finish's)."""
    recorder = Recorder(path, label="synthetic")
    workload = WorkloadInfo(name="saxpy", size={"n": 1024}, flops=2048.0, min_bytes=12288.0,
                            output_grid=[1024], atol=1e-5)
    recorder(SessionStarted(t=1.0, device=DeviceInfo(name="synthetic adapter"), workload=workload))
    recorder(GenerationStarted(t=1.0, generation=1, source="params"))
    for i in range(candidates):
        recorder(CandidateQueued(t=1.0, id=f"c{i}", name=f"cand-{i}", strategy="params",
                                 origin="synthetic", params={"tile": i % 64}))
    finished = range(0, candidates, finish_every) if finish_every else range(0)
    for i in reversed(finished):
        recorder(StageChanged(t=1.0, id=f"c{i}", stage="compiling"))
        recorder(CandidateFinished(t=1.0, result=_result(i)))
    ranked = [f"c{i}" for i in finished if i % 3 != 0]
    recorder(RankingReady(t=1.0, generation=1, ranked_ids=ranked, winner_id=ranked[0] if ranked else None))
    recorder(SessionFinished(t=1.0))
    return recorder.close()


def _replay_seconds(path: Path, mode: str) -> tuple[float, str]:
    """Wall time of ``vajra-tui replay FILE mode`` in this process, and what it printed."""
    out = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out):
        code = main(["replay", str(path), mode])
    assert code == 0
    return time.perf_counter() - start, out.getvalue()


@pytest.fixture(scope="module")
def recordings(tmp_path_factory) -> dict[int, Path]:
    folder = tmp_path_factory.mktemp("scale")
    return {n: make_recording(folder / f"r{n}.jsonl", n) for n in (20_000, 40_000, 50_000)}


def test_the_synthetic_recording_is_a_recording(recordings):
    """The generator writes what the Recorder writes: the reader accepts it, header and all."""
    recording = Recording(recordings[20_000])
    assert recording.header["format"] == "vajra-session"
    assert sum(1 for _ in recording) == 2 + 20_000 + 2 * 200 + 2


def test_headless_json_replay_of_50k_candidates_is_fast(recordings):
    seconds, printed = _replay_seconds(recordings[50_000], "--json")
    document = json.loads(printed)
    names = [r["name"] for r in document["results"]]
    assert names == [f"cand-{i}" for i in range(0, 50_000, FINISH_EVERY)], "results keep the order queued"
    assert seconds < 8.0, f"--json replay of 50k queued candidates took {seconds:.1f} s"


def test_headless_table_replay_of_50k_candidates_is_fast(recordings):
    seconds, printed = _replay_seconds(recordings[50_000], "--headless")
    assert "cand-49900" in printed
    assert seconds < 8.0, f"--headless replay of 50k queued candidates took {seconds:.1f} s"


def test_headless_replay_scales_linearly(recordings):
    """Twice the candidates, about twice the time (quadratic is four times).

    Each replay takes a tenth of a second here, so one scheduler stall on a loaded machine
    is as long as the measurement: the two sizes alternate, five times each, and each keeps
    its fastest (seen with three xdist workers on two cores: 0.09 s against 0.31 s, best of two
    taken one size after the other)."""
    small, large = float("inf"), float("inf")
    for _ in range(5):
        small = min(small, _replay_seconds(recordings[20_000], "--json")[0])
        large = min(large, _replay_seconds(recordings[40_000], "--json")[0])
    assert large < 3 * small, f"20k: {small:.2f} s, 40k: {large:.2f} s"


def test_run_state_folds_20k_candidates_in_bounded_time(recordings):
    events = list(Recording(recordings[20_000]))
    state = RunState()
    start = time.perf_counter()
    for event in events:
        state.apply(event)
    seconds = time.perf_counter() - start
    assert len(state.candidates) == 20_000 and state.events == len(events)
    assert list(state.candidates)[:3] == ["c0", "c1", "c2"]
    assert seconds < 3.0, f"folding 20k candidates took {seconds:.1f} s"


def test_run_state_reports_what_changed_since_a_version(recordings):
    """A screen asks for the candidates touched since its last redraw, not for all of them."""
    events = list(Recording(recordings[20_000]))
    state = RunState()
    for event in events[:-4]:  # up to the last finished candidate
        state.apply(event)
    seen = state.version
    for event in events[-4:]:
        state.apply(event)
    assert [v.id for v in state.changed_since(seen)] == ["c0"]
    assert len(state.changed_since(0)) == 20_000
    start = time.perf_counter()
    for _ in range(1000):  # a tick with nothing new costs nothing, however many candidates
        state.changed_since(state.version)
    assert time.perf_counter() - start < 0.5


def test_run_state_tick_is_cheap_with_many_candidates(recordings):
    """The ~15 Hz countdown tick visits the candidates with a deadline armed, not every one."""
    state = RunState()
    for event in Recording(recordings[20_000]):
        state.apply(event)
    start = time.perf_counter()
    for _ in range(3000):  # over three minutes of ticks at 15 Hz
        state.tick()
    assert time.perf_counter() - start < 0.5


PILOT = """
import asyncio, sys, time
from pathlib import Path
from textual import events as keys
from vajra_tui.engine.store.record import Recording
from vajra_tui.settings import Settings
from vajra_tui.tui.app import VajraApp

async def run(path):
    events = Recording(Path(path)).check()
    total = sum(1 for _ in events)
    app = VajraApp(Settings(), replay_events=events, replay_label="scale", speed=0)
    async with app.run_test(size=(120, 40)) as pilot:
        start = time.monotonic()
        if sys.argv[2] == "early":  # q in the middle of the replay, as a terminal sends it
            while app.state.events < 200 and time.monotonic() - start < 60:
                await asyncio.sleep(0.01)
            pressed = time.monotonic()
            app.post_message(keys.Key("q", "q"))
            while app.is_running and time.monotonic() - pressed < 60:
                await asyncio.sleep(0.05)
            print("quit", round(time.monotonic() - pressed, 2), app.state.events, flush=True)
            return
        while app.state.events < total and time.monotonic() - start < 60:
            await asyncio.sleep(0.05)
        print("folded", app.state.events, total, round(time.monotonic() - start, 2), flush=True)
        pressed = time.monotonic()
        await pilot.press("v")
        await pilot.press("g")
        await pilot.press("q")
        while app.is_running and time.monotonic() - pressed < 60:
            await asyncio.sleep(0.05)
        print("quit", round(time.monotonic() - pressed, 2), app.current, flush=True)

asyncio.run(run(sys.argv[1]))
"""


QUIT_S = 20  # a frozen app never quits (the pilot gives up at 60 s); a busy 2-core box takes seconds


def _pilot(path: Path, mode: str) -> str:
    """Run the app on ``path`` in a child process with a hard timeout (a hang fails, never blocks)."""
    env = {**os.environ, "PYTHONPATH": child_pythonpath()}
    try:
        done = subprocess.run([sys.executable, "-c", PILOT, str(path), mode], capture_output=True,
                              text=True, timeout=120, env=env, cwd=ROOT)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the TUI on a 2k-candidate replay did not quit within 120 s: {exc.stdout!r}")
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def two_k(tmp_path_factory) -> Path:
    """~250 KB: 2000 queued candidates, none finished (the recording of the report)."""
    return make_recording(tmp_path_factory.mktemp("tui") / "two-k.jsonl", 2000, finish_every=0)


@pytest.fixture(scope="module")
def two_k_finished(tmp_path_factory) -> Path:
    """2000 candidates that all finish: every row of the list changes after it was added."""
    return make_recording(tmp_path_factory.mktemp("tui") / "two-k-done.jsonl", 2000, finish_every=1)


def test_tui_quits_on_q_in_the_middle_of_a_2k_replay(two_k):
    printed = _pilot(two_k, "early")
    quit_seconds = float(printed.split("quit ")[1].split()[0])
    assert quit_seconds < QUIT_S, f"q took {quit_seconds} s to quit"


@pytest.mark.parametrize("which", ["two_k", "two_k_finished"])
def test_tui_replays_2k_candidates_and_quits_on_q(which, request):
    """The app plays a 2k-candidate recording through, then the screens and q answer at once."""
    printed = _pilot(request.getfixturevalue(which), "full")
    folded = printed.split("folded ")[1].split()
    # finished inside the pilot's 60 s: the quadratic fold this guards against took minutes;
    # how fast it folds is benchmarks' business, not a bound a loaded machine could miss
    assert folded[0] == folded[1], f"replay did not finish within 60 s: {printed}"
    quit_seconds = float(printed.split("quit ")[1].split()[0])
    assert quit_seconds < QUIT_S, f"q took {quit_seconds} s to quit"
