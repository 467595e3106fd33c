"""The engine end to end on the real adapter: compile, verify, time, and every failure mode."""

from __future__ import annotations

import os
import signal
import time

import pytest

from vajra_tui.engine.wgsl.template import is_template

from conftest import kernel
from vajra_tui.engine.candidate import Candidate
from vajra_tui.engine.events import CandidateFinished, DispatchTimed, VerificationFinished
from vajra_tui.engine.session import Session
from vajra_tui.engine.workloads import WORKLOADS, get_workload
from vajra_tui.settings import TimingSettings

FAST = TimingSettings(warmup=1, reps=3)


async def _session(gpu, name: str, size=None, timing=FAST, calibrate: bool = False):
    """A session with its baseline admitted. ``calibrate`` only where a test reads the roofline
    metrics: a session's calibration check costs about 0.8 s of CPU on lavapipe, and a full
    calibration (5 s) whenever a loaded machine moved the copy rate 15% off the cached one."""
    events = []
    w = get_workload(name)
    s = Session(w, w.size(size), gpu, events.append, timing.model_copy())
    await s.start(calibrate=calibrate)
    await s.run_baseline(time=False)
    return s, events


def _user(cid: str, source: str) -> Candidate:
    return Candidate(id=cid, name=cid, strategy="user", origin="test", source=source)


OPTIMIZED = {
    "sgemm": "sgemm_tiled.wgsl",
    "softmax": "softmax_row.wgsl",
    "conv1d": "conv1d_vec4.wgsl",
    "sobel": "sobel_shared.wgsl",
    "layernorm": "layernorm_row.wgsl",
    "gemv": "gemv_split.wgsl",
    "attention": "attention_library_a.wgsl",
    "fft": "fft_library_b.wgsl",  # both passes' entry points, a {{CB}} template value for the grid
    "fft2": "fft2_library_b.wgsl",
}


# Sizes a tune could be run at, smaller than the seed presets: there a naive baseline is slow on
# lavapipe (sgemm's 512^3 about a second a dispatch, conv1d's, sobel's and attention's a second or
# more), and each case dispatches both kernels about ten times (two seeds, the grid probe, a
# warm-up, three reps). What this test checks, verification, timing and every metric filled in,
# does not depend on the size. sgemm, conv1d and sobel run at sizes their tiles do not divide, so
# the hand kernels' edge guards are exercised too; the library's kernels still verify at the seed
# sizes in test_library.py::test_propose_and_evolve_verify_at_seed. fft and fft2 stay at their
# seed sizes, which their kernels were generated for (about a second each).
SIZES = {"sgemm": "M=264,N=200,K=136", "softmax": "ROWS=128,COLS=1024", "conv1d": "N=65540,K=64",
         "sobel": "H=260,W=500", "layernorm": "ROWS=128,COLS=1024", "gemv": "M=512,K=4096",
         "attention": "B=1,H=2,S=128,D=64,MASK=1"}


@pytest.mark.parametrize("name", list(WORKLOADS))
async def test_baseline_and_an_optimized_kernel_verify_at_a_tuning_size(gpu, name):
    """The baseline and a hand-optimized kernel verify on two seeds and are timed, with every
    metric filled in: at SIZES' size, or at the seed size (fft, fft2)."""
    s, events = await _session(gpu, name, SIZES.get(name), calibrate=True)
    (res,) = await s.evaluate([_user("opt", kernel(OPTIMIZED[name]))])
    base = s.results["baseline"]
    assert base.status == "verified", base.reason
    assert res.status == "verified", res.reason
    for r in (base, res):
        assert r.timing in ("timestamp", "wall")
        assert len(r.times_ms) == FAST.reps and r.median_ms > 0
        assert r.p25_ms <= r.median_ms <= r.p75_ms and r.iqr_ms >= 0
        assert r.gflops > 0 and r.gbps > 0 and r.pct_of_roofline > 0 and r.regime
        # an absolute tolerance only (fft: rtol=0) measures error against atol, not |ref|
        assert r.max_rel_error is not None and (r.max_rel_error < 1e-3 or s.workload.rtol == 0)
        assert len(r.source_sha256) == 64
        assert r.stitched_source.endswith(r.source) or is_template(r.source)  # a template runs expanded
    assert res.speedup == pytest.approx(base.median_ms / res.median_ms)
    checked = [e for e in events if isinstance(e, VerificationFinished) and e.id == "opt"]
    assert [e.seed for e in checked if e.phase == "pre"] == [1, 2]
    assert [e.phase for e in checked][-1] == "timed" and checked[-1].passed
    timed = [e for e in events if isinstance(e, DispatchTimed) and e.id == "opt" and not e.warmup]
    assert len(timed) == FAST.reps


async def test_failures_are_results_and_the_run_goes_on(gpu):
    s, events = await _session(gpu, "sgemm", "128x96x40", TimingSettings(warmup=1, reps=3, deadline_s=3))
    partial = s.workload.baseline.replace("if (row >= M || col >= N)", "if (row >= M / 2u || col >= N)")
    cands = [
        _user("syntax", kernel("syntax_error.wgsl")),
        _user("noop", kernel("noop.wgsl")),
        _user("partial", partial),
        _user("nan", kernel("nan_writer.wgsl")),
        _user("overflow", kernel("overflow.wgsl")),
        _user("hang", kernel("hang.wgsl")),
        _user("writable", kernel("writable_input.wgsl")),
        _user("good", kernel("sgemm_tiled.wgsl")),
    ]
    began = time.monotonic()
    results = {r.id: r for r in await s.evaluate(cands)}
    assert time.monotonic() - began < 60

    syntax = results["syntax"]
    assert syntax.status == "compile_error"
    line = kernel("syntax_error.wgsl").splitlines()[4]
    assert (syntax.diagnostics[0].line, syntax.diagnostics[0].column) == (5, line.index(";") + 1)

    # What the engine guarantees: each is rejected, and the reason tells an element the
    # kernel never wrote apart from a NaN or Inf it computed (bits, not values, decide).
    assert results["noop"].status == "rejected" and "never written" in results["noop"].reason
    assert results["partial"].status == "rejected"
    assert results["partial"].worst_index is not None and results["partial"].worst_index >= 64 * 96
    assert results["nan"].status == "rejected" and "non-finite" in results["nan"].reason
    assert "never written" not in results["nan"].reason and "got NaN" in results["nan"].reason
    assert results["overflow"].status == "rejected" and "non-finite" in results["overflow"].reason
    assert "got inf" in results["overflow"].reason and "never written" not in results["overflow"].reason
    assert results["hang"].status == "timeout" and results["hang"].deadline_s == 3
    assert results["writable"].status == "compile_error"
    assert "inputs must be read-only" in results["writable"].reason
    assert results["writable"].diagnostics[0].line == 9  # the write, not the declaration
    assert results["good"].status == "verified", results["good"].reason
    finished = {e.result.id for e in events if isinstance(e, CandidateFinished)}
    assert set(results) <= finished


async def test_a_worker_that_dies_is_a_crash_and_the_run_goes_on(gpu):
    """A lost device or driver crash kills the worker; that candidate is 'crashed', the next runs."""
    s, _ = await _session(gpu, "softmax", "32x64")
    os.kill(gpu.pid, signal.SIGKILL)
    time.sleep(0.2)
    (victim,) = await s.evaluate([_user("victim", kernel("softmax_row.wgsl"))])
    (survivor,) = await s.evaluate([_user("survivor", kernel("softmax_row.wgsl"))])
    assert victim.status == "crashed" and "worker" in victim.reason
    assert survivor.status == "verified", survivor.reason  # a copy of a crashed kernel gets its run
    assert s.results["baseline"].status == "verified"


async def test_a_worker_lost_before_a_generation_costs_none_of_it(gpu):
    """The generation's pipelines are built first, in one request: a worker found dead there is
    replaced before any candidate is in flight, so nothing is lost."""
    s, _ = await _session(gpu, "softmax", "32x64")
    os.kill(gpu.pid, signal.SIGKILL)
    time.sleep(0.2)
    first, second = await s.evaluate([_user("first", kernel("softmax_row.wgsl")),
                                       _user("second", kernel("softmax_row.wgsl").replace("256u", "256u "))])
    assert (first.status, second.status) == ("verified", "verified"), (first.reason, second.reason)


async def test_kernels_built_together_keep_their_own_compile_errors(gpu):
    """Built on threads, a kernel the compiler refuses is still refused at its own line and
    column, and the good kernels around it are unaffected."""
    s, _ = await _session(gpu, "softmax", "32x64")
    good = kernel("softmax_row.wgsl")
    lines = good.splitlines()
    lines.insert(8, "    let wrong: f32 = 1u;")  # line 9: a u32 where an f32 was declared
    bad = "\n".join(lines) + "\n"
    results = await s.evaluate([_user("a", good), _user("bad", bad),
                                _user("b", good.replace("-3.4e38", "-3.3e38"))])
    a, refused, b = results
    assert (a.status, b.status) == ("verified", "verified"), (a.reason, b.reason)
    assert refused.status == "compile_error"
    assert refused.diagnostics and refused.diagnostics[0].line == 9, refused.reason
    assert "wrong" in refused.diagnostics[0].source_line


async def test_kernels_over_the_adapters_limits_are_compile_errors(gpu):
    """Too many invocations or too much workgroup memory fail at pipeline creation, located."""
    s, _ = await _session(gpu, "conv1d", "4096x64")
    limits = s.device.limits
    too_wide = limits["max-compute-invocations-per-workgroup"] * 2
    floats = limits["max-compute-workgroup-storage-size"] // 4 + 1024
    wide = f"""
@compute @workgroup_size({too_wide})
fn main(@builtin(global_invocation_id) g: vec3<u32>) {{
    if (g.x < N) {{ Y[g.x] = X[g.x] * W[0]; }}
}}
"""
    hoard = f"""
var<workgroup> big: array<f32, {floats}>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(local_invocation_index) l: u32) {{
    big[l] = X[g.x];
    workgroupBarrier();
    if (g.x < N) {{ Y[g.x] = big[l] * W[0]; }}
}}
"""
    wide_r, hoard_r, ok = await s.evaluate([_user("wide", wide), _user("hoard", hoard),
                                            _user("ok", kernel("conv1d_vec4.wgsl"))])
    for r in (wide_r, hoard_r):
        assert r.status == "compile_error", (r.name, r.status, r.reason)
        assert r.diagnostics and r.diagnostics[0].line >= 1
    assert ok.status == "verified"
