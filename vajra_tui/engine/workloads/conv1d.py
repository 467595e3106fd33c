"""Valid 1-D correlation Y[i] = sum_k X[i+k]·W[k]; X holds N+K-1 elements.

A built-in, declared exactly as a user's workload file is (see the README).
"""

from __future__ import annotations

import numpy as np

from vajra_tui import Binding, Workload


def make_inputs(s: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"X": rng.uniform(-1, 1, s["N"] + s["K"] - 1).astype(np.float32),
            "W": rng.uniform(-1, 1, s["K"]).astype(np.float32)}


def reference(s: dict[str, int], x: dict[str, np.ndarray]) -> np.ndarray:
    n, k = s["N"], s["K"]
    xs, w = x["X"].astype(np.float64), x["W"].astype(np.float64)
    y = np.zeros(n, dtype=np.float64)
    for j in range(k):  # K shifted passes: no N*K temporary at N = 2^25
        y += xs[j : j + n] * w[j]
    return y


BASELINE = """\
// Naive conv1d: one invocation per output, K taps read from global memory.
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = vajra_tile(wid);
    let i = t.x * 256u + lid.x;
    if (t.y >= TILES_Y || i >= N) {
        return;
    }
    var acc = 0.0;
    for (var k = 0u; k < K; k = k + 1u) {
        acc = acc + X[i + k] * W[k];
    }
    Y[i] = acc;
}
"""

WORKLOAD = Workload(
    name="conv1d",
    summary="Y[i] = Σ_k X[i+k]·W[k], valid correlation",
    dims=("N", "K"),
    presets={"seed": {"N": 1_048_576, "K": 64}, "large": {"N": 33_554_432, "K": 64}},
    bindings=(Binding(0, "X", "read"), Binding(1, "W", "read"), Binding(2, "Y", "read_write")),
    atol=lambda s: 2e-6 * s["K"],
    buffer_len=lambda s: {"X": s["N"] + s["K"] - 1, "W": s["K"], "Y": s["N"]},
    make_inputs=make_inputs,
    reference=reference,
    flops=lambda s: 2.0 * s["N"] * s["K"],
    output_grid=lambda s: (s["N"], 1),
    baseline=BASELINE,
    defaults={"K": 64},
)
