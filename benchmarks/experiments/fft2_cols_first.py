"""An experiment, not a built-in: fft2 in two passes, the columns first.

Why (benchmarks/NOTES.md, #27): a 4096-point sub-FFT fills 16 KB of workgroup memory even
with re and im exchanged apart, so a workgroup holds two columns and the built-in's column
pass reads T and writes Y in 16-byte runs down the image. Blocking T (``blk=1``) made that
pass read contiguously but left its writes to Y strided, and gained nothing; for the 1-D fft
removing a strided *write* gained 5%. The 2-D transform is separable in either order, so
here pass ``down`` does the columns of X (reads strided) into T laid out for the second
pass, and pass ``across`` does the rows of T into Y (writes contiguous rows): the only
strided access left is a read. With ``blk=1`` T is in blocks of B = across's rows a
workgroup, T[(r / B) * B * W + c * B + r % B], so ``down`` writes runs of its columns x B
and ``across`` reads one contiguous block; with ``blk=0`` T is X's transpose (``down``
writes whole columns contiguously, ``across`` reads runs of its rows). The kernels are the
library's register design (sources/library/fft_gen.py).

``fold=2`` (``folded``) is the built-in's fold the other way round, by decimation in time:
``down`` runs 2048-point columns of the even rows and of the odd rows, four to a workgroup
(32-byte runs of X read), and ``across`` combines the two halves as it stores whole rows of Y.

Measured on an H100 (NOTES, round 19): the best of these, fold=2 blk=2, ran 0.292 ms against the
built-in's 0.281. Its 32-byte-run reads 64 KB apart cost what the built-in's writes do, so the
built-in keeps its order and this stays an experiment.
"""

from __future__ import annotations

from dataclasses import replace

from vajra_tui import Binding, Pass, Workload
from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.sources.library.fft import templates_for
from vajra_tui.engine.sources.library.fft_gen import PassSpec
from vajra_tui.engine.workloads import fft2
from vajra_tui.engine.workloads.base import SizeError
from vajra_tui.engine.workloads.fft import CORE


def specs(s: dict[str, int]) -> list[PassSpec]:
    """Column g of X into row g of T (X's transpose), then row g of T's transpose into Y."""
    fft2.defines(s)
    h, w = s["H"], s["W"]
    return [PassSpec("down", h, w, "X", "T", "g", w, f"g * {h}u", 1, 0, "CD"),
            PassSpec("across", w, h, "T", "Y", "g", h, f"g * {w}u", 1, 0, "CX")]


def folded(passes: list[PassSpec], s: dict[str, int], fold: int) -> list[PassSpec]:
    """``fold=2``, by decimation in time: ``down`` runs the H/2-point FFTs of the even rows' and
    the odd rows' columns (sub-FFT g = parity * W + column: element i at X[g + i * 2W]) into two
    half-height images E and O of T (row-major); ``across`` holds row k of E and of O in
    neighbouring lanes, transforms both, and stores E + W_H^k O and E - W_H^k O as rows k and
    k + H/2 of Y, whole rows: every write of both passes is contiguous."""
    if fold != 2:
        raise SizeError(f"fold={fold}: columns first folds as radix 2 only")
    h, w = s["H"], s["W"]
    if h < 4:
        raise SizeError(f"fold=2 needs H >= 4 (H={h})")
    part = h // 2
    return [PassSpec("down", part, 2 * w, "X", "T", "g", 2 * w, f"(g / {w}u) * {part * w}u + g % {w}u", w, 0, "CD"),
            PassSpec("across", w, h, "T", "Y", f"(c * {part}u + wid.x) * {w}u", 1,
                     f"(wid.x + c * {part}u) * {w}u", 1, 0, "CX", fold_n=h, fold_r=2, fold_jump=part * w,
                     fold_dit=True)]


def blocked(passes: list[PassSpec], cols: list[int]) -> list[PassSpec]:
    """T in blocks of B = across's rows a workgroup: (column c, row r) at (r / B) * B * W +
    c * B + r % B. Folded, each image in blocks of B = down's columns a workgroup (times
    ``blk``): ``down`` writes a contiguous block (B columns x H/2), ``across`` reads its rows in
    runs of B."""
    down, across = passes
    if across.fold_dit:
        part, w = down.length, across.length
        b = min(cols[0], w)  # a block within one image's width (down's count is 2W)
        return [replace(down, obase=f"(g / {w}u) * {part * w}u + ((g % {w}u) / {b}u) * {b * part}u + g % {b}u",
                        ostride=b),
                replace(across, ibase=f"c * {part * w}u + wid.x * {b}u", istride=1, iblock=b, ijump=b * part)]
    b, w = cols[1], across.length
    return [replace(down, obase=f"g * {b}u", ostride=1, oblock=b, ojump=b * w),
            replace(across, ibase=f"(g / {b}u) * {b * w}u + g % {b}u", istride=b)]


REGS = templates_for("fft2_cols_first", specs, blocked, folded)[0]


def kernel(params: dict, size: dict[str, int], device: DeviceInfo | None = None) -> str:
    """The columns-first kernel at ``params`` (regs, cols, ex, blk, last, fold) for ``device``'s
    limits (None: WebGPU's defaults, 16 KB of workgroup memory); a kernel that cannot run there
    is refused with the template's reason, not rendered with its folding pass cut to one row."""
    point = REGS.point(params)
    if why := REGS.check(point, size, device):
        raise SizeError(f"fft2_cols_first {params}: {why}")
    return REGS.render(point, size, device)


BASELINE = """\
// 2-D FFT in two passes, columns first, one column (then one row) per workgroup, radix-2
// Stockham: column c of X into row c of T (the transpose), then row r of Y from column r of T.
@group(0) @binding(0) var<storage, read> X: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read_write> Y: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> T: array<vec2<f32>>;
const WR: u32 = {{FFT_WR}}u;
const WC: u32 = {{FFT_WC}}u;

""" + CORE + """
@compute @workgroup_size(WC)
fn down(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let c = wid.x;
    let half = H / 2u;
    var v: array<vec2<f32>, 16>;
    for (var m = 0u; m * WC < half; m = m + 1u) {
        let j = lid.x + m * WC;
        v[2u * m] = X[c + j * W];
        v[2u * m + 1u] = X[c + (j + half) * W];
    }
    fft_wg(&v, lid.x, WC, H);
    for (var m = 0u; m * WC < half; m = m + 1u) {
        let k = lid.x + m * WC;
        T[c * H + k] = v[2u * m];
        T[c * H + k + half] = v[2u * m + 1u];
    }
}

@compute @workgroup_size(WR)
fn across(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let r = wid.x;
    let half = W / 2u;
    var v: array<vec2<f32>, 16>;
    for (var m = 0u; m * WR < half; m = m + 1u) {
        let j = lid.x + m * WR;
        v[2u * m] = T[r + j * H];
        v[2u * m + 1u] = T[r + (j + half) * H];
    }
    fft_wg(&v, lid.x, WR, W);
    for (var m = 0u; m * WR < half; m = m + 1u) {
        let k = lid.x + m * WR;
        Y[r * W + k] = v[2u * m];
        Y[r * W + k + half] = v[2u * m + 1u];
    }
}
"""

WORKLOAD = Workload(
    name="fft2_cols_first",
    summary="2-D forward FFT in two passes, the columns first",
    dims=("H", "W"),
    presets={"seed": {"H": 256, "W": 256}, "large": {"H": 4096, "W": 4096}},
    bindings=(Binding(0, "X", "read"), Binding(1, "Y", "read_write"), Binding(2, "T", "scratch")),
    buffer_len=fft2.buffer_len,
    make_inputs=fft2.make_inputs,
    reference=fft2.reference,
    flops=fft2.WORKLOAD.flops,
    atol=fft2.WORKLOAD.atol,
    rtol=0.0,
    passes=(Pass("down", grid=lambda s, p: (s["W"] * int(p.get("FOLD", 1)) // int(p.get("CD", 1)), 1, 1)),
            Pass("across", grid=lambda s, p: (s["H"] // int(p.get("CX", 1)), 1, 1))),
    defines=fft2.defines,
    baseline=BASELINE,
    broadcast=("H", "W"),
)
