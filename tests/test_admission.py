"""What happens to a candidate between its source and its timing, on the real adapter.

Each case is a mistake real model replies make (or a correct kernel that used to be
mistaken for one): `enable` directives, a missing tile header, a syntax error that
the contract used to answer first, a slot that repeats another, a barrier in
non-uniform control flow.
"""

from __future__ import annotations

import pytest

from conftest import kernel
from vajra_tui.engine.candidate import Candidate
from vajra_tui.engine.events import DispatchTimed, Notice
from vajra_tui.engine.session import Session
from vajra_tui.engine.workloads import get_workload
from vajra_tui.settings import TimingSettings

FAST = TimingSettings(warmup=1, reps=2)


async def _session(gpu, name: str, size: str):
    events: list = []
    w = get_workload(name)
    s = Session(w, w.size(size), gpu, events.append, FAST.model_copy())
    await s.start()
    await s.run_baseline(time=False)
    return s, events


def _cand(cid: str, source: str, strategy: str = "user") -> Candidate:
    return Candidate(id=cid, name=cid, strategy=strategy, origin="test", source=source)


def _warnings(events: list, name: str) -> list[str]:
    return [e.message for e in events if isinstance(e, Notice) and e.message.startswith(name)]


async def test_a_missing_tile_header_is_found_and_timed_on_the_grid_it_needs(gpu):
    s, events = await _session(gpu, "sgemm", "100x136x24")  # M x N x K
    [r] = await s.evaluate([_cand("blocked", kernel("sgemm_4x4_no_header.wgsl"))])
    assert r.status == "verified", r.reason
    assert r.over_dispatch == [4, 4]
    assert r.grid[:2] == [3, 2]  # ceil(136 / 64), ceil(100 / 64)
    [warning] = _warnings(events, "blocked")
    assert "16x over" in warning and "// tile: 64x64" in warning
    assert "const TILES_X: u32 = 3u;" in r.stitched_source


async def test_correct_kernels_get_no_tile_warnings_and_no_probe_verdict(gpu):
    s, events = await _session(gpu, "softmax", "33x300")
    [r] = await s.evaluate([_cand("row", kernel("softmax_row.wgsl"))])  # `// tile: COLS x 1`, 1-D group
    assert r.status == "verified", r.reason
    assert r.over_dispatch == [] and r.grid[:2] == [1, 33]
    assert _warnings(events, "row") == []


async def test_a_syntax_error_is_reported_by_the_compiler_at_its_line(gpu):
    s, _ = await _session(gpu, "softmax", "8x64")
    broken = kernel("softmax_row.wgsl").replace(
        "fn main(@builtin(workgroup_id) wid: vec3<u32>,", "fn main(@builtin(workgroup_id) wid: vec3<u32>", 1)
    line = next(n for n, text in enumerate(broken.splitlines(), 1) if text.startswith("fn main("))
    [r] = await s.evaluate([_cand("broken", broken)])
    assert r.status == "compile_error"
    assert "no @compute entry point" not in r.reason
    assert r.diagnostics[0].line == line, r.diagnostics


async def test_enable_directives_go_before_the_prelude(gpu):
    s, _ = await _session(gpu, "conv1d", "1000x16")
    if "shader-f16" not in s.device.enabled_features:
        pytest.skip("the adapter has no shader-f16")
    half = """enable f16;
// tile: 64
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x >= N) { return; }
    var acc = 0.0;
    for (var k = 0u; k < K; k = k + 1u) { acc = fma(X[g.x + k], W[k], acc); }
    let unused: f16 = f16(1.0);
    Y[g.x] = acc;
}
"""
    [r] = await s.evaluate([_cand("half", half)])
    assert r.status == "verified", r.reason
    assert r.enables == ["f16"] and r.stitched_source.startswith("enable f16;\n")


async def test_requires_and_diagnostic_directives_go_before_the_prelude_too(gpu):
    """A kernel as published may open with `requires` and a global `diagnostic`; behind the
    prelude each was "a global directive written after the first global declaration"."""
    s, _ = await _session(gpu, "conv1d", "1000x16")
    body = """requires pointer_composite_access;
diagnostic(off, derivative_uniformity);
// tile: 64
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x >= N) { return; }
    var acc = 0.0;
    for (var k = 0u; k < K; k = k + 1u) { acc = fma(X[g.x + k], W[k], acc); }
    Y[g.x] = acc;
}
"""
    [r] = await s.evaluate([_cand("directives", body)])
    assert r.status == "verified", r.reason
    head = r.stitched_source.split("\n")
    assert head[:2] == ["requires pointer_composite_access;", "diagnostic(off, derivative_uniformity);"]
    body_lines = r.stitched_source.split("\n")[-len(body.split("\n")):]
    assert body_lines[4] == "fn main(@builtin(global_invocation_id) g: vec3<u32>) {"  # line numbers kept


async def test_a_repeated_kernel_is_named_and_not_timed_twice(gpu):
    s, events = await _session(gpu, "softmax", "8x64")
    first, second = await s.evaluate([_cand("B", kernel("softmax_row.wgsl"), "B"),
                                      _cand("C", kernel("softmax_row.wgsl"), "C")])
    assert first.status == "verified", first.reason
    assert second.status == "duplicate" and second.duplicate_of == "B" and "B" in second.reason
    assert not [e for e in events if isinstance(e, DispatchTimed) and e.id == "C"]


NON_UNIFORM_BARRIER = """// tile: 64
var<workgroup> tile: array<f32, 64>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(local_invocation_index) l: u32) {
    tile[l] = X[min(g.x, N - 1u)];
    if (l < 1024u) {  // every lane takes it, but no compiler can prove that
        workgroupBarrier();
    }
    if (g.x < N) {
        var acc = 0.0;
        for (var k = 0u; k < K; k = k + 1u) { acc = fma(X[g.x + k], W[k], acc); }
        Y[g.x] = acc + tile[l] * 0.0;
    }
}
"""


async def test_a_barrier_in_non_uniform_flow_is_refused_from_a_model_and_flagged_for_a_user(gpu):
    s, _ = await _session(gpu, "conv1d", "1000x16")
    generated, mine = await s.evaluate([_cand("A", NON_UNIFORM_BARRIER, "A"),
                                        _cand("mine", NON_UNIFORM_BARRIER + "\n")])
    assert generated.status == "compile_error"
    assert "non-uniform control flow" in generated.reason and generated.diagnostics[0].line == 7
    assert mine.status == "verified", mine.reason
    assert mine.browser_invalid.startswith("7:") and "non-uniform" in mine.browser_invalid


REWRITTEN_THEN_BROKEN = """// tile: 64
var<workgroup> part: array<f32, 64>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(local_invocation_index) l: u32) {
    if (g.x >= N) {
        return;
    }
    part[l] = X[g.x];
    workgroupBarrier();
    var acc = 0.0;
    for (var k = 0; k < K; k = k + 1) {
        acc = fma(X[g.x + u32(k)], W[u32(k)], acc);
    }
    Y[g.x] = acc + part[l] * 0.0;
}
"""


async def test_a_sanitized_kernel_is_diagnosed_at_the_line_the_model_wrote(gpu):
    s, events = await _session(gpu, "conv1d", "1000x16")
    [r] = await s.evaluate([_cand("B", REWRITTEN_THEN_BROKEN, "B")])
    assert r.rewrites, "the early return before the barrier was not rewritten"
    assert r.status == "compile_error"
    d = r.diagnostics[0]
    line = REWRITTEN_THEN_BROKEN.splitlines()[d.line - 1]
    assert d.line == 11 and "k < K" in line, (d, r.reason)
    assert d.source_line == line.rstrip() and "i32" in d.message and "u32" in d.message
