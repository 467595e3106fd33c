"""Two outputs of two kinds from one f32 input: H = X / 2 as f16, Q = round(1000 X) as i32.

A user-style workload for the GPU judge's cross-check (tests/test_gpu_verify.py): an
f16 output (poisoned with a half-precision NaN) and a signed integer output (poisoned
per seed) checked in one verdict, with a relative tolerance on both.
"""

from __future__ import annotations

import numpy as np

from vajra_tui import Binding, Workload


def make_inputs(s: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"X": rng.uniform(-4, 4, s["N"]).astype(np.float32)}


def reference(s: dict[str, int], x: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    v = x["X"].astype(np.float64)
    # the kernel rounds 1000 X in f32: a reference exact in integers, as the GPU judge wants
    return {"H": v / 2, "Q": np.rint((x["X"] * np.float32(1000)).astype(np.float64)).astype(np.int64)}


BASELINE = """\
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < N) {
        H[g.x] = f16(X[g.x] * 0.5);
        Q[g.x] = i32(round(X[g.x] * 1000.0));
    }
}
"""

WORKLOAD = Workload(
    name="mixed", summary="H = X/2 (f16) and Q = round(1000 X) (i32)", dims=("N",),
    presets={"seed": {"N": 4099}},
    bindings=(Binding(0, "X", "read"), Binding(1, "H", "read_write", "f16"),
              Binding(2, "Q", "read_write", "i32")),
    buffer_len=lambda s: {"X": s["N"], "H": s["N"], "Q": s["N"]},
    make_inputs=make_inputs, reference=reference, flops=lambda s: 2.0 * s["N"],
    output_grid=lambda s: (s["N"], 1), atol=0.0, rtol=1e-3, baseline=BASELINE,
)
