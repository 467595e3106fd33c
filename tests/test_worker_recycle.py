"""A worker that grew is replaced off the critical path: its successor is started and
prepared in the background while it serves on, and swapped in between two requests."""

from __future__ import annotations

import time

import pytest

from conftest import process_alive
from vajra_tui.engine.admission.contract import stitch
from vajra_tui.engine.gpu import client as client_module
from vajra_tui.engine.gpu.client import GPUClient
from vajra_tui.engine.gpu.protocol import Compile, Drop, Hello, Prebuild, PrebuildItem, Prepare, Verify
from vajra_tui.engine.workloads import get_workload

SOFTMAX = get_workload("softmax")
BIG, SMALL = SOFTMAX.size("64x256"), SOFTMAX.size("32x128")  # the second smaller in every dim


def _prepare(c: GPUClient, size: dict[str, int]) -> None:
    c.request_blocking(Prepare(workload="softmax", size=size, seeds=[1, 2]), 120)
    st = stitch(SOFTMAX, size, SOFTMAX.baseline)
    assert c.request_blocking(Compile(cid="baseline", source=st.source, dispatch=list(st.dispatch)), 60).compiled


def _baseline_passes(c: GPUClient) -> bool:
    return c.request_blocking(Verify(cid="baseline", seed=2), 30).passed


def _grow(c: GPUClient, size: dict[str, int]) -> float:
    """Candidates built and dropped until one drop finds the worker grown (RECYCLE_MB is
    tiny); the seconds that drop took."""
    for i in range(6):
        st = stitch(SOFTMAX, size, SOFTMAX.baseline + f"\n// candidate {i}\n")
        assert c.request_blocking(Compile(cid=f"c{i}", source=st.source, dispatch=list(st.dispatch)), 60).compiled
        began = time.monotonic()
        c.request_blocking(Drop(cid=f"c{i}"), 30)
        took = time.monotonic() - began
        if c._standby is not None:
            return took
    raise AssertionError("no drop found the worker grown")


@pytest.fixture
def client(monkeypatch):
    monkeypatch.setattr(client_module, "RECYCLE_MB", 1e-6)
    c = GPUClient()
    c.start()
    _prepare(c, BIG)
    yield c
    c.close()


def test_a_grown_worker_is_swapped_between_requests_without_a_stall(client):
    old = client.pid
    took = _grow(client, BIG)
    standby = client._standby
    # the drop did not wait for a worker to start: the old one still serves, unreplaced
    assert not standby.ready.is_set() and took < 1.0, took
    assert client.request_blocking(Hello(), 30).pid == old and _baseline_passes(client)
    assert client.recycles == 0 and client._standby is standby
    assert standby.ready.wait(60) and standby.conn is not None
    new = standby.proc.pid
    assert client.request_blocking(Hello(), 30).pid == new != old  # the next request: the new worker
    assert client.pid == new and client.recycles == 1 and client.restarts == 0
    assert client._standby is None and not process_alive(old)  # the old one quit and was reaped
    assert _baseline_passes(client)  # compiled before the swap, replayed into the new worker


@pytest.mark.parametrize("ready", [False, True], ids=["starting", "ready"])
def test_close_leaves_neither_worker_nor_standby_behind(client, ready):
    old = client.pid
    _grow(client, BIG)
    standby = client._standby
    deadline = time.monotonic() + 10
    while standby.proc is None:  # the standby's process exists as soon as it is spawned
        assert time.monotonic() < deadline
        time.sleep(0.01)
    if ready:
        assert standby.ready.wait(60) and standby.conn is not None
    else:
        assert not standby.ready.is_set()
    client.close()
    assert not process_alive(old) and not process_alive(standby.proc.pid)
    assert client.pid is None and client._standby is None and not standby._thread.is_alive()


def test_a_new_prepare_discards_a_stale_standby(client):
    old = client.pid
    _grow(client, BIG)
    stale = client._standby
    _prepare(client, SMALL)  # a new workload size while the standby (prepared for BIG) starts
    assert client._standby is None and stale.ready.wait(10)
    assert stale.proc is None or not process_alive(stale.proc.pid)
    # no swap: the same worker serves the new size (a stale swap would fail this verify)
    assert _baseline_passes(client) and client.pid == old and client.recycles == 0
    _grow(client, SMALL)
    standby = client._standby  # the next growth's standby: prepared for SMALL
    assert standby.ready.wait(60) and standby.conn is not None
    assert _baseline_passes(client) and client.pid == standby.proc.pid != old
    assert client.recycles == 1


def test_no_swap_while_a_batch_is_being_built(client):
    """Between a prebuild and its drop the old worker holds the pipelines being built for the
    compiles to come; a swap then made every compile of a 48-kernel batch on an H200 serial
    (34 s instead of 2). The standby waits for the batch's drop."""
    old = client.pid
    _grow(client, BIG)
    assert client._standby.ready.wait(60)
    batch = [stitch(SOFTMAX, BIG, SOFTMAX.baseline + f"\n// batch {i}\n") for i in range(3)]
    client.request_blocking(Prebuild(items=[PrebuildItem(source=st.source, constants={}) for st in batch]), 60)
    for i, st in enumerate(batch):
        reply = client.request_blocking(Compile(cid=f"b{i}", source=st.source, dispatch=list(st.dispatch)), 60)
        assert reply.compiled and reply.reused, reply  # found prebuilt: the same worker
        assert client.request_blocking(Hello(), 30).pid == old
    client.request_blocking(Drop(cids=[f"b{i}" for i in range(3)]), 30)
    assert client.request_blocking(Hello(), 30).pid != old and client.recycles == 1
    assert _baseline_passes(client)
