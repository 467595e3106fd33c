"""An experiment, not a built-in: conv1d with its K taps in a uniform buffer.

Why (benchmarks/NOTES.md, #27, 2026-12-05): the built-in's best kernel (conv1d_stream.py,
``wsrc=2``) holds W in 64 registers for the workgroup's life, and sits at 56% of the FMA
peak; rounds 5-8 ruled out W's shared reads, X's bank conflicts, the per-tile overhead and
the loads in flight, and round 8 found that 9 more registers a lane cost more than they
hid. A tap that is the same for every lane, at an index known when the kernel is generated,
can be an operand read from the constant bank (NVIDIA's FFMA takes one there) if it lives
in a ``var<uniform>``: no register, no shared read. A storage input cannot be bound as a
uniform, so this workload declares the taps twice, as the storage input W (which the
built-in's kernels read, unchanged, as controls in the same session) and as the uniform P,
both a fixed function of K (a user's filter known when the kernel runs); the experiment's
kernels are the library's streamed kernels with ``let wN = ...`` taken from P.
"""

from __future__ import annotations

import re

import numpy as np

from vajra_tui import Binding, Workload
from vajra_tui.engine.sources.library import conv1d_stream
from vajra_tui.engine.workloads import conv1d

MAX_K = 256  # 64 vec4: a 1 KiB uniform


def taps(k: int) -> np.ndarray:
    """The filter: K values in [-1, 1], the same for every run at this K."""
    return np.random.default_rng(1000 + k).uniform(-1.0, 1.0, k).astype(np.float32)


def _values(s: dict[str, int], p: dict) -> dict:
    k = s["K"]
    if k > MAX_K:
        raise ValueError(f"K up to {MAX_K}")
    padded = np.zeros(4 * (MAX_K // 4), dtype=np.float32)
    padded[:k] = taps(k)
    return {"w": [tuple(float(v) for v in padded[i:i + 4]) for i in range(0, len(padded), 4)]}


def make_inputs(s: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"X": rng.uniform(-1, 1, s["N"] + s["K"] - 1).astype(np.float32), "W": taps(s["K"])}


def reference(s: dict[str, int], x: dict[str, np.ndarray]) -> np.ndarray:
    return conv1d.reference(s, {"X": x["X"], "W": taps(s["K"])})


BASELINE = """\
// Naive conv1d: one invocation per output, K taps read from the uniform.
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = vajra_tile(wid);
    let i = t.x * 256u + lid.x;
    if (t.y >= TILES_Y || i >= N) {
        return;
    }
    var acc = 0.0;
    for (var k = 0u; k < K; k = k + 1u) {
        acc = acc + X[i + k] * P.w[k / 4u][k % 4u];
    }
    Y[i] = acc;
}
"""

_TAP = re.compile(r"let w(\d+) = vec4<f32>\([^;]*\);")


def kernel(params: dict, size: dict[str, int]) -> str:
    """The library's streamed kernel (``wsrc=2``) at ``params``, its taps read from P."""
    if params.get("wsrc") != 2:
        raise ValueError("the taps replace wsrc=2's registers")
    src = conv1d_stream.render(params, size, None)
    out, n = _TAP.subn(lambda m: f"let w{m.group(1)} = P.w[{m.group(1)}u];", src)
    if n != -(-size["K"] // 4):
        raise ValueError(f"expected {-(-size['K'] // 4)} tap lines, found {n}")
    return out


WORKLOAD = Workload(
    name="conv1d_taps",
    summary="Y[i] = Σ_k X[i+k]·w[k], valid correlation, the taps a uniform",
    dims=("N", "K"),
    presets={"seed": {"N": 1_048_576, "K": 64}, "large": {"N": 33_554_432, "K": 64}},
    bindings=(Binding(0, "X", "read"), Binding(1, "W", "read"), Binding(2, "Y", "read_write"),
              Binding(3, "P", "uniform", fields=(("w", f"array<vec4<f32>, {MAX_K // 4}>"),), struct="Taps",
                      values=_values)),
    atol=lambda s: 2e-6 * s["K"],
    buffer_len=lambda s: {"X": s["N"] + s["K"] - 1, "W": s["K"], "Y": s["N"]},
    make_inputs=make_inputs,
    reference=reference,
    flops=lambda s: 2.0 * s["N"] * s["K"],
    output_grid=lambda s: (s["N"], 1),
    baseline=BASELINE,
    defaults={"K": 64},
)
