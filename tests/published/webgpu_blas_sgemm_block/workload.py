"""milhidaka/webgpu-blas `src/shader_sgemm_block.ts`, string `Shader`, run as published
(see ../SOURCES.md).

C = alpha·A·B with vec4 loads and stores: each invocation computes a 4×8 block of C,
8×8 workgroups, grid (N/64, M/32) as `sgemm_block` dispatches it, so M is a multiple of
32, N of 64 and K of 4. The sizes and alpha come in a storage struct of seven f32
(`cmeta`: M, N, K, M/4, N/4, K/4, alpha), as the library fills it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vajra_tui import Binding, Workload

ALPHA = 0.75


def make_inputs(size: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    m, n, k = size["M"], size["N"], size["K"]
    return {"array_a": rng.standard_normal(m * k).astype(np.float32),
            "array_b": rng.standard_normal(k * n).astype(np.float32),
            "cmeta": np.array([m, n, k, m / 4, n / 4, k / 4, ALPHA], np.float32)}


def reference(size: dict[str, int], inputs: dict[str, np.ndarray]) -> np.ndarray:
    m, n, k = size["M"], size["N"], size["K"]
    alpha = float(inputs["cmeta"][6])
    a = inputs["array_a"].astype(np.float64).reshape(m, k)
    b = inputs["array_b"].astype(np.float64).reshape(k, n)
    return (alpha * (a @ b)).ravel()


WORKLOAD = Workload(
    name="webgpu_blas_sgemm_block",
    summary="webgpu-blas sgemm_block: C = alpha·A·B, vec4, 4x8 per invocation, f32",
    dims=("M", "N", "K"),
    presets={"seed": {"M": 64, "N": 64, "K": 32}, "large": {"M": 1024, "N": 1024, "K": 1024}},
    bindings=(Binding(0, "array_a", "read"), Binding(1, "array_b", "read"),
              Binding(2, "array_c", "read_write"), Binding(3, "cmeta", "read")),
    buffer_len=lambda s: {"array_a": s["M"] * s["K"], "array_b": s["K"] * s["N"],
                          "array_c": s["M"] * s["N"], "cmeta": 7},
    make_inputs=make_inputs,
    reference=reference,
    flops=lambda s: 2.0 * s["M"] * s["N"] * s["K"],
    grid=lambda s, p: (s["N"] // 64, s["M"] // 32, 1),
    baseline=Path(__file__).with_name("kernel.wgsl").read_text(encoding="utf-8"),
    atol=lambda s: 1e-6 * s["K"],
    rtol=1e-4,
)
