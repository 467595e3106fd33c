"""Row-wise softmax: memory-bound, and a trap for kernels that skip the max.

A built-in, declared exactly as a user's workload file is (see the README).
"""

from __future__ import annotations

import numpy as np

from vajra_tui import Binding, Workload


def make_inputs(s: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    rows, cols = s["ROWS"], s["COLS"]
    # Rows at three scales; the largest spans +-100 around its centre, past exp's f32
    # overflow (~88.7). Each row is centred at its own offset in [-1000, 1000]: with every
    # row within +-100 of zero, exp(x - 50) stood in for exp(x - max) on every row, and a
    # kernel that skipped the max walk was verified and crowned (a held-out check).
    scale = rng.choice(np.array([1.0, 10.0, 100.0]), size=(rows, 1))
    offset = rng.uniform(-1000.0, 1000.0, (rows, 1))
    x = rng.uniform(-1.0, 1.0, (rows, cols)) * scale
    big = np.flatnonzero(scale[:, 0] == 100.0)
    x[big, rng.integers(0, cols, big.size)] = 100.0
    if cols > 1:
        x[big, rng.integers(0, cols, big.size)] = -100.0
    return {"X": (x + offset).astype(np.float32).ravel()}


def reference(s: dict[str, int], x: dict[str, np.ndarray]) -> np.ndarray:
    v = x["X"].astype(np.float64).reshape(s["ROWS"], s["COLS"])
    e = np.exp(v - v.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).ravel()


BASELINE = """\
// Naive softmax: one invocation per row, three passes over it (max, sum, write).
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
    var m = X[base];
    for (var c = 0u; c < COLS; c = c + 16u) {
        for (var u = 0u; u < 16u; u = u + 1u) {
            if (c + u < COLS) {
                m = max(m, X[base + c + u]);
            }
        }
    }
    var sum = 0.0;
    for (var c = 0u; c < COLS; c = c + 16u) {
        for (var u = 0u; u < 16u; u = u + 1u) {
            if (c + u < COLS) {
                sum = sum + exp(X[base + c + u] - m);
            }
        }
    }
    for (var c = 0u; c < COLS; c = c + 16u) {
        for (var u = 0u; u < 16u; u = u + 1u) {
            if (c + u < COLS) {
                Y[base + c + u] = exp(X[base + c + u] - m) / sum;
            }
        }
    }
}
"""

WORKLOAD = Workload(
    name="softmax",
    summary="row-wise softmax of a ROWS×COLS f32 matrix",
    dims=("ROWS", "COLS"),
    presets={"seed": {"ROWS": 1024, "COLS": 1024}, "large": {"ROWS": 8192, "COLS": 8192}},
    bindings=(Binding(0, "X", "read"), Binding(1, "Y", "read_write")),
    atol=lambda s: 1e-6,
    buffer_len=lambda s: {"X": s["ROWS"] * s["COLS"], "Y": s["ROWS"] * s["COLS"]},
    make_inputs=make_inputs,
    reference=reference,
    # max, subtract, exp, add, divide
    flops=lambda s: 5.0 * s["ROWS"] * s["COLS"],
    output_grid=lambda s: (s["COLS"], s["ROWS"]),
    baseline=BASELINE,
    broadcast=("ROWS", "COLS"),
)
