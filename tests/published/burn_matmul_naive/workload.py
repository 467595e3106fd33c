"""burn-wgpu `crates/burn-wgpu/src/template/matmul/naive.wgsl`, run as published (see ../SOURCES.md).

C = A·B, one invocation per output element, global x over rows. burn's templates write
placeholders with spaces (`{{ elem }}`), and the kernel reads its shapes and strides from an
`info` buffer of u32 that burn's `build_info` fills: the rank, then each tensor's strides,
then each tensor's shape (lhs, rhs, output), so for rank 2
[2, K, 1, N, 1, N, 1, M, K, K, N, M, N].
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vajra_tui import Binding, Workload


def info(s: dict[str, int]) -> np.ndarray:
    M, K, N = s["M"], s["K"], s["N"]
    return np.array([2, K, 1, N, 1, N, 1, M, K, K, N, M, N], dtype=np.uint32)


def make_inputs(s: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"lhs": rng.uniform(-1, 1, s["M"] * s["K"]).astype(np.float32),
            "rhs": rng.uniform(-1, 1, s["K"] * s["N"]).astype(np.float32),
            "info": info(s)}


def reference(s: dict[str, int], inputs: dict[str, np.ndarray]) -> np.ndarray:
    a = inputs["lhs"].astype(np.float64).reshape(s["M"], s["K"])
    b = inputs["rhs"].astype(np.float64).reshape(s["K"], s["N"])
    return (a @ b).ravel()


WORKLOAD = Workload(
    name="burn_matmul_naive",
    summary="burn-wgpu naive matmul (matmul/naive.wgsl), shapes in an info buffer",
    dims=("M", "K", "N"),
    presets={"seed": {"M": 40, "K": 24, "N": 56}},
    bindings=(Binding(0, "lhs", "read"), Binding(1, "rhs", "read"), Binding(2, "output", "read_write"),
              Binding(3, "info", "read", dtype="u32")),
    buffer_len=lambda s: {"lhs": s["M"] * s["K"], "rhs": s["K"] * s["N"], "output": s["M"] * s["N"], "info": 13},
    make_inputs=make_inputs, reference=reference,
    flops=lambda s: 2.0 * s["M"] * s["N"] * s["K"],
    defines=lambda s: {"elem": "f32", "workgroup_size_x": "16", "workgroup_size_y": "16"},
    grid=lambda s, p: (-(-s["M"] // 16), -(-s["N"] // 16), 1),
    baseline=Path(__file__).with_name("kernel.wgsl").read_text(encoding="utf-8"),
    atol=1e-5, rtol=1e-4,
)
