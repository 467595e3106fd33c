"""gpu.cpp `examples/matmul/run.cpp`, string `kShaderMatmul2`, run as published
(see ../SOURCES.md).

C = A·Bᵀ (B stored N×K) with 16×16 tiles in workgroup memory, 256 invocations in one
dimension (matmul version 3 of the example: `{{tileSize}}` = 16, `{{workgroupSize}}` =
`256, 1, 1`, grid ceil(M/16) × ceil(N/16)). Its loads are unmasked ("iff tileSize is
evenly divisible into M, K, and N"), so every size here is a multiple of 16.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vajra_tui import Binding, Workload

TILE = 16


def make_inputs(size: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    m, k, n = size["M"], size["K"], size["N"]
    return {"A": rng.standard_normal(m * k).astype(np.float32),
            "B": rng.standard_normal(n * k).astype(np.float32)}


def reference(size: dict[str, int], inputs: dict[str, np.ndarray]) -> np.ndarray:
    m, k, n = size["M"], size["K"], size["N"]
    a = inputs["A"].astype(np.float64).reshape(m, k)
    b = inputs["B"].astype(np.float64).reshape(n, k)
    return (a @ b.T).ravel()


WORKLOAD = Workload(
    name="gpucpp_matmul_tiled",
    summary="gpu.cpp matmul kShaderMatmul2: C = A·Bᵀ, 16x16 shared tiles, f32, sizes multiples of 16",
    dims=("M", "K", "N"),
    presets={"seed": {"M": 32, "K": 48, "N": 64}, "large": {"M": 1024, "K": 1024, "N": 1024}},
    bindings=(Binding(0, "A", "read"), Binding(1, "B", "read"), Binding(2, "C", "read_write")),
    buffer_len=lambda s: {"A": s["M"] * s["K"], "B": s["N"] * s["K"], "C": s["M"] * s["N"]},
    make_inputs=make_inputs,
    reference=reference,
    flops=lambda s: 2.0 * s["M"] * s["N"] * s["K"],
    defines=lambda s: {"precision": "f32", "workgroupSize": f"{TILE * TILE}, 1, 1", "tileSize": str(TILE)},
    grid=lambda s, p: (-(-s["M"] // TILE), -(-s["N"] // TILE), 1),
    baseline=Path(__file__).with_name("kernel.wgsl").read_text(encoding="utf-8"),
    atol=lambda s: 1e-6 * s["K"],
    rtol=1e-4,
)
