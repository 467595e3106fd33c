"""cryscan/web-rwkv `src/shaders/softmax.wgsl`, entry `softmax`, run as published
(see ../SOURCES.md).

Softmax over each token's C channels, in place (`x` is read_write and holds the input:
"inout"), read as vec4 lanes, one workgroup of BLOCK_SIZE invocations per token (grid
(1, T, 1), batch 1). `shape` is a bare `vec4<u32>` uniform ([C, T, B, unused]); FP16 is
left undefined (the f32 path). BLOCK_SIZE is a bare identifier the kernel expects to be
defined; its reductions start at stride 64, so it is 128, as web-rwkv uses it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vajra_tui import Binding, Workload


def make_inputs(size: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"x": (3.0 * rng.standard_normal(size["T"] * size["C"])).astype(np.float32)}


def reference(size: dict[str, int], inputs: dict[str, np.ndarray]) -> np.ndarray:
    x = inputs["x"].astype(np.float64).reshape(size["T"], size["C"])
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).ravel()


WORKLOAD = Workload(
    name="web_rwkv_softmax",
    summary="web-rwkv softmax: in place over C channels (vec4) of T tokens, f32",
    dims=("C", "T", "BLOCK_SIZE"),
    presets={"seed": {"C": 1000, "T": 4, "BLOCK_SIZE": 128},
             "large": {"C": 65536, "T": 1024, "BLOCK_SIZE": 128}},
    defaults={"BLOCK_SIZE": 128},
    bindings=(
        Binding(0, "shape", "uniform", fields=(("C", "u32"), ("T", "u32"), ("B", "u32"), ("unused", "u32")),
                values=lambda s, p: {"C": s["C"], "T": s["T"], "B": 1, "unused": 0}),
        Binding(1, "x", "inout"),
    ),
    buffer_len=lambda s: {"x": s["T"] * s["C"]},
    make_inputs=make_inputs,
    reference=reference,
    flops=lambda s: 5.0 * s["T"] * s["C"],
    entry="softmax",
    grid=lambda s, p: (1, s["T"], 1),
    baseline=Path(__file__).with_name("kernel.wgsl").read_text(encoding="utf-8"),
    atol=1e-7,
    rtol=1e-4,
)
