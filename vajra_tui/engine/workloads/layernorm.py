"""Row-wise LayerNorm with a learned scale and shift: the normalisation of every transformer.

Y[r, c] = (X[r, c] - mean_r) / sqrt(var_r + 1e-5) * GAMMA[c] + BETA[c], with the
population variance. Rows sit at offsets up to 10 with spreads down to 0.1, so a
one-pass E[x²] - E[x]² variance loses its digits in f32 and fails, as it would in a
browser model. A built-in, declared exactly as a user's workload file is.
"""

from __future__ import annotations

import numpy as np

from vajra_tui import Binding, Workload

EPS = 1e-5


def make_inputs(s: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    rows, cols = s["ROWS"], s["COLS"]
    offset = rng.choice(np.array([0.0, 1.0, 10.0]), size=(rows, 1))
    spread = rng.choice(np.array([0.1, 1.0, 4.0]), size=(rows, 1))
    x = offset + spread * rng.uniform(-1.0, 1.0, (rows, cols))
    return {"X": x.astype(np.float32).ravel(),
            "GAMMA": rng.uniform(0.5, 1.5, cols).astype(np.float32),
            "BETA": rng.uniform(-0.5, 0.5, cols).astype(np.float32)}


def reference(s: dict[str, int], x: dict[str, np.ndarray]) -> np.ndarray:
    v = x["X"].astype(np.float64).reshape(s["ROWS"], s["COLS"])
    mean = v.mean(axis=1, keepdims=True)
    var = ((v - mean) ** 2).mean(axis=1, keepdims=True)
    y = (v - mean) / np.sqrt(var + EPS)
    return (y * x["GAMMA"].astype(np.float64) + x["BETA"].astype(np.float64)).ravel()


BASELINE = """\
// Naive LayerNorm: one invocation per row, three passes over it (mean, variance, write).
// Each pass walks 16 columns a step: Mesa's llvmpipe ends an invocation after 65,535
// loop steps in all, and it unrolls the fixed inner loop, so rows of up to ~349k verify there.
// tile: COLS x 64
@compute @workgroup_size(1, 64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = vajra_tile(wid).y * 64u + lid.y;
    if (row >= ROWS) {
        return;
    }
    let base = row * COLS;
    var sum = 0.0;
    for (var c = 0u; c < COLS; c = c + 16u) {
        for (var u = 0u; u < 16u; u = u + 1u) {
            if (c + u < COLS) {
                sum = sum + X[base + c + u];
            }
        }
    }
    let mean = sum / f32(COLS);
    var sq = 0.0;
    for (var c = 0u; c < COLS; c = c + 16u) {
        for (var u = 0u; u < 16u; u = u + 1u) {
            if (c + u < COLS) {
                let d = X[base + c + u] - mean;
                sq = sq + d * d;
            }
        }
    }
    let rstd = inverseSqrt(sq / f32(COLS) + 1e-5);
    for (var c = 0u; c < COLS; c = c + 16u) {
        for (var u = 0u; u < 16u; u = u + 1u) {
            let i = c + u;
            if (i < COLS) {
                Y[base + i] = (X[base + i] - mean) * rstd * GAMMA[i] + BETA[i];
            }
        }
    }
}
"""

WORKLOAD = Workload(
    name="layernorm",
    summary="row-wise LayerNorm of a ROWS×COLS f32 matrix, then ·GAMMA + BETA per column",
    dims=("ROWS", "COLS"),
    presets={"seed": {"ROWS": 1024, "COLS": 1024}, "large": {"ROWS": 8192, "COLS": 8192}},
    bindings=(Binding(0, "X", "read"), Binding(1, "GAMMA", "read"), Binding(2, "BETA", "read"),
              Binding(3, "Y", "read_write")),
    # A naive sequential f32 sum of a row at offset 10 rounds its mean by ~1e-5 (at 1024
    # columns), which a spread of 0.1 magnifies to ~3e-4 in the output; a one-pass
    # variance is off by ~0.1. The tolerance sits between, growing with the row.
    atol=lambda s: 1.5e-6 * s["COLS"],
    buffer_len=lambda s: {"X": s["ROWS"] * s["COLS"], "GAMMA": s["COLS"], "BETA": s["COLS"],
                          "Y": s["ROWS"] * s["COLS"]},
    make_inputs=make_inputs,
    reference=reference,
    # sum, subtract and square-add for the variance, normalise, scale and shift
    flops=lambda s: 8.0 * s["ROWS"] * s["COLS"],
    output_grid=lambda s: (s["COLS"], s["ROWS"]),
    baseline=BASELINE,
    broadcast=("ROWS", "COLS"),
)
