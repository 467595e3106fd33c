"""A shoot-out finds its finalists' pipelines still built.

A generation drops far more kernels than the few recent pipelines a worker keeps, so
without being told which kernels are finalists the worker had let them go, and each
shoot-out rebuilt them (seconds each for an unrolled kernel on NVIDIA)."""

from __future__ import annotations

import asyncio

from vajra_tui.engine.admission.contract import stitch
from vajra_tui.engine.events import CandidateResult
from vajra_tui.engine.gpu.client import GPUClient
from vajra_tui.engine.gpu.protocol import Compile, Drop, Prepare
from vajra_tui.engine.sources.library import LibrarySource
from vajra_tui.engine.session import Session
from vajra_tui.engine.tune import Tuner
from vajra_tui.engine.workloads import get_workload
from vajra_tui.settings import TimingSettings

SOFTMAX = get_workload("softmax")
SIZE = SOFTMAX.size("32x128")


def _variant(i: int) -> dict:
    st = stitch(SOFTMAX, SIZE, SOFTMAX.baseline + f"\n// variant {i}\n")
    return {"source": st.source, "dispatch": list(st.dispatch)}


def test_a_finalist_outlives_a_batch_of_drops_and_goes_when_it_stops_being_one(gpu: GPUClient):
    gpu.request_blocking(Prepare(workload="softmax", size=SIZE, seeds=[1]), 120)
    variants = {f"v{i}": _variant(i) for i in range(12)}
    for cid, v in variants.items():
        assert gpu.request_blocking(Compile(cid=cid, **v), 60).compiled
    gpu.request_blocking(Drop(cids=list(variants), keep=["v1"]), 30)

    again = gpu.request_blocking(Compile(cid="v1", **variants["v1"]), 60)
    assert again.compiled and not again.built, again  # the finalist was kept
    assert gpu.request_blocking(Compile(cid="v0", **variants["v0"]), 60).built  # pushed out by 11 drops

    gpu.request_blocking(Drop(cids=["v0", "v1"], keep=[]), 30)  # no longer finalists: they join the recent few
    for i in range(12, 24):  # ... and go as later kernels are dropped
        v = _variant(i)
        gpu.request_blocking(Compile(cid=f"v{i}", **v), 60)
        gpu.request_blocking(Drop(cids=[f"v{i}"], keep=[]), 30)
    assert gpu.request_blocking(Compile(cid="v1", **variants["v1"]), 60).built


class _Counting(GPUClient):
    """The real worker; the parent notes which compile requests had to build a pipeline."""

    def __init__(self) -> None:
        super().__init__()
        self.compiles: list[tuple[str, bool]] = []

    def request_blocking(self, request, timeout):
        reply = super().request_blocking(request, timeout)
        if isinstance(request, Compile):
            self.compiles.append((request.cid, reply.built))
        return reply


def test_every_finalist_of_a_shootout_is_found_built():
    client = _Counting()
    session = Session(SOFTMAX, SIZE, client, lambda e: None, TimingSettings(warmup=1, reps=2), seeds=(1,))

    async def run() -> list[CandidateResult]:
        tuner = Tuner(session, LibrarySource(), budget=12)
        try:
            await tuner.start()
            await tuner.first_generation()
            before = len(client.compiles)
            tuner._provisional = True  # a generation without its shoot-out, as `--shootout last` runs
            await tuner.evolve()
            tuner._provisional = False
            client.compiles.clear()
            assert session.finalist_ids()
            ranking = await session.shootout(tuner.generation)
            return before, ranking
        finally:
            client.close()

    before, ranking = asyncio.run(run())
    assert before > 0 and ranking.ranked
    rebuilt = [cid for cid, built in client.compiles if built]
    assert client.compiles and not rebuilt, client.compiles
