"""C = A·B in f32, row-major: the classic compute-bound kernel."""

from __future__ import annotations

import numpy as np

from .base import Binding, Size, Workload, signed_uniform


def _inputs(s: Size, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"A": signed_uniform(rng, s["M"] * s["K"]), "B": signed_uniform(rng, s["K"] * s["N"])}


def _reference(s: Size, x: dict[str, np.ndarray]) -> np.ndarray:
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

SGEMM = Workload(
    name="sgemm",
    summary="C = A·B, f32, row-major",
    dims=("M", "N", "K"),
    presets={"seed": {"M": 512, "N": 512, "K": 512}, "large": {"M": 4096, "N": 4096, "K": 4096}},
    bindings=(Binding(0, "A", "read"), Binding(1, "B", "read"), Binding(2, "C", "read_write")),
    # f32 accumulation over K terms of magnitude <= 1; a dropped term costs ~0.3
    atol=lambda s: 2e-6 * s["K"],
    buffer_len=lambda s: {"A": s["M"] * s["K"], "B": s["K"] * s["N"], "C": s["M"] * s["N"]},
    make_inputs=_inputs,
    reference=_reference,
    flops=lambda s: 2.0 * s["M"] * s["N"] * s["K"],
    output_grid=lambda s: (s["N"], s["M"]),
    baseline=BASELINE,
    broadcast=("M", "N", "K"),
)
