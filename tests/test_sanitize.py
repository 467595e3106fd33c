"""Uniformity sanitizer on real kernels: Tint rejects, we repair, Tint accepts, GPU agrees."""

from __future__ import annotations

import functools
import re

import numpy as np
import pytest

from vajra_tui.engine.wgsl.sanitize import check_tile_header, sanitize
from vajra_tui.engine.browser.tint import TintResult, node_available, tint_check

pytestmark = pytest.mark.browser_judge  # the judge runs here: these tests assert its verdict (conftest.py)

UNIFORMITY = "must only be called from uniform control flow"

SGEMM = """\
// tile: 16x16
var<workgroup> As: array<array<f32, 16>, 16>;
var<workgroup> Bs: array<array<f32, 16>, 16>;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = gid.y;
    let col = gid.x;
    if (row >= M || col >= N) {
        return;
    }
    var acc = 0.0;
    let tiles = (K + 15u) / 16u;
    for (var t = 0u; t < tiles; t = t + 1u) {
        let aCol = t * 16u + lid.x;
        let bRow = t * 16u + lid.y;
        if (aCol < K) {
            As[lid.y][lid.x] = A[row * K + aCol];
        } else {
            As[lid.y][lid.x] = 0.0;
        }
        if (bRow < K) {
            Bs[lid.y][lid.x] = B[bRow * N + col];
        } else {
            Bs[lid.y][lid.x] = 0.0;
        }
        workgroupBarrier();
        for (var k = 0u; k < 16u; k++) {
            acc += As[lid.y][k] * Bs[k][lid.x];
        }
        workgroupBarrier();
    }
    C[row * N + col] = acc;
}
"""
SGEMM_PRELUDE = """\
const M: u32 = 100u;
const N: u32 = 70u;
const K: u32 = 50u;
@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
"""

# Row softmax, two rows per workgroup; ROWS is odd so half of the last workgroup returns.
SOFTMAX = """\
var<workgroup> red: array<array<f32, 64>, 2>;

@compute @workgroup_size(64, 2)
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = gid.y;
    let tid = lid.x;
    if (row >= ROWS) { return; }
    var m = -3.0e38;
    for (var j = tid; j < COLS; j += 64u) {
        m = max(m, X[row * COLS + j]);
    }
    red[lid.y][tid] = m;
    workgroupBarrier();
    for (var s = 32u; s > 0u; s >>= 1u) {
        if (tid < s) {
            red[lid.y][tid] = max(red[lid.y][tid], red[lid.y][tid + s]);
        }
        workgroupBarrier();
    }
    let row_max = red[lid.y][0];
    workgroupBarrier();
    var sum = 0.0;
    for (var j = tid; j < COLS; j += 64u) {
        sum += exp(X[row * COLS + j] - row_max);
    }
    red[lid.y][tid] = sum;
    workgroupBarrier();
    for (var s = 32u; s > 0u; s >>= 1u) {
        if (tid < s) {
            red[lid.y][tid] += red[lid.y][tid + s];
        }
        workgroupBarrier();
    }
    let total = red[lid.y][0];
    for (var j = tid; j < COLS; j += 64u) {
        Y[row * COLS + j] = exp(X[row * COLS + j] - row_max) / total;
    }
}
"""
SOFTMAX_PRELUDE = """\
const ROWS: u32 = 7u;
const COLS: u32 = 100u;
@group(0) @binding(0) var<storage, read> X: array<f32>;
@group(0) @binding(1) var<storage, read_write> Y: array<f32>;
"""

# 1-D block sum whose tail lanes zero their slot, then return early: only the strict
# policy keeps them from loading out of range. (lavapipe does not zero-initialise
# workgroup memory, so the kernel must do it itself.)
BLOCK_SUM = """\
var<workgroup> part: array<f32, 128>;

@compute @workgroup_size(128)
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(workgroup_id) wid: vec3<u32>) {
    part[lid.x] = 0.0;
    let i = gid.x;
    if (i >= N) { return; }
    part[lid.x] = X[i];
    workgroupBarrier();
    for (var s = 64u; s > 0u; s >>= 1u) {
        if (lid.x < s) {
            part[lid.x] += part[lid.x + s];
        }
        workgroupBarrier();
    }
    if (lid.x == 0u) {
        Y[wid.x] = part[0];
    }
}
"""
BLOCK_SUM_PRELUDE = """\
const N: u32 = 1000u;
@group(0) @binding(0) var<storage, read> X: array<f32>;
@group(0) @binding(1) var<storage, read_write> Y: array<f32>;
"""


# ---- helpers ---------------------------------------------------------------------
@functools.cache
def _device():
    wgpu = pytest.importorskip("wgpu")
    adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    if adapter is None:
        pytest.skip("no wgpu adapter")
    return adapter.request_device_sync()


def run_kernel(prelude: str, src: str, inputs: list[np.ndarray], out_len: int,
               groups: tuple[int, int, int]) -> np.ndarray:
    """Stitch prelude + kernel, bind inputs (0..n-1) and the output (n), dispatch, read back."""
    import wgpu

    dev = _device()
    module = dev.create_shader_module(code=prelude + src)
    pipe = dev.create_compute_pipeline(layout="auto", compute={"module": module, "entry_point": "main"})
    bufs = [dev.create_buffer_with_data(data=a.astype(np.float32).tobytes(), usage=wgpu.BufferUsage.STORAGE)
            for a in inputs]
    out = dev.create_buffer(size=4 * out_len, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
    entries = [{"binding": i, "resource": {"buffer": b, "offset": 0, "size": b.size}}
               for i, b in enumerate([*bufs, out])]
    bind = dev.create_bind_group(layout=pipe.get_bind_group_layout(0), entries=entries)
    enc = dev.create_command_encoder()
    cp = enc.begin_compute_pass()
    cp.set_pipeline(pipe)
    cp.set_bind_group(0, bind)
    cp.dispatch_workgroups(*groups)
    cp.end()
    dev.queue.submit([enc.finish()])
    return np.frombuffer(dev.queue.read_buffer(out), dtype=np.float32).copy()


@functools.cache
def _tint(stitched: str) -> TintResult:
    if not node_available():
        pytest.skip("node is not installed: Tint checks skipped")
    res = tint_check(stitched)
    if not res.available:
        pytest.skip(f"Tint check unavailable: {res.reason}")
    return res


def _lines_of(src: str, needle: str) -> list[int]:
    return [i + 1 for i, line in enumerate(src.splitlines()) if needle in line]


def _prelude_lines(prelude: str) -> int:
    return prelude.count("\n")


# ---- SGEMM -----------------------------------------------------------------------
def test_sgemm_finding_points_at_barrier():
    res = sanitize(SGEMM)
    assert res.repaired and res.diff
    err, note = res.findings[0], res.findings[1]
    assert UNIFORMITY in err.message and "'workgroupBarrier'" in err.message
    assert err.line == _lines_of(SGEMM, "workgroupBarrier")[0]
    assert SGEMM.splitlines()[err.line - 1][err.column - 1:].startswith("workgroupBarrier(")
    assert note.line == _lines_of(SGEMM, "return;")[0] and "early return" in note.message
    assert "_vajra_active" in res.source and "return;" not in res.source
    assert res.source.count("workgroupBarrier();") == 2


def test_sgemm_tint_rejects_original_accepts_repair():
    bad = _tint(SGEMM_PRELUDE + SGEMM)
    assert not bad.ok
    errors = [m for m in bad.messages if not m.message.startswith("note:")]
    assert UNIFORMITY in errors[0].message
    barrier_lines = [n + _prelude_lines(SGEMM_PRELUDE) for n in _lines_of(SGEMM, "workgroupBarrier")]
    assert errors[0].line in barrier_lines
    for coop in (True, False):
        good = _tint(SGEMM_PRELUDE + sanitize(SGEMM, cooperative=coop).source)
        assert good.ok, good.messages


def test_sgemm_repair_computes_right_answer():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((100, 50), dtype=np.float32)
    b = rng.standard_normal((50, 70), dtype=np.float32)
    fixed = sanitize(SGEMM).source
    got = run_kernel(SGEMM_PRELUDE, fixed, [a.ravel(), b.ravel()], 100 * 70, (5, 7, 1))
    np.testing.assert_allclose(got.reshape(100, 70), a @ b, rtol=1e-4, atol=1e-4)


# ---- reductions --------------------------------------------------------------------
@pytest.mark.parametrize("coop", [True, False])
def test_softmax_repair_tint_and_gpu(coop: bool):
    res = sanitize(SOFTMAX, cooperative=coop)
    assert res.repaired
    assert res.findings[0].line == _lines_of(SOFTMAX, "workgroupBarrier")[0]
    x = np.random.default_rng(1).standard_normal((7, 100), dtype=np.float32) * 4
    got = run_kernel(SOFTMAX_PRELUDE, res.source, [x.ravel()], 7 * 100, (1, 4, 1)).reshape(7, 100)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(axis=1, keepdims=True), rtol=1e-4, atol=1e-6)
    assert not _tint(SOFTMAX_PRELUDE + SOFTMAX).ok
    assert _tint(SOFTMAX_PRELUDE + res.source).ok


def test_strict_block_sum_keeps_inactive_lanes_idle():
    res = sanitize(BLOCK_SUM, cooperative=False)
    assert res.repaired
    x = np.random.default_rng(2).standard_normal(1000, dtype=np.float32)
    got = run_kernel(BLOCK_SUM_PRELUDE, res.source, [x], 8, (8, 1, 1))
    want = np.add.reduceat(x.astype(np.float64), np.arange(0, 1000, 128))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


# ---- no-ops and refusals ----------------------------------------------------------------
CLEAN = """\
var<workgroup> tile: array<f32, 64>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(workgroup_id) wid: vec3<u32>) {
    if (wid.x >= 100u) { return; }  // uniform: the whole workgroup leaves
    var v = 0.0;
    if (gid.x < N) { v = X[gid.x]; }
    tile[lid.x] = v;
    workgroupBarrier();
    if (gid.x < N) { Y[gid.x] = tile[63u - lid.x]; }
}
"""


def test_uniform_kernel_is_left_alone():
    res = sanitize(CLEAN)
    assert res.source == CLEAN and res.diff == "" and not res.repaired and res.findings == []


def test_early_return_without_later_barrier_is_fine():
    src = "@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {\n" \
          "  if (g.x >= N) { return; }\n  Y[g.x] = X[g.x];\n}\n"
    res = sanitize(src)
    assert res.diff == "" and res.findings == []


def test_barrier_in_nonuniform_if_is_reported_not_repaired():
    src = CLEAN.replace("    workgroupBarrier();\n", "    if (lid.x < 32u) {\n        workgroupBarrier();\n    }\n")
    res = sanitize(src)
    assert not res.repaired and res.source == src and res.diff == ""
    assert res.findings and UNIFORMITY in res.findings[0].message
    assert res.findings[0].line == _lines_of(src, "workgroupBarrier")[0]
    assert "note:" in res.findings[1].message and res.findings[1].line == _lines_of(src, "lid.x < 32u")[0]


def test_return_inside_loop_before_barrier_is_unrepairable():
    src = SGEMM.replace("        workgroupBarrier();\n        for",
                        "        if (aCol >= K + 1u) { return; }\n        workgroupBarrier();\n        for", 1)
    src = src.replace("    if (row >= M || col >= N) {\n        return;\n    }\n", "")
    res = sanitize(src)
    assert not res.repaired and res.source == src and res.findings


def test_taint_flows_through_lets_and_struct_inputs():
    src = """\
struct In { @builtin(local_invocation_index) li: u32, @builtin(workgroup_id) w: vec3<u32> }
var<workgroup> buf: array<f32, 64>;
@compute @workgroup_size(64)
fn main(inp: In) {
    let a = inp.li * 2u;
    var b = a + 1u;
    if (b > 100u) { return; }
    buf[inp.li] = 1.0;
    storageBarrier();
    Y[inp.li] = buf[0];
}
"""
    res = sanitize(src)
    assert res.repaired and res.findings[0].line == 9 and "'storageBarrier'" in res.findings[0].message
    assert "b" in res.findings[1].message


def test_several_early_returns_and_braceless_form():
    src = SGEMM.replace("    if (row >= M || col >= N) {\n        return;\n    }\n",
                        "    if (row >= M) return;\n    if (col >= N) { return; }\n")
    res = sanitize(src)
    assert res.repaired and "return" not in res.source
    assert res.source.count("_vajra_active = false;") == 2
    assert re.search(r"if \(row >= M\) \{ _vajra_active = false; \}", res.source)
    x = np.random.default_rng(3).standard_normal((100, 50), dtype=np.float32)
    w = np.random.default_rng(4).standard_normal((50, 70), dtype=np.float32)
    got = run_kernel(SGEMM_PRELUDE, res.source, [x.ravel(), w.ravel()], 7000, (5, 7, 1))
    np.testing.assert_allclose(got.reshape(100, 70), x @ w, rtol=1e-4, atol=1e-4)


def test_unparseable_source_is_returned_unchanged():
    res = sanitize("fn main( {")
    assert res.source == "fn main( {" and not res.repaired and res.findings == []


# ---- tile header --------------------------------------------------------------------------
VEC4 = """\
// tile: 64
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if (i < arrayLength(&Y)) { Y[i] = X[i] * 2.0; }
}
"""
VEC4_PRELUDE = """\
@group(0) @binding(0) var<storage, read> X: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> Y: array<vec4<f32>>;
"""


def test_tile_header_vec4_rows_flagged():
    diags = check_tile_header(VEC4, (4096, 1), (64, 1, 1), prelude=VEC4_PRELUDE)
    assert len(diags) == 1 and "tile: 256" in diags[0].message and diags[0].line == 5
    ok = VEC4.replace("// tile: 64", "// tile: 256")
    assert check_tile_header(ok, (4096, 1), (64, 1, 1), prelude=VEC4_PRELUDE) == []
    missing = VEC4.replace("// tile: 64\n", "")
    assert check_tile_header(missing, (4096, 1), (64, 1, 1), prelude=VEC4_PRELUDE)


def test_tile_header_bad_values():
    bad = SGEMM.replace("// tile: 16x16", "// tile: 16x0")
    assert "positive" in check_tile_header(bad, (70, 100), (16, 16, 1))[0].message
    # A tile that is no multiple of the workgroup is legal (one workgroup per row of COLS):
    # whether the grid is right is measured (over-dispatch probe, NaN-poisoned verification).
    odd = SGEMM.replace("// tile: 16x16", "// tile: 24x16")
    assert check_tile_header(odd, (70, 100), (16, 16, 1)) == []
    assert check_tile_header(SGEMM, (70, 100), (16, 16, 1)) == []
    huge = check_tile_header(SGEMM, (16 * 70000, 16), (16, 16, 1))
    assert huge and "65535" in huge[0].message


def test_tile_header_with_size_constants_uses_the_engines_tile():
    """`// tile: COLS x 1` is resolved by the engine; a vec4 row kernel with it is fine."""
    src = """// tile: COLS x 1
@group(0) @binding(1) var<storage, read_write> Y: array<vec4<f32>>;
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    Y[wid.y * (COLS / 4u) + lid.x] = vec4<f32>(0.0);
}
"""
    assert check_tile_header(src, (256, 8), (64, 1, 1), tile=(256, 1), folds_large_grids=True) == []
    warned = check_tile_header(src, (256, 8), (64, 1, 1), tile=(64, 1))
    assert warned and "vec4" in warned[0].message
