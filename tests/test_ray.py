"""``tune --ray`` and ``fleet`` on a real local Ray cluster of two simulated nodes.

Both nodes run on this machine and see the same adapters (lavapipe), so each node gives
one lane: two actors, each pinned to its node, each with its own GPU worker. Ray starts
once for the whole file (one session fixture, a few seconds); every run is the smallest
that still shows the behaviour (softmax 32x256, generation 1 only), the cluster's adapters
are discovered once for the tests that build their own lanes, and no crown is judged in a
browser (none of these tests is about that verdict).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import os
import re
import sys
from pathlib import Path

import pytest

from conftest import on_first_verification
from vajra_tui.cli.main import main
from vajra_tui.engine.events import Notice
from vajra_tui.engine.gpu.protocol import Hello, Prepare
from vajra_tui.engine.scale.ray_lanes import LaneServer, shipped_file

FAST = ["--size", "32x256", "--reps", "3", "--warmup", "1", "--generations", "0", "--budget", "2"]


def _ray():
    return pytest.importorskip("ray", reason="Ray is optional: pip install 'ray>=2.60'")



def _cli(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    return code, out.getvalue()


# ---- without a cluster (these run first: the fixture below connects this process) ------
def test_without_ray_installed_the_cli_says_how_to_get_it(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    code, _ = _cli(["tune", "-w", "softmax", *FAST, "--source", "library", "--ray", "auto", "-q"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0 and "pip install 'ray>=2.60'" in err
    assert "pipx inject vajra-tui 'ray>=2.60'" in err


def test_an_unreachable_cluster_is_one_line(capsys):
    ray = _ray()
    if ray.is_initialized():
        pytest.skip("this process is already connected to a cluster")
    code, _ = _cli(["fleet", "-w", "softmax", "--ray", "127.0.0.1:1", "-q"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0 and "cannot reach the Ray cluster" in err


def test_a_workload_file_travels_to_a_node_that_lacks_it(tmp_path):
    """The node writes the shipped bytes to a folder of its own and imports them from there."""
    mine = tmp_path / "mine.py"
    mine.write_text("WORKLOAD = None  # stands for a user's file\n")
    request = Prepare(workload=f"{mine}:OTHER", size={}, seeds=[])
    shipped = shipped_file(request)
    assert shipped is not None and shipped.data == mine.read_bytes()
    server = LaneServer.__new__(LaneServer)  # no GPU worker needed for this step
    server.shipped = tmp_path / "node"
    mine.unlink()  # "another node": the path does not exist there
    local = server._localized(request, shipped)
    path, attr = local.workload.rsplit(":", 1)
    # the worker gets a Prepare naming the node's copy; the bytes travel beside it, never inside
    assert attr == "OTHER" and path.startswith(str(tmp_path / "node")) and not hasattr(local, "data")
    assert open(path, "rb").read() == shipped.data


# ---- on a two-node cluster ----------------------------------------------------------------
@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """Two one-CPU nodes for this module's tests, shut down after them: an idle cluster's
    daemons kept busy the rest of a session (on an xdist worker, the rest of its modules)."""
    ray = _ray()
    from ray.cluster_utils import Cluster

    base = tmp_path_factory.getbasetemp()  # the actors' processes inherit the raylets' environment:
    for key, folder in (("VAJRA_CACHE_DIR", "cache"), ("VAJRA_DATA_DIR", "data"), ("VAJRA_CONFIG_DIR", "config")):
        os.environ[key] = str(base / folder)  # the tests' own folders, never the user's
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    c.add_node(num_cpus=1)
    ray.init(address=c.address, log_to_driver=False, logging_level=logging.ERROR)
    c.wait_for_nodes()
    yield c
    ray.shutdown()
    c.shutdown()


@pytest.fixture(scope="module")
def node_adapters(cluster) -> list:
    """Both nodes' adapters, discovered once (a task pinned to each node lists its adapters in
    a child process: seconds each). The tests that build their own lanes only read this list;
    discovery itself is exercised by the CLI tests, which discover on their own."""
    import ray

    from vajra_tui.engine.scale.ray_cluster import discover

    adapters, problems = discover(ray)
    assert adapters and not problems, problems
    return adapters


def test_tune_spreads_batches_over_both_nodes(cluster):
    code, out = _cli(["tune", "-w", "softmax", *FAST, "--source", "library", "--ray", cluster.address,
                      "--json", "-q", "--no-cache"])
    assert code == 0
    doc = json.loads(out)
    labels = [lane["label"] for lane in doc["lanes"]]
    # every adapter of both nodes: one each on lavapipe; simulated nodes on a 2-GPU host both
    # see the host's two GPUs (a real cluster's nodes are separate hosts)
    nodes = {label.split("/")[0] for label in labels}
    assert len(nodes) == 2 and len(labels) % 2 == 0
    assert all(label.startswith("node-") and re.search(r"/gpu\d+$", label) for label in labels)
    # every lane started and timed its own baseline; the candidates went to both nodes (a
    # generation of three has a lane with nothing to time where the two nodes hold four)
    assert all(lane["batches"] >= 1 and lane["baseline_median_ms"] > 0 for lane in doc["lanes"])
    per_node = {node: sum(lane["timed"] for lane in doc["lanes"] if lane["label"].startswith(node + "/"))
                for node in nodes}
    assert all(count >= 1 for count in per_node.values()), per_node
    timed_candidates = [r for r in doc["results"] if r["status"] == "verified" and r["strategy"] != "baseline"]
    assert timed_candidates and sum(per_node.values()) >= len(timed_candidates)
    assert doc["final_lane"] == labels[0] and (doc["winner"] or doc["baseline_won"])  # a verdict, whoever won
    # the shoot-out: one batch on the first lane, the baseline in it; a kernel it did not time
    # again (one that may not be crowned, and is not the fastest) keeps its own batch and lane
    final = [r for r in doc["results"] if r["status"] == "verified" and r["batch"] == doc["final_batch"]]
    assert "baseline" in [r["name"] for r in final] and {r["lane"] for r in final} == {labels[0]}


def test_killing_an_actor_mid_run_costs_only_its_in_flight_work(node_adapters):
    import ray

    from vajra_tui.engine.scale.lanes import LaneTuner
    from vajra_tui.engine.scale.ray_cluster import build_lanes
    from vajra_tui.engine.session import Session
    from vajra_tui.engine.sources.library import LibrarySource
    from vajra_tui.engine.workloads import get_workload
    from vajra_tui.settings import TimingSettings

    lanes = build_lanes(ray, node_adapters)
    events: list = []
    workload = get_workload("softmax")
    session = Session(workload, workload.size("32x256"), lanes[0], events.append, TimingSettings(warmup=1, reps=3))
    tuner = LaneTuner(session, lanes, LibrarySource(), budget=2)
    # the second node's actor dies while it verifies a candidate
    killed = on_first_verification(tuner.sessions[1], lambda: ray.kill(lanes[1].actor, no_restart=True))
    try:
        ranked = asyncio.run(tuner.run(0))
    finally:
        tuner.close()
    assert killed, "the second lane never verified a candidate"
    lost = tuner.board.infos[1]
    assert lost.state == "lost" and killed[0] in [c.id for c in tuner.session.candidates.values()
                                                   if c.name in lost.lost]
    assert tuner.board.infos[0].state != "lost"
    assert any(isinstance(e, Notice) and e.message.startswith(f"{lanes[1].label} lost:") and
               f"retried once on {lanes[0].label}" in e.message for e in events)
    victim = tuner.session.results[killed[0]]
    assert victim.status == "verified" and victim.lane == lanes[0].label  # retried once, elsewhere
    assert all(r.status != "crashed" for r in tuner.session.results.values())  # nothing else lost
    # a verdict, whoever wins it (a loaded machine can make the baseline win): the victim's
    # candidates were re-run, and the final ranking holds one batch, the baseline in it
    ranking = tuner.session.last_ranking
    assert ranking is not None and "baseline" in [r.id for r in ranking.ranked]
    assert {r.batch for r in ranking.ranked} == {tuner.session.results["baseline"].batch}
    lost_ids = [c.id for c in tuner.session.candidates.values() if c.name in lost.lost]
    assert lost_ids and all(cid in tuner.session.results for cid in lost_ids)  # each has its verdict
    if ranking.winner is None:
        assert ranking.baseline_won and ranked == [], ranking.headline
    else:
        assert ranked and ranked[0] is ranking.winner


def _in_generation(session, generation: int, action, seen: list) -> None:
    """Call ``action()`` once ``session`` starts ``generation``; every event goes to ``seen``."""
    from vajra_tui.engine.events import GenerationStarted

    forward = session._sink

    def sink(event) -> None:
        seen.append(event)
        forward(event)
        if isinstance(event, GenerationStarted) and event.generation == generation:
            action()

    session._sink = sink


def test_the_only_lane_killed_mid_run_still_reports_the_finished_generation(node_adapters, monkeypatch, capsys):
    """kill -9 of the one lane's actor in generation 2: exit 1 with one line naming the loss, the
    JSON of generation 1 (marked incomplete), and a notice that does not claim a retry elsewhere."""
    import ray

    from vajra_tui.cli import commands
    from vajra_tui.engine.run import builder
    from vajra_tui.engine.scale.ray_cluster import build_lanes

    lanes = build_lanes(ray, node_adapters[:1])
    seen: list = []
    killed: list[list[str]] = []  # the hit list of on_first_verification, once generation 2 starts
    make_tuner = builder._tuner

    def armed(request, session, *rest):
        tuner = make_tuner(request, session, *rest)
        kill = lambda: ray.kill(lanes[0].actor, no_restart=True)  # noqa: E731
        _in_generation(session, 2, lambda: killed.append(on_first_verification(session, kill)), seen)
        return tuner

    monkeypatch.setattr(builder, "_tuner", armed)
    monkeypatch.setattr(commands, "_placement", lambda args: builder.Placement(lanes=lanes))
    argv = ["tune", "-w", "softmax", "--size", "32x256", "--reps", "3", "--warmup", "1", "--generations", "1",
            "--budget", "3", "--source", "library", "--json", "-q", "--no-cache"]
    code, out = _cli(argv)
    err = capsys.readouterr().err.strip()
    assert killed and killed[0], "generation 2 never verified a candidate"
    assert code == 1 and err.count("\n") == 0 and "every GPU lane was lost" in err, err
    assert "generation 1, the last one finished" in err
    doc = json.loads(out)
    assert "every GPU lane was lost" in doc["incomplete"] and doc["generations"] == 1
    assert doc["lanes"][0]["state"] == "lost" and doc["final_batch"] is not None
    assert bool(doc["winner"]) != doc["baseline_won"] and bool(doc["ranking"]) == bool(doc["winner"])  # whoever won
    assert any(r["status"] == "verified" and r["strategy"] != "baseline" for r in doc["results"])
    lost = [e.message for e in seen if isinstance(e, Notice) and e.message.startswith(f"{lanes[0].label} lost:")]
    assert lost and all("elsewhere" not in m and "another lane" not in m for m in lost), lost
    assert any("no other lane to retry on" in m for m in lost), lost


async def test_a_hung_kernel_is_killed_by_the_watchdog_on_its_own_node(node_adapters):
    """The deadline is kept by the actor's client, next to the GPU: a timeout, then a fresh worker."""
    import ray

    from vajra_tui.engine.candidate import Candidate
    from vajra_tui.engine.scale.ray_cluster import build_lanes
    from vajra_tui.engine.session import Session
    from vajra_tui.engine.workloads import get_workload
    from vajra_tui.settings import TimingSettings

    lane = build_lanes(ray, node_adapters[-1:])[0]  # the second node's adapter
    workload = get_workload("sgemm")
    session = Session(workload, workload.size("128x96x40"), lane, lambda e: None,
                      TimingSettings(warmup=1, reps=3, deadline_s=3))
    try:
        await session.start()
        await session.run_baseline(time=False)
        before = (await lane.request(Hello(), 30)).pid
        hang = (Path(__file__).parent / "kernels" / "hang.wgsl").read_text()
        await session.evaluate([Candidate(id="hang", name="hang", strategy="user", origin="test", source=hang)])
        assert session.results["hang"].status == "timeout"
        assert (await lane.request(Hello(), 30)).pid != before  # the node replaced its worker
    finally:
        lane.close()


def test_fleet_tunes_each_device_model_into_one_lockfile(cluster, tmp_path, capsys):
    """``--backends vulkan,gl``: lavapipe and llvmpipe-on-OpenGL are two device models here."""
    lock_path = tmp_path / "fleet.lock.json"
    code, out = _cli(["fleet", "-w", "softmax", *FAST, "--ray", cluster.address, "--backends", "vulkan,gl",
                      "--out", str(lock_path), "--json", "-q"])
    assert code == 0
    doc = json.loads(out)
    models = [d["model"] for d in doc["devices"]]
    assert sorted(m.split("(")[-1] for m in models) == ["OpenGL)", "Vulkan)"]
    assert all(len({lane.split("/")[0] for lane in d["lanes"]}) == 2 for d in doc["devices"])  # both nodes
    tuned = [d for d in doc["devices"] if not d["error"]]
    assert all(d["baseline_ms"] for d in tuned) and any("Vulkan" in d["model"] for d in tuned)
    if all(d["device"]["software"] for d in doc["devices"]):
        assert len(tuned) == 2  # lavapipe computes on both backends
    else:  # a GPU's OpenGL view may not run compute: its row says why, the others go on
        assert all(d["error"] for d in doc["devices"] if d not in tuned)
    lock = json.loads(lock_path.read_text())
    assert lock["schema"] == "vajra.lock" and len(lock["entries"]) == len(tuned)
    assert len({e["device"]["key"] for e in lock["entries"]}) == len(tuned)  # an entry per device
    assert {e["device"]["backend"] for e in lock["entries"]} == {d["device"]["backend"] for d in tuned}
    from vajra_tui.cli.fleet import print_comparison

    print_comparison(doc)
    table = capsys.readouterr().out
    assert "across the fleet" in table and "winner" in table and "fastest:" in table
    code, _ = _cli(["fleet", "-w", "softmax", "--ray", cluster.address, "--out", str(lock_path), "-q"])
    assert code == 2 and "exists" in capsys.readouterr().err  # never overwritten without --force
