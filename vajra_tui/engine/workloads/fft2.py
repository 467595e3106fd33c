"""2-D FFT of an H x W complex f32 image (re, im interleaved, row-major), in two passes.

A built-in, declared exactly as a user's workload file is (see the README). Y = numpy's
``fft2`` of X, unnormalised. Pass ``rows`` does a W-point FFT along each row into the
scratch buffer T; pass ``cols`` does an H-point FFT down each of T's columns into Y. Both
use fft.py's workgroup FFT (radix-2 Stockham in registers, exchanged through 16 KB of
workgroup memory), so H and W are powers of two from 2 to 4096; others are refused in
one line. The tolerance is fft's, over H*W points.

The grids read a kernel's template values: ``CR`` rows a rows workgroup, ``CC`` columns a cols
workgroup, and ``FOLD`` (default 1). A kernel that does the columns' first radix-R step in its
rows pass (the library's ``fold``) declares ``FOLD = R``: its cols pass then runs R x W columns
of H/R points.
"""

from __future__ import annotations

import math

import numpy as np

from vajra_tui import Binding, Pass, Workload
from vajra_tui.engine.workloads.fft import CORE, PER_WG, as_complex, interleaved, log2_of, tolerance


def defines(s: dict[str, int]) -> dict[str, int]:
    """Each pass's workgroup size (at most 256, half the sub-FFT's length)."""
    log2_of("H", s["H"], 1, 12, "fft2")
    log2_of("W", s["W"], 1, 12, "fft2")
    return {"FFT_WR": min(PER_WG, s["W"] // 2), "FFT_WC": min(PER_WG, s["H"] // 2)}


def buffer_len(s: dict[str, int]) -> dict[str, int]:
    defines(s)  # refuses a side the passes cannot do
    n = 2 * s["H"] * s["W"]
    return {"X": n, "Y": n, "T": n}


def make_inputs(s: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"X": rng.uniform(-1.0, 1.0, 2 * s["H"] * s["W"]).astype(np.float32)}


def reference(s: dict[str, int], x: dict[str, np.ndarray]) -> np.ndarray:
    return interleaved(np.fft.fft2(as_complex(x["X"], (s["H"], s["W"]))))


_HEAD = """\
// 2-D FFT in two passes, one row (then one column) per workgroup, radix-2 Stockham in
// registers. The workgroup sizes WR, WC come from the workload's defines.
@group(0) @binding(0) var<storage, read> X: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read_write> Y: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> T: array<vec2<f32>>;
const WR: u32 = {{FFT_WR}}u;
const WC: u32 = {{FFT_WC}}u;

""" + CORE + """
"""

# Pass 1 on its own: benchmarks/experiments/fft2_three.py's baseline shares it.
ROWS_PASS = """\
// Pass 1: row r of X (contiguous), a W-point FFT, into row r of T.
@compute @workgroup_size(WR)
fn rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let base = wid.x * W;
    let half = W / 2u;
    var v: array<vec2<f32>, 16>;
    for (var m = 0u; m * WR < half; m = m + 1u) {
        let j = lid.x + m * WR;
        v[2u * m] = X[base + j];
        v[2u * m + 1u] = X[base + j + half];
    }
    fft_wg(&v, lid.x, WR, W);
    for (var m = 0u; m * WR < half; m = m + 1u) {
        let k = lid.x + m * WR;
        T[base + k] = v[2u * m];
        T[base + k + half] = v[2u * m + 1u];
    }
}
"""

_COLS_PASS = """
// Pass 2: column c of T (stride W), an H-point FFT, into column c of Y.
@compute @workgroup_size(WC)
fn cols(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let c = wid.x;
    let half = H / 2u;
    var v: array<vec2<f32>, 16>;
    for (var m = 0u; m * WC < half; m = m + 1u) {
        let j = lid.x + m * WC;
        v[2u * m] = T[c + j * W];
        v[2u * m + 1u] = T[c + (j + half) * W];
    }
    fft_wg(&v, lid.x, WC, H);
    for (var m = 0u; m * WC < half; m = m + 1u) {
        let k = lid.x + m * WC;
        Y[c + k * W] = v[2u * m];
        Y[c + (k + half) * W] = v[2u * m + 1u];
    }
}
"""

BASELINE = _HEAD + ROWS_PASS + _COLS_PASS

WORKLOAD = Workload(
    name="fft2",
    summary="2-D forward FFT of an H x W complex f32 image (re, im interleaved), H, W powers of two",
    dims=("H", "W"),
    presets={"seed": {"H": 256, "W": 256}, "large": {"H": 4096, "W": 4096}},
    bindings=(Binding(0, "X", "read"), Binding(1, "Y", "read_write"), Binding(2, "T", "scratch")),
    buffer_len=buffer_len,
    make_inputs=make_inputs,
    reference=reference,
    flops=lambda s: 5.0 * s["H"] * s["W"] * math.log2(s["H"] * s["W"]),
    atol=lambda s: tolerance(s["H"] * s["W"]),
    rtol=0.0,
    passes=(Pass("rows", grid=lambda s, p: (s["H"] // int(p.get("CR", 1)), 1, 1)),
            Pass("cols", grid=lambda s, p: (s["W"] * int(p.get("FOLD", 1)) // int(p.get("CC", 1)), 1, 1))),
    defines=defines,
    baseline=BASELINE,
    broadcast=("H", "W"),
)
