"""y = A·x with A an M×K f32 matrix, row-major: the memory-bound heart of LLM decoding.

Every element of A is read once and used once, so a good kernel streams A at the
copy rate; the naive one (one invocation per row) walks its rows far apart. A
built-in, declared exactly as a user's workload file is.
"""

from __future__ import annotations

import numpy as np

from vajra_tui import Binding, Workload


def make_inputs(s: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"A": rng.uniform(-1, 1, s["M"] * s["K"]).astype(np.float32),
            "X": rng.uniform(-1, 1, s["K"]).astype(np.float32)}


def reference(s: dict[str, int], x: dict[str, np.ndarray]) -> np.ndarray:
    a = x["A"].astype(np.float64).reshape(s["M"], s["K"])
    return a @ x["X"].astype(np.float64)


BASELINE = """\
// Naive GEMV: one invocation per row of A, K multiply-adds from global memory.
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = vajra_tile(wid);
    let row = t.x * 64u + lid.x;
    if (t.y >= TILES_Y || row >= M) {
        return;
    }
    var acc = 0.0;
    for (var k = 0u; k < K; k = k + 1u) {
        acc = acc + A[row * K + k] * X[k];
    }
    Y[row] = acc;
}
"""

WORKLOAD = Workload(
    name="gemv",
    summary="y = A·x, A is M×K f32 row-major",
    dims=("M", "K"),
    presets={"seed": {"M": 4096, "K": 4096}, "large": {"M": 8192, "K": 8192}},
    bindings=(Binding(0, "A", "read"), Binding(1, "X", "read"), Binding(2, "Y", "read_write")),
    atol=lambda s: 2e-6 * s["K"],
    buffer_len=lambda s: {"A": s["M"] * s["K"], "X": s["K"], "Y": s["M"]},
    make_inputs=make_inputs,
    reference=reference,
    flops=lambda s: 2.0 * s["M"] * s["K"],
    output_grid=lambda s: (s["M"], 1),
    baseline=BASELINE,
    broadcast=("M", "K"),
)
