"""milhidaka/webgpu-blas `src/shader_sgemm_generic.ts`, string `Shader`, run as published
(see ../SOURCES.md).

C = alpha·A·B (A M×K, B K×N, row-major), one invocation per element, 8×8 workgroups,
grid ceil(N/8) × ceil(M/8) as `sgemm_generic` dispatches it. The sizes and alpha are
not constants: the library passes them in a *storage* struct of four f32 (`cmeta`,
binding 3), which the kernel reads into function-scope `var M/N/K` (shadowing Vajra's
size constants of the same names).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vajra_tui import Binding, Workload

ALPHA = 1.5


def make_inputs(size: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    m, n, k = size["M"], size["N"], size["K"]
    return {"array_a": rng.standard_normal(m * k).astype(np.float32),
            "array_b": rng.standard_normal(k * n).astype(np.float32),
            "cmeta": np.array([m, n, k, ALPHA], np.float32)}


def reference(size: dict[str, int], inputs: dict[str, np.ndarray]) -> np.ndarray:
    m, n, k = size["M"], size["N"], size["K"]
    alpha = float(inputs["cmeta"][3])
    a = inputs["array_a"].astype(np.float64).reshape(m, k)
    b = inputs["array_b"].astype(np.float64).reshape(k, n)
    return (alpha * (a @ b)).ravel()


WORKLOAD = Workload(
    name="webgpu_blas_sgemm_generic",
    summary="webgpu-blas sgemm_generic: C = alpha·A·B, f32, sizes in a storage struct",
    dims=("M", "N", "K"),
    presets={"seed": {"M": 40, "N": 24, "K": 16}, "large": {"M": 1024, "N": 1024, "K": 1024}},
    bindings=(Binding(0, "array_a", "read"), Binding(1, "array_b", "read"),
              Binding(2, "array_c", "read_write"), Binding(3, "cmeta", "read")),
    buffer_len=lambda s: {"array_a": s["M"] * s["K"], "array_b": s["K"] * s["N"],
                          "array_c": s["M"] * s["N"], "cmeta": 4},
    make_inputs=make_inputs,
    reference=reference,
    flops=lambda s: 2.0 * s["M"] * s["N"] * s["K"],
    grid=lambda s, p: (-(-s["N"] // 8), -(-s["M"] // 8), 1),
    baseline=Path(__file__).with_name("kernel.wgsl").read_text(encoding="utf-8"),
    atol=lambda s: 1.5e-6 * s["K"],
    rtol=1e-4,
)
