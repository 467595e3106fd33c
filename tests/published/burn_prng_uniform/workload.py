"""burn-wgpu `crates/burn-wgpu/src/template/prng/prng.wgsl` with `uniform_inner_loop.wgsl`
pasted into its `{{ prng_loop }}`, as burn's `kernel/prng/uniform.rs` registers it; both run
as published (see ../SOURCES.md).

Uniform random f32 in [LOW, HIGH): per invocation, three Tausworthe steps and an LCG seeded
from `info` (a fixed-size `array<u32, 5>` storage input: the values per invocation, then four
seeds). The template value `prng_loop` is the fragment's 16 lines, which Vajra folds onto the
placeholder's line. The reference replays the generator in NumPy, bit for bit in u32.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vajra_tui import Binding, Workload

WG = 256
SEEDS = (12345, 67890, 13579, 24680)  # info[1..4]: above 128, as the Tausworthe steps need
LOW, HIGH = -2.0, 3.0
HERE = Path(__file__).parent


def make_inputs(s: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"info": np.array([s["NV"], *SEEDS], dtype=np.uint32), "args": np.array([LOW, HIGH], dtype=np.float32)}


def _taus(z: np.ndarray, s1: int, s2: int, s3: int, m: int) -> np.ndarray:
    """One Tausworthe step on u32 values held in u64."""
    b = (((z << np.uint64(s1)) & 0xFFFFFFFF) ^ z) >> np.uint64(s2)  # u32 shifts drop the high bits
    return (((z & np.uint64(m)) << np.uint64(s3)) & 0xFFFFFFFF) ^ b


def reference(s: dict[str, int], inputs: dict[str, np.ndarray]) -> np.ndarray:
    nv, groups = s["NV"], s["N"] // (WG * s["NV"])
    t = np.arange(groups * WG, dtype=np.uint64)
    state = [(np.uint64(int(x)) + (1000000007 * t)) & 0xFFFFFFFF for x in inputs["info"][1:5]]
    out = np.empty(s["N"])
    base = (t // WG) * WG * nv + t % WG
    for i in range(nv):
        state[0] = _taus(state[0], 13, 19, 12, 4294967294) & 0xFFFFFFFF
        state[1] = _taus(state[1], 2, 25, 4, 4294967288) & 0xFFFFFFFF
        state[2] = _taus(state[2], 3, 11, 17, 4294967280) & 0xFFFFFFFF
        state[3] = (1664525 * state[3] + 1013904223) & 0xFFFFFFFF
        r = state[0] ^ state[1] ^ state[2] ^ state[3]
        out[(base + i * WG).astype(np.int64)] = 2.3283064365387e-10 * r.astype(np.float64) * (HIGH - LOW) + LOW
    return out


WORKLOAD = Workload(
    name="burn_prng_uniform",
    summary="burn-wgpu uniform random numbers (prng.wgsl + uniform_inner_loop.wgsl)",
    dims=("N", "NV"),
    presets={"seed": {"N": 8192, "NV": 4}},
    bindings=(Binding(0, "output", "read_write"), Binding(1, "info", "read", dtype="u32"), Binding(2, "args", "read")),
    buffer_len=lambda s: {"output": s["N"], "info": 5, "args": 2},
    make_inputs=make_inputs, reference=reference,
    flops=lambda s: 0.0,
    defines=lambda s: {"elem": "f32", "workgroup_size_x": "16", "workgroup_size_y": "16", "workgroup_size": str(WG),
                       "num_args": "2", "prng_loop": (HERE / "uniform_inner_loop.wgsl").read_text(encoding="utf-8")},
    grid=lambda s, p: (s["N"] // (WG * s["NV"]), 1, 1),
    baseline=(HERE / "kernel.wgsl").read_text(encoding="utf-8"),
    atol=1e-6, rtol=1e-6,
)
