"""A finished run's worker waits idle for the next run of the process (gpu/idle.py): the
next tune skips the spawn and the device, and gets a worker holding nothing of the last."""

from __future__ import annotations

import time

import pytest

from conftest import process_alive

import vajra_tui
from vajra_tui.engine.admission.contract import stitch
from vajra_tui.engine.gpu import idle
from vajra_tui.engine.gpu.client import GPUClient
from vajra_tui.engine.gpu.protocol import Compile, Prepare, Verify
from vajra_tui.engine.workloads import get_workload

SOFTMAX = get_workload("softmax")
SIZE = SOFTMAX.size("32x128")


@pytest.fixture(autouse=True)
def parking(monkeypatch):
    monkeypatch.setenv("VAJRA_WORKER_IDLE_S", "30")
    idle.end_all()
    yield
    idle.end_all()



def _serve_softmax(client: GPUClient) -> None:
    client.request_blocking(Prepare(workload="softmax", size=SIZE, seeds=[1]), 120)
    st = stitch(SOFTMAX, SIZE, SOFTMAX.baseline)
    assert client.request_blocking(Compile(cid="baseline", source=st.source, dispatch=list(st.dispatch)), 60).compiled
    assert client.request_blocking(Verify(cid="baseline", seed=1), 60).passed


def test_the_next_client_takes_the_idle_worker() -> None:
    first = GPUClient()
    first.start()
    pid = first.pid
    _serve_softmax(first)
    first.close()
    assert idle.parked_pids() == [pid] and process_alive(pid)
    second = GPUClient()
    began = time.monotonic()
    second.start()
    assert second.pid == pid and idle.parked_pids() == []
    assert time.monotonic() - began < 2.0  # a hello, not a driver's start
    _serve_softmax(second)  # released, then prepared again: it serves as a new one would
    second.close()


def test_a_killed_worker_is_never_parked() -> None:
    client = GPUClient()
    client.start()
    pid = client.pid
    client.interrupt()
    client.close()
    assert idle.parked_pids() == []
    deadline = time.monotonic() + 10
    while process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not process_alive(pid)


def test_a_worker_started_otherwise_is_not_taken(monkeypatch) -> None:
    first = GPUClient()
    first.start()
    pid = first.pid
    first.close()
    monkeypatch.setenv("VAJRA_VERIFY", "cpu")  # the worker reads its judge at start
    second = GPUClient()
    second.start()
    newer = second.pid
    assert newer != pid and idle.parked_pids() == [pid]
    monkeypatch.setattr(idle, "MOST_PARKED", 1)
    second.close()  # parked too, and the older one makes room
    assert idle.parked_pids() == [newer]
    deadline = time.monotonic() + 10
    while process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not process_alive(pid)


def test_an_idle_worker_ends_on_its_own(monkeypatch) -> None:
    monkeypatch.setenv("VAJRA_WORKER_IDLE_S", "0.5")
    client = GPUClient()
    client.start()
    pid = client.pid
    client.close()
    assert idle.parked_pids() == [pid]
    deadline = time.monotonic() + 15
    while (process_alive(pid) or idle.parked_pids()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert idle.parked_pids() == [] and not process_alive(pid)


def test_zero_turns_parking_off(monkeypatch) -> None:
    monkeypatch.setenv("VAJRA_WORKER_IDLE_S", "0")
    client = GPUClient()
    client.start()
    client.close()
    assert idle.parked_pids() == []


def test_tunes_in_a_row_share_one_worker_and_each_verifies() -> None:
    """Two workloads of different buffers, one after the other in one process: the second
    runs on the first's worker, and its baseline and winner verify against its own data."""
    pids = []
    for name, size in (("softmax", "32x128"), ("gemv", "64x64")):
        report = vajra_tui.tune(name, size=size, source="library", generations=0, budget=2, warmup=1, reps=3)
        assert report.winner is not None or any(r.status == "verified" for r in report.results)
        assert all(r.status == "verified" for r in report.results if r.id == "baseline")
        pids.append(idle.parked_pids())
    assert pids[0] == pids[1] and len(pids[0]) == 1


def test_a_worker_started_in_another_folder_is_not_taken(monkeypatch, tmp_path) -> None:
    """A workload named by a relative path resolves in the worker's folder."""
    first = GPUClient()
    first.start()
    pid = first.pid
    first.close()
    monkeypatch.chdir(tmp_path)
    second = GPUClient()
    second.start()
    assert second.pid != pid
    second.close()
