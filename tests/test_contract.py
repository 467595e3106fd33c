"""The kernel contract: prelude stitching, tile headers, dispatch folding and line mapping."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import kernel
from vajra_tui.engine.admission.contract import ContractError, plan_dispatch, stitch, tile_of
from vajra_tui.engine.gpu.protocol import Compile, Prepare, Verify
from vajra_tui.engine.gpu.verify import compare
from vajra_tui.engine.workloads import get_workload


def test_prelude_defines_sizes_and_missing_bindings_only():
    w = get_workload("conv1d")
    size = w.size("1000x7")
    st = stitch(w, size, kernel("conv1d_vec4.wgsl"))
    head = st.source[: st.source.index(kernel("conv1d_vec4.wgsl"))]
    assert "const N: u32 = 1000u;" in head and "const K: u32 = 7u;" in head
    assert "var<storage, read> X: array<f32>;" in head
    assert "@binding(2)" not in head  # the candidate declares Y as vec4 itself
    assert st.tile == (1024, 1) and st.tiles == (1, 1) and st.workgroup_size == (256, 1, 1)
    assert st.to_candidate_line(st.prelude_lines + 5) == 5


@pytest.mark.parametrize("header,expected", [
    ("// tile: 64x32", (64, 32)), ("// tile: 256", (256, 1)), ("// tile: COLS x 4", (300, 4)),
    ("// tile: 8 × 2", (8, 2)), ("// Tile: 64 x 64  (each workgroup computes a 64x64 block)", (64, 64)),
    ("//TILE:128x2 // rows", (128, 2)), ("// tile: cols x 1", (300, 1)),
    ("// tile: (2*ROWS) x (ROWS*4)", (20, 40)), ("// tile: 32 x 16 x 1", (32, 16)),
    ("// tile: COLS x ROWS - 8", (300, 2)), ("// tile: 64 x 64 (one per workgroup)", (64, 64)),
    ("// tile: 16x16 with padding", (16, 16)),
])
def test_tile_header_forms(header, expected):
    size = {"ROWS": 10, "COLS": 300}
    assert tile_of(f"{header}\n@compute @workgroup_size(1) fn main() {{}}", size, (1, 1, 1)) == expected


def test_a_tile_header_may_name_the_kernels_own_constants():
    body = ("const TILE: u32 = 32u;\nconst TM = TILE * 2u;\n// tile: TM x TILE\n"
            "@compute @workgroup_size(8, 8) fn main() {}")
    w = get_workload("sgemm")
    assert stitch(w, w.size("128"), body).tile == (64, 32)


def test_prose_that_starts_with_tile_is_not_a_header():
    body = "// Tile: load A and B into shared memory\n@compute @workgroup_size(8, 4) fn main() {}"
    assert tile_of(body, {"N": 4}, (8, 4, 1)) == (8, 4)


@pytest.mark.parametrize("header,why", [
    ("// tile: 4*ROWS x", "cannot be read"), ("// tile: 32 x 16 x 2", "third side must be 1"),
    ("// tile: 4*ROWS x 4*ROWS - 40", "sizes must be positive"), ("// tile:", "cannot be read"),
    ("// tile: 64 x 32 x 1 x 1", "cannot be read"), ("// tile: 64 x {32}", "cannot be read"),
])
def test_a_tile_header_meant_as_sizes_is_read_whole_or_refused_quoted(header, why):
    """Never read in part (`4*WX x 4*WY - 16` was 32x16, the `- 16` taken for a note) nor
    skipped (`4*WX x`, `32 x 16 x 1` fell back to the workgroup's shape in silence)."""
    with pytest.raises(ContractError) as info:
        tile_of(f"{header}\n@compute @workgroup_size(8, 4) fn main() {{}}", {"ROWS": 10, "COLS": 300}, (8, 4, 1))
    assert why in str(info.value) and f"`{header.strip()}" in str(info.value).replace("`// tile: `", "`// tile:`")
    assert "\n" not in str(info.value)


def test_bad_tile_header_and_grid_planning():
    with pytest.raises(ContractError):
        tile_of("// tile: FOO\n", {"N": 4}, (1, 1, 1))
    assert plan_dispatch((1000, 10), (256, 1), 65535) == ((4, 10), (4, 10, 1))
    tiles, dispatch = plan_dispatch((100_000_000, 1), (256, 1), 65535)
    assert tiles == (390_625, 1)
    assert dispatch[0] <= 65535 and dispatch[0] * dispatch[1] >= 390_625


def test_contract_rejections():
    w = get_workload("sgemm")
    size = w.size("seed")
    with pytest.raises(ContractError, match="no @compute entry point"):
        stitch(w, size, "fn helper() {}")
    with pytest.raises(ContractError, match="read-only"):
        stitch(w, size, kernel("writable_input.wgsl"))
    with pytest.raises(ContractError, match="not part of"):
        stitch(w, size, "@group(0) @binding(7) var<storage, read> Z: array<f32>;\n"
                        "@compute @workgroup_size(1) fn main() {}")


def test_folded_grid_still_covers_every_output(gpu):
    """A grid over the per-dimension limit is folded; vajra_tile() unfolds it on the GPU."""
    w = get_workload("conv1d")
    size = w.size("5000x3")
    st = stitch(w, size, w.baseline, max_dim=7)  # 20 tiles of 256 folded onto 7 x 3
    assert st.tiles == (20, 1) and st.dispatch == (7, 3, 1)
    gpu.request_blocking(Prepare(workload="conv1d", size=size, seeds=[5]), 120)
    assert gpu.request_blocking(Compile(cid="fold", source=st.source, dispatch=list(st.dispatch)), 60).compiled
    verdict = gpu.request_blocking(Verify(cid="fold", seed=5), 30)
    assert verdict.passed, verdict.reason


def test_compare_rules():
    ref = np.array([1.0, 0.0, -2.0])
    assert compare(np.array([1.0, 0.0, -2.0], np.float32), ref, 1e-6).passed
    bad = compare(np.array([1.0, np.nan, -2.0], np.float32), ref, 1e-6)
    assert not bad.passed and bad.worst_index == 1 and "non-finite" in bad.reason
    off = compare(np.array([1.0, 0.0, -2.01], np.float32), ref, 1e-6)
    assert not off.passed and off.worst_index == 2 and off.max_rel_error == pytest.approx(0.005, rel=1e-3)
    assert not compare(np.array([np.inf, 0, -2], np.float32), ref, 1e-6).passed


def test_unwritten_is_told_apart_from_computed_nan_by_its_bits():
    from vajra_tui.engine.gpu.verify import POISON_BITS

    ref = np.array([1.0, 0.0, -2.0, 5.0])
    out = np.array([1.0, 0.0, -2.0, 5.0], np.float32)
    out.view(np.uint32)[1] = POISON_BITS
    unwritten = compare(out, ref, 1e-6)
    assert not unwritten.passed and unwritten.unwritten == 1 and unwritten.worst_index == 1
    assert "1 of 4 elements never written, first at element 1" in unwritten.reason
    assert "computed from memory never written" in unwritten.reason  # a NaN payload carried through
    out.view(np.uint32)[1] = 0x7FC00000  # the canonical NaN arithmetic produces
    out[3] = np.inf
    computed = compare(out, ref, 1e-6)
    assert not computed.passed and computed.unwritten == 0 and computed.nonfinite == 2
    assert "never written" not in computed.reason and "got NaN" in computed.reason


def test_workgroup_memory_is_sized_by_wgsl_layout_rules():
    from vajra_tui.engine.wgsl.memory import workgroup_vars

    src = """const T: u32 = 16u;
var<workgroup> a: array<array<f32, 16>, 16>;
var<workgroup> b: array<vec4<f32>, T * 4u>;
var<workgroup> c: array<vec3f, 10>;
var<workgroup> d: f32;
var<workgroup> e: array<atomic<u32>, 3>;
fn f() { var x: f32; }
"""
    sizes = {v.name: (v.bytes, v.line) for v in workgroup_vars(src)}
    assert sizes == {"a": (1024, 2), "b": (1024, 3), "c": (160, 4), "d": (16, 5), "e": (16, 6)}


def test_oversized_workgroup_memory_is_refused_before_it_runs():
    """wgpu would build this pipeline; the WebGPU limit says it must not (the limit counts what
    the entry point uses: an array it never names is not held, so it is not counted)."""
    w = get_workload("sobel")
    unused = "var<workgroup> big: array<f32, H>;\n@compute @workgroup_size(64)\nfn main() {}\n"
    stitch(w, w.size("8192"), unused, max_workgroup_bytes=16384)
    body = "var<workgroup> big: array<f32, H>;\n@compute @workgroup_size(64)\nfn main() { big[0] = 1.0; }\n"
    with pytest.raises(ContractError, match="exceeds the adapter's limit of 16384") as err:
        stitch(w, w.size("8192"), body, max_workgroup_bytes=16384)
    assert err.value.diagnostic.line == 1
    stitch(w, w.size("1024"), body, max_workgroup_bytes=16384)  # 4 KiB fits


_TWO_PASSES = """\
@compute @workgroup_size(64)
fn cols(@builtin(workgroup_id) wid: vec3<u32>) {
    T[wid.x + wid.y * 64u] = X[wid.x];
}
@compute @workgroup_size(64)
fn rows(@builtin(workgroup_id) wid: vec3<u32>) {
    let g = ROWS_TILE;
    Y[g] = T[g];
}
"""


def test_a_later_pass_on_another_grid_may_not_call_vajra_tile():
    """The prelude's TILES_X/TILES_Y/DISPATCH_X are the first pass's, so a later pass on another
    grid (fft at N = 2^11: 32 columns, then 64 rows) that finds its tile with vajra_tile would
    read another pass's elements: refused in one line naming the pass; by workgroup_id it is fine."""
    w = get_workload("fft")
    size = w.size("BATCH=2,N=2048")
    with pytest.raises(ContractError,
                       match=r"pass 'rows' calls vajra_tile on a grid of 64x2 tiles.*first pass's \(32x2\)"):
        stitch(w, size, _TWO_PASSES.replace("ROWS_TILE", "vajra_tile(wid).x"))
    st = stitch(w, size, _TWO_PASSES.replace("ROWS_TILE", "wid.x"))
    assert [p.dispatch[:2] for p in st.passes] == [(32, 2), (64, 2)]


def test_the_row_normalize_example_plans_at_its_large_preset():
    """The README's two-pass example at 4096 x 4096: its normalize pass runs a row of workgroups
    per matrix row (16 x 4096); the 1-D grid of 65536 it had is refused in one line, since only
    the first pass's grid can be folded."""
    from pathlib import Path

    from vajra_tui.engine.workloads import loader

    w = loader.load_file(Path(__file__).resolve().parent.parent / "examples" / "workloads" / "row_normalize.py")
    st = stitch(w, w.size("large"), w.baseline)
    assert [p.dispatch[:2] for p in st.passes] == [(4096, 1), (16, 4096)]
    from dataclasses import replace

    from vajra_tui import Pass

    one_d = replace(w, passes=(w.passes[0], Pass("normalize", grid=lambda s, p: (s["ROWS"] * s["COLS"] // 256, 1, 1))))
    with pytest.raises(ContractError, match=r"pass 'normalize': its grid of 65536x1 workgroups is over .* only a grid "
                                            r"like the first pass's"):
        stitch(one_d, w.size("large"), w.baseline)


def test_an_optional_pass_runs_only_from_a_kernel_that_defines_it():
    """attention's combine is optional: the baseline (and a kernel whose one entry point has
    another name) plan one pass from their // tile:; a module with combine plans both; a module
    with combine alone has no main pass. A first pass cannot be optional, and a pass planned
    from the tile needs the workload's output_grid."""
    from dataclasses import replace

    from vajra_tui import Pass
    from vajra_tui.engine.workloads.base import WorkloadError

    w = get_workload("attention")
    size = w.size("B=1,H=2,S=300,D=64,MASK=1")
    base = stitch(w, size, w.baseline)
    assert [(p.label, p.dispatch[:2]) for p in base.passes] == [("main", (5, 2))]
    renamed = stitch(w, size, w.baseline.replace("fn main(", "fn attend("))
    assert [(p.label, p.entry) for p in renamed.passes] == [("main", "attend")]
    combine = ("\n// tune: CR = 4\nconst CR: u32 = {{CR}}u;\n@compute @workgroup_size(16, CR)\n"
               "fn combine(@builtin(workgroup_id) wid: vec3<u32>) {\n    O[wid.x] = 0.0;\n}\n")
    both = stitch(w, size, w.baseline.replace("fn main(", "fn attend(") + combine)
    assert [(p.label, p.entry, p.dispatch[:2]) for p in both.passes] == [
        ("main", "attend", (5, 2)), ("combine", "combine", (75, 2))]
    with pytest.raises(ContractError, match=r"no @compute entry point named `main` \(it has combine\)"):
        stitch(w, size, combine)
    with pytest.raises(WorkloadError, match="the first pass cannot be optional"):
        replace(w, passes=(replace(w.passes[0], optional=True), w.passes[1]))
    with pytest.raises(WorkloadError, match="output_grid.*grid=None"):
        replace(w, output_grid=None)
