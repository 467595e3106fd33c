"""cryscan/web-rwkv `src/shaders/layer_norm.wgsl`, entry `layer_norm`, run as published
(see ../SOURCES.md).

Layer norm over each token's C channels, in place (`x`: "inout"), Welford statistics
merged across BLOCK_SIZE = 128 invocations, one workgroup per token (grid (1, T, 1)).
The scale `w` and shift `b` are f16 pairs packed in u32 (`array<vec2<u32>>`, unpacked
with `unpack2x16float`), as web-rwkv stores them. FP16, STATS and GROUP_NORM are left
undefined. `EPS` is a bare f32 identifier web-rwkv defines with its macros; here it comes
from `defines` (1e-5: `LN_EPS` in web-rwkv's src/runtime/v4.rs).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vajra_tui import Binding, Workload

EPS = 1e-5


def make_inputs(size: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    c, t = size["C"], size["T"]
    w = rng.uniform(-2, 2, c).astype(np.float16)
    b = rng.uniform(-1, 1, c).astype(np.float16)
    x = (rng.standard_normal((t, c)) * 2.0 + rng.uniform(-3, 3, (t, 1))).astype(np.float32)
    return {"w": w.view(np.uint32).copy(), "b": b.view(np.uint32).copy(), "x": x.ravel()}


def reference(size: dict[str, int], inputs: dict[str, np.ndarray]) -> np.ndarray:
    c, t = size["C"], size["T"]
    w = inputs["w"].view(np.float16).astype(np.float64)  # low half first, as unpack2x16float reads it
    b = inputs["b"].view(np.float16).astype(np.float64)
    x = inputs["x"].astype(np.float64).reshape(t, c)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return ((x - mean) / np.sqrt(var + EPS) * w + b).ravel()


WORKLOAD = Workload(
    name="web_rwkv_layer_norm",
    summary="web-rwkv layer_norm: in place over C channels of T tokens, f16-packed scale/shift",
    dims=("C", "T", "BLOCK_SIZE"),
    presets={"seed": {"C": 1024, "T": 4, "BLOCK_SIZE": 128},
             "large": {"C": 4096, "T": 1024, "BLOCK_SIZE": 128}},
    defaults={"BLOCK_SIZE": 128},
    bindings=(
        Binding(0, "shape", "uniform", fields=(("C", "u32"), ("T", "u32"), ("B", "u32"), ("unused", "u32")),
                values=lambda s, p: {"C": s["C"], "T": s["T"], "B": 1, "unused": 0}),
        Binding(1, "w", "read", "u32"),
        Binding(2, "b", "read", "u32"),
        Binding(3, "x", "inout"),
    ),
    buffer_len=lambda s: {"w": s["C"] // 2, "b": s["C"] // 2, "x": s["T"] * s["C"]},
    make_inputs=make_inputs,
    reference=reference,
    flops=lambda s: 8.0 * s["T"] * s["C"],
    entry="layer_norm",
    defines=lambda s: {"EPS": EPS},
    grid=lambda s, p: (1, s["T"], 1),
    baseline=Path(__file__).with_name("kernel.wgsl").read_text(encoding="utf-8"),
    atol=1e-5,
    rtol=1e-4,
)
