"""C = A·B in f32, row-major: the classic compute-bound kernel.

A built-in, declared exactly as a user's workload file is (see the README).
"""

from __future__ import annotations

import numpy as np

from vajra_tui import Binding, Workload


def make_inputs(s: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"A": rng.uniform(-1, 1, s["M"] * s["K"]).astype(np.float32),
            "B": rng.uniform(-1, 1, s["K"] * s["N"]).astype(np.float32)}


def reference(s: dict[str, int], x: dict[str, np.ndarray]) -> np.ndarray:
    a = x["A"].astype(np.float64).reshape(s["M"], s["K"])
    b = x["B"].astype(np.float64).reshape(s["K"], s["N"])
    return (a @ b).ravel()


BASELINE = """\
// Naive SGEMM: one invocation per output element of C.
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = vajra_tile(wid);
    let col = t.x * 16u + lid.x;
    let row = t.y * 16u + lid.y;
    if (row >= M || col >= N) {
        return;
    }
    var acc = 0.0;
    for (var k = 0u; k < K; k = k + 1u) {
        acc = acc + A[row * K + k] * B[k * N + col];
    }
    C[row * N + col] = acc;
}
"""

WORKLOAD = Workload(
    name="sgemm",
    summary="C = A·B, f32, row-major",
    dims=("M", "N", "K"),
    presets={"seed": {"M": 512, "N": 512, "K": 512}, "large": {"M": 4096, "N": 4096, "K": 4096}},
    bindings=(Binding(0, "A", "read"), Binding(1, "B", "read"), Binding(2, "C", "read_write")),
    # f32 accumulation over K terms of magnitude <= 1; a dropped term costs ~0.3
    atol=lambda s: 2e-6 * s["K"],
    buffer_len=lambda s: {"A": s["M"] * s["K"], "B": s["K"] * s["N"], "C": s["M"] * s["N"]},
    make_inputs=make_inputs,
    reference=reference,
    flops=lambda s: 2.0 * s["M"] * s["N"] * s["K"],
    output_grid=lambda s: (s["N"], s["M"]),
    baseline=BASELINE,
    broadcast=("M", "N", "K"),
)
