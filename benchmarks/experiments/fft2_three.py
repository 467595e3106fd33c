"""An experiment, not a built-in: fft2 in three passes, declared as a user's workload file is.

Why: at 4096^2 the built-in's column pass can hold two 4096-point columns in 48 KB of
workgroup memory, so it reads and writes 16-byte runs (benchmarks/NOTES.md, #27). Here the
columns are a four-step of their own, H = H1 x H2: pass ``cola`` does the H2-point FFTs
down rows n1 + H1*n2 of T in place (times W_H^(n1*k2)), pass ``colb`` the H1-point ones
into Y, both with 16 neighbouring columns a workgroup (128-byte runs). The kernels come from
the library's FFT generator (sources/library/fft_gen.py); the baseline is one of them.
"""

from __future__ import annotations

import numpy as np

from vajra_tui import Binding, Pass, Workload
from vajra_tui.engine.sources.library.fft import templates_for
from vajra_tui.engine.sources.library.fft_gen import PassSpec
from vajra_tui.engine.workloads import fft2
from vajra_tui.engine.workloads.fft import CORE, PER_WG


def split(h: int) -> tuple[int, int]:
    """(H1, H2), H1 <= H2, H1 * H2 = h: the column pass's four-step factors."""
    k = h.bit_length() - 1
    return 1 << (k // 2), 1 << (k - k // 2)


def specs(s: dict[str, int]) -> list[PassSpec]:
    fft2.defines(s)
    h, w = s["H"], s["W"]
    h1, h2 = split(h)
    if h1 < 2:
        raise ValueError("fft2_three: H is at least 4")
    return [PassSpec("rows", w, h, "X", "T", f"g * {w}u", 1, f"g * {w}u", 1, 0, "CR"),
            # column g of row group b = n1 (the grid's y): rows n1 + H1*n2, times W_H^(n1*k2)
            PassSpec("cola", h2, w, "T", "T", f"b * {w}u + g", h1 * w, f"b * {w}u + g", h1 * w, h, "CA",
                     twiddle_g="b"),
            # column g of row group b = k2: rows H1*k2 + n1 in, rows k2 + H2*k1 out
            PassSpec("colb", h1, w, "T", "Y", f"b * {h1 * w}u + g", w, f"b * {w}u + g", h2 * w, 0, "CB")]


# the library's register design over these passes (no blocked layout: its first template)
REGS = templates_for("fft2_three", specs, lambda passes, cols: passes)[0]


def defines(s: dict[str, int]) -> dict[str, int]:
    h1, h2 = split(s["H"])
    return {**fft2.defines(s), "FFT_H1": h1, "FFT_H2": h2, "FFT_WA": min(PER_WG, h2 // 2),
            "FFT_WB": min(PER_WG, h1 // 2)}


BASELINE = """\
// 2-D FFT in three passes, radix-2 Stockham per workgroup: rows, then the columns as
// H = H1 x H2 (H2-point FFTs down rows n1 + H1*n2 in place, then H1-point ones into Y).
@group(0) @binding(0) var<storage, read> X: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read_write> Y: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> T: array<vec2<f32>>;
const WR: u32 = {{FFT_WR}}u;
const WA: u32 = {{FFT_WA}}u;
const WB: u32 = {{FFT_WB}}u;
const H1: u32 = {{FFT_H1}}u;
const H2: u32 = {{FFT_H2}}u;

""" + CORE + """
""" + fft2.ROWS_PASS + """
@compute @workgroup_size(WA)
fn cola(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let n1 = wid.y;
    let g = n1 * W + wid.x;
    let half = H2 / 2u;
    var v: array<vec2<f32>, 16>;
    for (var m = 0u; m * WA < half; m = m + 1u) {
        let j = lid.x + m * WA;
        v[2u * m] = T[g + j * H1 * W];
        v[2u * m + 1u] = T[g + (j + half) * H1 * W];
    }
    fft_wg(&v, lid.x, WA, H2);
    for (var m = 0u; m * WA < half; m = m + 1u) {
        let k = lid.x + m * WA;
        T[g + k * H1 * W] = cmul(v[2u * m], twiddle(n1 * k, H));
        T[g + (k + half) * H1 * W] = cmul(v[2u * m + 1u], twiddle(n1 * (k + half), H));
    }
}

@compute @workgroup_size(WB)
fn colb(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let g = wid.y * W + wid.x;
    let base = wid.y * H1 * W + wid.x;
    let half = H1 / 2u;
    var v: array<vec2<f32>, 16>;
    for (var m = 0u; m * WB < half; m = m + 1u) {
        let j = lid.x + m * WB;
        v[2u * m] = T[base + j * W];
        v[2u * m + 1u] = T[base + (j + half) * W];
    }
    fft_wg(&v, lid.x, WB, H1);
    for (var m = 0u; m * WB < half; m = m + 1u) {
        let k = lid.x + m * WB;
        Y[g + k * H2 * W] = v[2u * m];
        Y[g + (k + half) * H2 * W] = v[2u * m + 1u];
    }
}
"""


def kernel(params: dict, size: dict[str, int]) -> str:
    """The three-pass kernel at ``params`` (regs, cols, ex), for any adapter's 48 KB."""
    return REGS.render(params, size, None)


def _grid(name: str, groups) -> Pass:
    """Columns (or rows) over x, ``cols`` a workgroup; ``groups`` row groups over y."""
    const = {"rows": "CR", "cola": "CA", "colb": "CB"}[name]
    return Pass(name, grid=lambda s, p: ((s["H"] if name == "rows" else s["W"]) // int(p.get(const, 1)),
                                         groups(s), 1))


WORKLOAD = Workload(
    name="fft2_three",
    summary="2-D forward FFT in three passes (rows, then the columns as a four-step)",
    dims=("H", "W"),
    presets={"seed": {"H": 256, "W": 256}, "large": {"H": 4096, "W": 4096}},
    bindings=(Binding(0, "X", "read"), Binding(1, "Y", "read_write"), Binding(2, "T", "scratch")),
    buffer_len=fft2.buffer_len,
    make_inputs=fft2.make_inputs,
    reference=fft2.reference,
    flops=fft2.WORKLOAD.flops,
    atol=fft2.WORKLOAD.atol,
    rtol=0.0,
    passes=(_grid("rows", lambda s: 1),
            _grid("cola", lambda s: split(s["H"])[0]),
            _grid("colb", lambda s: split(s["H"])[1])),
    defines=defines,
    baseline=BASELINE,
    broadcast=("H", "W"),
)
