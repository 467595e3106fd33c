"""gpu.cpp `examples/matmul/run.cpp`, string `kShaderMatmul1`, run as published
(see ../SOURCES.md).

C = A·Bᵀ: A is M×K, B is stored transposed (N×K, "effectively column-major"), C is M×N,
one invocation per element, x over rows and y over columns (matmul version 2 of the
example: workgroup 16×16, grid ceil(M/16) × ceil(N/16)). Template values: `{{M}}`,
`{{K}}`, `{{N}}` from the dims, `{{precision}}` and `{{workgroupSize}}` from `defines`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vajra_tui import Binding, Workload


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
    name="gpucpp_matmul_naive",
    summary="gpu.cpp matmul kShaderMatmul1: C = A·Bᵀ (B stored N×K), f32",
    dims=("M", "K", "N"),
    presets={"seed": {"M": 40, "K": 24, "N": 56}, "large": {"M": 1024, "K": 1024, "N": 1024}},
    bindings=(Binding(0, "A", "read"), Binding(1, "B", "read"), Binding(2, "C", "read_write")),
    buffer_len=lambda s: {"A": s["M"] * s["K"], "B": s["N"] * s["K"], "C": s["M"] * s["N"]},
    make_inputs=make_inputs,
    reference=reference,
    flops=lambda s: 2.0 * s["M"] * s["N"] * s["K"],
    defines=lambda s: {"precision": "f32", "workgroupSize": "16, 16, 1"},
    grid=lambda s, p: (-(-s["M"] // 16), -(-s["N"] // 16), 1),
    baseline=Path(__file__).with_name("kernel.wgsl").read_text(encoding="utf-8"),
    atol=lambda s: 1e-6 * s["K"],
    rtol=1e-4,
)
