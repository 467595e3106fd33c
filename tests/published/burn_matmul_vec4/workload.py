"""burn-wgpu `crates/burn-wgpu/src/template/matmul/blocktiling_2d/vec4.wgsl`, run as published
(see ../SOURCES.md).

burn's 2-D block-tiled matmul with vec4 loads: 64×64 output blocks, 32-deep K slices in
workgroup memory, 16×16 invocations of 4×4 outputs each. The template values are the ones
burn's `tiling2d/vec4.rs` registers (B_M = B_N = 64, B_K = 32, workgroup 16×16×1). burn pads
its tensors to whole blocks before launching, so the sizes here are multiples of them.
Shapes come from the same `info` buffer as the naive matmul's.
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
    name="burn_matmul_vec4",
    summary="burn-wgpu block-tiled vec4 matmul (blocktiling_2d/vec4.wgsl), shapes in an info buffer",
    dims=("M", "K", "N"),
    presets={"seed": {"M": 128, "K": 64, "N": 192}},
    bindings=(Binding(0, "lhs", "read"), Binding(1, "rhs", "read"), Binding(2, "output", "read_write"),
              Binding(3, "info", "read", dtype="u32")),
    buffer_len=lambda s: {"lhs": s["M"] * s["K"], "rhs": s["K"] * s["N"], "output": s["M"] * s["N"], "info": 13},
    make_inputs=make_inputs, reference=reference,
    flops=lambda s: 2.0 * s["M"] * s["N"] * s["K"],
    defines=lambda s: {"elem": "f32", "workgroup_size_x": "16", "workgroup_size_y": "16", "workgroup_size_z": "1",
                       "b_m": "64", "b_n": "64", "b_k": "32", "bm_x_bk_4": "512", "bk_x_bn_4": "512", "int": "i32"},
    grid=lambda s, p: (-(-s["M"] // 64), -(-s["N"] // 64), 1),
    baseline=Path(__file__).with_name("kernel.wgsl").read_text(encoding="utf-8"),
    atol=1e-5, rtol=1e-4,
)
