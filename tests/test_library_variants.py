"""Issue #13's library variants: hoisted-clamp SGEMM (lay=1), conv1d runs sharing one X window
(run>1) and scalar sliding windows (slide>0), GEMV with several loads in flight (unroll>1). Each
verifies through the engine at its seed size and at an awkward size (size-specialised ones
through their general sibling), generation 1 picks them at large sizes on a big GPU, and
evolution reaches them from the configurations that won before they existed."""

from __future__ import annotations

import asyncio
import os
from typing import Iterator

import pytest

from vajra_tui.engine.candidate import GenerationContext
from vajra_tui.engine.admission.contract import prelude
from vajra_tui.engine.events import CandidateResult, DeviceInfo
from vajra_tui.engine.sources.library import LibrarySource, template
from vajra_tui.engine.gpu.client import GPUClient
from vajra_tui.engine.gpu.protocol import Drop
from vajra_tui.engine.session import Session
from vajra_tui.engine.wgsl.uniformity import Analysis
from vajra_tui.engine.workloads import WORKLOADS
from vajra_tui.settings import TimingSettings

os.environ.setdefault("VAJRA_CACHE_DIR", "/tmp/vcache-lib-tests")

# (workload, seed-size key, awkward size): the awkward run uses the general sibling
NEW = [
    ("sgemm", "sgemm/vec4 bm=128 bn=256 bk=8 tm=16 tn=8 db=1 spec=1 lay=1", "M=67,N=45,K=37"),
    ("sgemm", "sgemm/vec4 bm=128 bn=128 bk=8 tm=8 tn=8 db=1 spec=1 lay=1", "M=67,N=45,K=37"),
    ("sgemm", "sgemm/vec4 bm=64 bn=64 bk=16 tm=8 tn=4 db=0 spec=1 lay=1", "M=67,N=45,K=37"),
    ("conv1d", "conv1d/regs wg=256 groups=1 v4out=1 run=5", "N=5003,K=13"),
    ("conv1d", "conv1d/regs wg=128 groups=2 v4out=1 run=3", "N=5003,K=13"),
    ("conv1d", "conv1d/regs wg=64 groups=1 v4out=1 run=8", "N=5003,K=13"),
    # conv1d_slide.py: staged X + shared W; weights in registers over a loop; global X
    ("conv1d", "conv1d/regs wg=256 groups=1 v4out=1 run=1 slide=9 wsrc=0 xsrc=0", "N=100003,K=64"),
    ("conv1d", "conv1d/regs wg=64 groups=2 v4out=1 run=4 slide=7 wsrc=2 xsrc=0", "N=5003,K=13"),
    ("conv1d", "conv1d/regs wg=128 groups=1 v4out=1 run=2 slide=8 wsrc=1 xsrc=1", "N=5003,K=13"),
    # conv1d_stream.py: tiles streamed through a workgroup, the next window loaded during the FMAs
    ("conv1d", "conv1d/regs wg=256 groups=1 v4out=1 run=2 seq=4", "N=100003,K=64"),
    ("conv1d", "conv1d/regs wg=64 groups=2 v4out=1 run=1 seq=8", "N=5003,K=13"),
    ("conv1d", "conv1d/regs wg=128 groups=1 v4out=1 run=3 seq=2", "N=5003,K=13"),
    ("conv1d", "conv1d/regs wg=128 groups=1 v4out=1 run=2 wsrc=2 seq=4", "N=100003,K=64"),
    ("conv1d", "conv1d/regs wg=64 groups=1 v4out=1 run=1 wsrc=2 seq=2", "N=5003,K=13"),
    # pd=2: two windows in flight, tiles in pairs (f and h registers)
    ("conv1d", "conv1d/regs wg=128 groups=1 v4out=1 run=2 wsrc=2 seq=8 pd=2", "N=100003,K=64"),
    ("conv1d", "conv1d/regs wg=64 groups=2 v4out=1 run=1 seq=2 pd=2", "N=5003,K=13"),
    # lay=1: the window split by run phase (conflict-free reads), streamed and not
    ("conv1d", "conv1d/regs wg=128 groups=1 v4out=1 run=2 wsrc=2 seq=4 lay=1", "N=100003,K=64"),
    ("conv1d", "conv1d/regs wg=64 groups=2 v4out=1 run=3 seq=2 lay=1", "N=5003,K=13"),
    ("conv1d", "conv1d/regs wg=128 groups=1 v4out=1 run=4 lay=1", "N=5003,K=13"),
    ("gemv", "gemv/vec4 lanes=128 rows=1 sg=1 unroll=2", "M=67,K=1028"),
    ("gemv", "gemv/vec4 lanes=32 rows=8 sg=0 unroll=4", "M=67,K=1028"),
]
H200 = DeviceInfo(name="NVIDIA H200", software=False, subgroups=True, timestamp_query=True, limits={
    "max-compute-workgroup-storage-size": 49152, "max-compute-invocations-per-workgroup": 1024,
    "max-compute-workgroup-size-x": 1024, "max-compute-workgroup-size-y": 1024})


def parse(key: str) -> dict:
    name, *pairs = key.split()
    return {"template": name, **{a: int(v) for a, v in (p.split("=") for p in pairs)}}


def general(params: dict) -> dict:
    return {**params, **{f: 0 for f in ("spec", "v4out") if f in params}}


@pytest.fixture(scope="module")
def awkward_gpu() -> Iterator[GPUClient]:
    """A second real worker, for the awkward sizes, beside conftest's for the seed sizes.

    A worker holds one prepared workload at a time, and preparing one at its seed size
    (inputs and float64 references for three seeds of a 4096 x 4096 GEMV or a 1M-point
    conv1d) cost about as much as verifying a kernel there. With each worker at one size,
    consecutive cases of a workload find their seed size (and often their awkward size)
    still prepared."""
    client = GPUClient()
    client.start()
    yield client
    client.close()


class PreparedSessions:
    """One Session per worker, kept while the cases ask for its workload and size.

    A kernel verified in it is forgotten and dropped afterwards, so each case starts from
    the same state as in a session of its own: no earlier kernel can make it a duplicate."""

    def __init__(self) -> None:
        self._held: dict[int, tuple[tuple[str, str | None], Session]] = {}

    async def at(self, client: GPUClient, name: str, spec: str | None) -> Session:
        """A started session of ``name`` at ``spec`` on ``client``, prepared anew only when
        the last one this worker prepared was another workload or size."""
        held = self._held.get(id(client))
        if held is not None and held[0] == (name, spec):
            return held[1]
        w = WORKLOADS[name]
        s = Session(w, w.size(spec), client, lambda e: None, TimingSettings(warmup=0, reps=1))
        await s.start(calibrate=False)
        self._held[id(client)] = ((name, spec), s)
        return s


@pytest.fixture(scope="module")
def sessions() -> PreparedSessions:
    return PreparedSessions()


async def _verify(sessions: PreparedSessions, client: GPUClient, name: str, spec: str | None,
                  params: dict) -> None:
    w = WORKLOADS[name]
    s = await sessions.at(client, name, spec)
    cand = LibrarySource(s.device).instantiate(params, s.size, cid="v", name="v")
    assert cand is not None, f"{params} unusable at {s.size}"
    assert cand.params["key"] == template(params["template"]).key(params)
    try:
        ok = await s.admit(cand)
        r = s.results["v"]
        assert ok, f"{cand.origin} at {s.size}: {r.status} {r.reason}\n{cand.source}"
        assert not Analysis(cand.source, prelude(w, s.size, (1, 1), 1, set())).findings
    finally:
        s.forget("v")
        await client.request(Drop(cid="v"), 30.0)


@pytest.mark.parametrize("name,key,awkward", NEW, ids=[k for _, k, _ in NEW])
async def test_new_configuration_verifies_at_seed_and_awkward_sizes(gpu, awkward_gpu, sessions, name, key,
                                                                    awkward):
    await _verify(sessions, gpu, name, None, parse(key))
    await _verify(sessions, awkward_gpu, name, awkward, general(parse(key)))


def test_old_params_keep_their_kernel():
    """A configuration recorded before an axis existed regenerates the kernel it named then."""
    old = {"template": "sgemm/vec4", "bm": 64, "bn": 64, "bk": 8, "tm": 8, "tn": 8, "db": 1, "spec": 1}
    size = WORKLOADS["sgemm"].size(None)
    lib = LibrarySource(H200)
    a, b = lib.instantiate(old, size), lib.instantiate({**old, "lay": 0}, size)
    assert a is not None and a.source == b.source and a.params["key"].endswith("lay=0")
    conv = {"template": "conv1d/regs", "wg": 256, "groups": 2, "v4out": 1}
    conv_c = lib.instantiate(conv, WORKLOADS["conv1d"].size(None))
    assert conv_c.params["run"] == 1 and conv_c.params["key"].endswith("slide=0 wsrc=0 xsrc=0 seq=1 lay=0 pd=1")
    assert conv_c.source == lib.instantiate({**conv, "run": 1, "slide": 0}, WORKLOADS["conv1d"].size(None)).source


def test_seed_size_generation_one_is_unchanged():
    """The sliding windows are a large-size, big-GPU prior: seed sizes keep three candidates."""
    w = WORKLOADS["conv1d"]
    for device in (H200, DeviceInfo(name="llvmpipe", software=True)):
        out = asyncio.run(LibrarySource().propose(GenerationContext(workload=w.info(w.size(None)), device=device)))
        assert len(out) == 3 and all("slide=0" in c.params["key"].split() for c in out if c.strategy == "C")


@pytest.mark.parametrize("name,want", [("sgemm", "lay=1"), ("conv1d", "run=2"), ("gemv", "unroll=2")])
def test_generation_one_picks_the_h200_winners_at_large_sizes(name, want):
    """The priors follow the H200 sweeps (benchmarks/results/sweep-nvidia-h200*.json)."""
    w = WORKLOADS[name]
    out = asyncio.run(LibrarySource().propose(GenerationContext(workload=w.info(w.size("large")), device=H200)))
    c = next(c for c in out if c.strategy == "C")
    assert want in c.params["key"].split(), c.params["key"]


@pytest.mark.parametrize("name,old,want", [
    ("sgemm", "sgemm/vec4 bm=128 bn=256 bk=8 tm=16 tn=8 db=1 spec=1", "lay=1"),
    ("conv1d", "conv1d/regs wg=256 groups=2 v4out=1", "run=2"),
    ("conv1d", "conv1d/regs wg=256 groups=2 v4out=1", "slide=5"),
    ("conv1d", "conv1d/regs wg=256 groups=1 v4out=1 run=2", "slide=5"),
    ("gemv", "gemv/vec4 lanes=128 rows=1 sg=1", "unroll=2"),
])
def test_evolution_reaches_them_from_the_old_winners(name, old, want):
    w = WORKLOADS[name]
    t = template(parse(old)["template"])
    win = CandidateResult(id="w", name="w", status="verified", params=t.complete(parse(old)), median_ms=1.0)
    ctx = GenerationContext(workload=w.info(w.size("large")), device=H200, generation=2, results=[win],
                            winner=win, budget=6, tried=[win.params["key"]])
    keys = [c.params["key"] for c in asyncio.run(LibrarySource().evolve(ctx, "D"))]
    assert any(want in k.split() for k in keys), keys
