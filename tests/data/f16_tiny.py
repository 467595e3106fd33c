"""One f16 output whose every value is subnormal: H = X · 2^-17 for X in [-4, 4).

A user-style workload for the judges' f16 tolerance (tests/test_gpu_verify.py). Halves
below 2^-14 are spaced 2^-24 apart, so the nearest half to the float64 reference
misses it by up to 2^-25, which is a relative error of up to 50% for the smallest
values; a relative tolerance alone would reject the correctly rounded answer.
"""

from __future__ import annotations

import numpy as np

from vajra_tui import Binding, Workload


def make_inputs(s: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"X": rng.uniform(-4, 4, s["N"]).astype(np.float32)}


def reference(s: dict[str, int], x: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {"H": x["X"].astype(np.float64) * 2.0**-17}


BASELINE = """\
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < N) { H[g.x] = f16(X[g.x] * 0.00000762939453125); }
}
"""

WORKLOAD = Workload(
    name="f16_tiny", summary="H = X / 2^17 in f16: every value subnormal", dims=("N",),
    presets={"seed": {"N": 4099}},
    bindings=(Binding(0, "X", "read"), Binding(1, "H", "read_write", "f16")),
    buffer_len=lambda s: {"X": s["N"], "H": s["N"]},
    make_inputs=make_inputs, reference=reference, flops=lambda s: 1.0 * s["N"],
    output_grid=lambda s: (s["N"], 1), atol=0.0, rtol=1e-3, baseline=BASELINE,
)
