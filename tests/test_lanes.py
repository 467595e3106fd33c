"""Several GPU workers in one tune: whole batches per lane, one shoot-out lane, faults as events.

Two lanes on the one real adapter (``--gpus 0,0``) exercise everything but the hardware:
two worker processes, two sessions with their own baselines, and a worker killed for real.
No crown is judged in a browser here: none of these tests is about that verdict.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import signal
import time

import pytest

from conftest import kernel, on_first_verification
from vajra_tui.cli.main import main
from vajra_tui.engine.events import (
    CandidateFinished, LanesUpdated, Notice, RankingReady,
)
from vajra_tui.engine.gpu.client import GPUClient
from vajra_tui.engine.store.record import read_recording
from vajra_tui.engine.scale.lanes import LaneTuner
from vajra_tui.engine.session import Session
from vajra_tui.engine.sources.library import LibrarySource
from vajra_tui.engine.workloads import get_workload
from vajra_tui.settings import TimingSettings


FAST = ["--size", "32x256", "--source", "library", "--reps", "3", "--warmup", "1"]



@pytest.fixture(scope="module")
def lanes_run(tmp_path_factory) -> tuple[dict, list, object]:
    """One ``tune --gpus 0,0`` (two workers on the one adapter), recorded."""
    record = tmp_path_factory.mktemp("lanes") / "lanes.jsonl"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["tune", "-w", "softmax", *FAST, "--generations", "1", "--budget", "4", "--gpus", "0,0",
                     "--json", "-q", "--record", str(record)])
    assert code == 0
    _, events = read_recording(record)  # a recording like any other: it opens with the session
    return json.loads(out.getvalue()), events, record


def test_gpus_spreads_batches_and_says_which_lane_timed_what(lanes_run):
    doc, events, _ = lanes_run
    assert [lane["label"] for lane in doc["lanes"]] == ["gpu0", "gpu0.2"]
    assert all(lane["adapter_index"] == 0 and lane["baseline_median_ms"] > 0 for lane in doc["lanes"])
    assert doc["baseline_spread"] >= 1.0 and doc["final_lane"] == "gpu0"
    assert all(lane["timed"] >= 1 for lane in doc["lanes"])  # both lanes measured candidates
    finished = [e.result for e in events if isinstance(e, CandidateFinished) and e.result.status == "verified"]
    by_batch: dict[int, set[str]] = {}
    for r in finished:
        by_batch.setdefault(r.batch, set()).add(r.lane)
    assert all(len(lanes) == 1 for lanes in by_batch.values())  # a batch never mixes lanes
    assert {"gpu0", "gpu0.2"} <= {r.lane for r in finished}
    final = [e for e in events if isinstance(e, RankingReady) and e.final][-1]
    in_final = [r for r in finished if r.batch == final.batch]
    assert in_final and {r.lane for r in in_final} == {"gpu0"}  # the shoot-out: one adapter
    results = {r["name"]: r for r in doc["results"]}
    assert results["baseline"]["lane"] == "gpu0" and results["baseline"]["batch"] == final.batch
    assert any(isinstance(e, LanesUpdated) and e.timing == ["gpu0.2"] for e in events)
    assert sum(isinstance(e, CandidateFinished) and e.result.id == "baseline" and e.result.lane == "gpu0.2"
               for e in events) == 0  # a second lane's baseline is its own, not the report's


def fastest_of_the_final_batch(doc: dict) -> dict:
    """The winner, or, where the baseline won (a loaded machine can make it so), the fastest
    candidate of the shoot-out's batch: the engine guarantees a verdict, not who wins it."""
    final = [r for r in doc["results"] if r["status"] == "verified" and r["batch"] == doc["final_batch"]]
    assert any(r["name"] == "baseline" for r in final), "the shoot-out timed the baseline beside its finalists"
    barred = doc.get("fastest_here")  # faster, but not crownable (e.g. subgroups not asked for)
    candidates = sorted((r for r in final if r["name"] not in ("baseline", barred)), key=lambda r: r["median_ms"])
    assert candidates, "the shoot-out timed no crownable candidate"
    if doc["winner"] is not None:
        assert not doc["baseline_won"] and doc["winner"] == candidates[0]["name"]  # the fastest, by name
    else:
        assert doc["baseline_won"], doc["headline"]
    return candidates[0]


def test_the_lockfile_says_which_adapter_and_lane_timed_the_winner(lanes_run, tmp_path, capsys):
    doc, _, record = lanes_run
    chosen = fastest_of_the_final_batch(doc)
    assert main(["export", str(record), "--kernel", chosen["name"], "--out", str(tmp_path / "out")]) == 0
    lock = json.loads((tmp_path / "out" / "vajra.lock.json").read_text())
    device = lock["entries"][0]["device"]
    assert device["adapter_index"] == 0 and device["lane"] == "gpu0" and device["adapter"].startswith("#0 ")


@pytest.mark.parametrize("restart_fails", [True, False], ids=["lane-lost", "worker-restarted"])
def test_a_lane_whose_worker_dies_loses_only_its_batch(restart_fails):
    """Kill lane 2's worker while it verifies a candidate (and, first, make its restart fail)."""
    events: list = []
    lanes = [GPUClient(0, label="gpu0"), GPUClient(0, label="gpu0.2")]
    workload = get_workload("softmax")
    timing = TimingSettings(warmup=1, reps=3)
    session = Session(workload, workload.size("32x256"), lanes[0], events.append, timing)
    tuner = LaneTuner(session, lanes, LibrarySource(), budget=3)

    def sabotage() -> None:
        if restart_fails:
            lanes[1].prefer = "99"  # no such adapter: the restart fails, the lane is gone
        os.kill(lanes[1].pid, signal.SIGKILL)

    killed = on_first_verification(tuner.sessions[1], sabotage)
    try:
        ranked = asyncio.run(tuner.run(0))
    finally:
        tuner.close()
    assert killed, "lane 2 never verified a candidate"
    second_lane = tuner.board.infos[1]
    notices = [e.message for e in events if isinstance(e, Notice)]
    if restart_fails:
        assert second_lane.state == "lost" and second_lane.lost and tuner.board.infos[0].state != "lost"
        assert any(m.startswith("gpu0.2 lost:") and "retried once on gpu0" in m for m in notices)
    else:  # the lane lives on; only the candidate under the kill was tried again, elsewhere
        assert second_lane.state != "lost"
        assert any(m.startswith("gpu0.2: retrying") and "once on gpu0 " in m for m in notices)
    victim = tuner.session.results[killed[0]]
    assert victim.status == "verified" and victim.lane == "gpu0"  # retried once, on the other lane
    assert all(r.status != "crashed" for r in tuner.session.results.values())
    assert_a_verdict(tuner.session, ranked, events)  # the run went on to its verdict, whoever won it


def assert_a_verdict(session, ranked: list, events: list) -> None:
    """What a tune guarantees at its end, whoever wins: a final ranking of one batch (the
    shoot-out: finalists beside one baseline sample), and a winner list that is empty only
    when the baseline won, else led by the fastest kernel of that batch."""
    final = [e for e in events if isinstance(e, RankingReady)][-1]
    ranking = session.last_ranking
    assert final.final and ranking is not None and final.ranked_ids == [r.id for r in ranking.ranked]
    batch = session.results["baseline"].batch
    assert final.batch == batch and {r.batch for r in ranking.ranked} == {batch}
    assert all(r.status == "verified" for r in ranking.ranked) and "baseline" in final.ranked_ids
    if ranking.winner is None:
        assert ranking.baseline_won and ranked == [], final.headline
    else:
        crownable = [r for r in ranking.ranked if r is not ranking.fastest]  # fastest: barred by --limits
        assert ranked[0] is ranking.winner and ranking.winner.median_ms == min(r.median_ms for r in crownable)


def test_the_only_lane_lost_in_generation_two_keeps_generation_one():
    """One lane, its worker killed in generation 2 and its restart failing: the run stops with
    ``LanesLost`` carrying generation 1's ranking; no notice claims a retry on another lane."""
    from vajra_tui.engine.events import GenerationStarted
    from vajra_tui.engine.scale.lanes import LanesLost

    events: list = []
    lane = GPUClient(0, label="gpu0")
    workload = get_workload("softmax")
    session = Session(workload, workload.size("32x256"), lane, events.append, TimingSettings(warmup=1, reps=3))
    tuner = LaneTuner(session, [lane], LibrarySource(), budget=3)
    killed: list[list[str]] = []

    def sabotage() -> None:
        lane.prefer = "99"  # no such adapter: the restart fails, the lane is gone
        os.kill(lane.pid, signal.SIGKILL)

    forward = session._sink

    def sink(event) -> None:
        forward(event)
        if isinstance(event, GenerationStarted) and event.generation == 2:
            killed.append(on_first_verification(session, sabotage))

    session._sink = sink
    try:
        with pytest.raises(LanesLost, match="every GPU lane was lost") as caught:
            asyncio.run(tuner.run(1))
    finally:
        tuner.close()
    assert killed and killed[0], "generation 2 never verified a candidate"
    assert caught.value.generation == 1
    kept = [e for e in events if isinstance(e, RankingReady) and e.generation == 1 and e.final][-1]
    if kept.winner_id is None:  # generation 1's verdict, whoever won it: the baseline, on a loaded machine
        assert kept.baseline_won and caught.value.ranked == [], kept.headline
    else:
        assert [r.id for r in caught.value.ranked][:1] == [kept.winner_id]
    assert "generation 1, the last one finished" in str(caught.value)
    lost = [e.message for e in events if isinstance(e, Notice) and e.message.startswith("gpu0 lost:")]
    assert lost and "no other lane to retry on" in lost[0] and "elsewhere" not in lost[0], lost


async def test_the_screens_show_the_lanes_and_which_one_times(lanes_run):
    from vajra_tui.tui.app import VajraApp
    from vajra_tui.settings import Settings
    from vajra_tui.tui.widgets.lanes import lanes_text

    _, events, _ = lanes_run
    timing = next(e for e in events if isinstance(e, LanesUpdated) and e.timing == ["gpu0.2"])
    line = lanes_text(timing).plain
    assert line.startswith("Lanes ") and "▶gpu0.2#0" in line and "·gpu0#0" in line
    app = VajraApp(Settings(), replay_events=events, replay_label="lanes", speed=0)
    async with app.run_test(size=(80, 24)) as pilot:
        deadline = time.monotonic() + 30
        while app.state.events < len(events):
            assert time.monotonic() < deadline, "the replay did not finish"
            await pilot.pause(0.05)
        await pilot.press("b")
        await pilot.pause(0.2)
        shown = str(app.screen.query_one("#baseline-device").render())
        assert "Lanes" in shown and "gpu0.2#0" in shown and "spread" in shown
        await pilot.press("v")
        await pilot.pause(0.2)
        assert "gpu0.2#0" in str(app.screen.query_one("#variants-heading").render())
        await pilot.press("q")


async def test_the_tui_runs_on_two_lanes_live(tmp_path, monkeypatch):
    """``vajra-tui --gpus 0,0``: the live screens show both lanes, then e evolves on both."""
    from vajra_tui.tui.app import VajraApp
    from vajra_tui.settings import Settings

    monkeypatch.chdir(tmp_path)
    record = tmp_path / "tui.jsonl"
    app = VajraApp(Settings(timing=TimingSettings(warmup=1, reps=3)), workload="softmax", size="32x256",
                   source="library", record=record, gpus="0,0")

    async def until(condition, what: str) -> None:
        deadline = time.monotonic() + 90
        while not condition():
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            await pilot.pause(0.05)

    async with app.run_test(size=(80, 24)) as pilot:
        await until(lambda: app.adapter_info is not None, "the adapter probe")
        await pilot.press("enter")
        await until(lambda: app.driver is not None and app.driver.ready and not app.driver.busy, "generation 1")
        assert [lane.label for lane in app.state.lanes.lanes] == ["gpu0", "gpu0.2"]
        assert "gpu0.2#0" in str(app.screen.query_one("#variants-heading").render())
        await pilot.press("e")
        await until(lambda: app.state.generation == 2 and not app.driver.busy, "generation 2")
        assert app.state.ranking.generation == 2 and app.state.ranking.final
        await pilot.press("q")
        await until(lambda: record.exists(), "the recording")
    _, events = read_recording(record)
    lanes = {e.result.lane for e in events if isinstance(e, CandidateFinished) and e.result.batch}
    assert {"gpu0", "gpu0.2"} <= lanes


@pytest.fixture(scope="module")
def api_run_with_twins(tmp_path_factory: pytest.TempPathFactory) -> object:
    """One ``vajra_tui.tune(..., gpus="0,0")`` of generation 1, a user's kernel and its exact copy
    among the candidates: the API test and the duplicate test read the same run (each was a
    run of this shape of its own)."""
    import vajra_tui

    folder = tmp_path_factory.mktemp("twins")
    source = kernel("softmax_row.wgsl")
    first, copy = folder / "row.wgsl", folder / "row_copy.wgsl"
    first.write_text(source)
    copy.write_text(source)
    return vajra_tui.tune("softmax", [first, copy], size="32x256", source="library", generations=0,
                          warmup=1, reps=3, gpus="0,0")


def test_a_copy_dealt_with_its_twin_is_a_duplicate_across_lanes(api_run_with_twins):
    """Two lanes each know only their own kernels: a copy must land in its twin's batch,
    where it is called a duplicate instead of being compiled and timed a second time."""
    doc = api_run_with_twins.to_json()
    mine = [r for r in doc["results"] if r["strategy"] == "user"]
    assert sorted(r["status"] for r in mine) == ["duplicate", "verified"], [(r["name"], r["status"]) for r in mine]
    twin = next(r for r in mine if r["status"] == "duplicate")
    assert twin["duplicate_of"] == next(r for r in mine if r["status"] == "verified")["name"]


def test_the_python_api_tunes_on_several_lanes_and_refuses_a_bad_choice(api_run_with_twins):
    """``vajra_tui.tune(..., gpus=)`` is ``tune --gpus``: batches spread over the lanes, the
    report says which lane timed what; a choice that names no adapter is a ValueError."""
    import vajra_tui

    report = api_run_with_twins
    assert [lane.label for lane in report.lanes] == ["gpu0", "gpu0.2"]
    assert report.final_lane == "gpu0" and report.baseline_spread is not None
    assert all(lane.batches >= 1 and lane.baseline_median_ms for lane in report.lanes)
    assert sum(lane.timed for lane in report.lanes) >= 2  # generation 1 went to both lanes
    assert {r.lane for r in report.results if r.status == "verified" and r.batch} <= {"gpu0", "gpu0.2"}
    doc = report.to_json()
    assert [lane["label"] for lane in doc["lanes"]] == ["gpu0", "gpu0.2"] and doc["final_lane"] == "gpu0"
    with pytest.raises(ValueError, match="no adapter 7"):
        vajra_tui.tune("softmax", size="32x256", gpus="0,7")
