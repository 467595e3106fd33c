"""burn-wgpu `crates/burn-wgpu/src/template/matmul/blocktiling_2d/vec4.wgsl`, run as published
(see ../SOURCES.md).

burn's 2-D block-tiled matmul with vec4 loads: 64×64 output blocks, 32-deep K slices in
workgroup memory, 16×16 invocations of 4×4 outputs each. The template values are the ones
burn's `tiling2d/vec4.rs` registers (B_M = B_N = 64, B_K = 32, workgroup 16×16×1). burn pads
its tensors to whole blocks before launching, so the sizes here are multiples of them.
Shapes come from the same `info` buffer as the naive matmul's.
"""

from __future__ import annotations

import dataclasses
import runpy
from pathlib import Path

HERE = Path(__file__).parent
# the same product, inputs and info buffer as the naive kernel's workload: only the kernel,
# its template values, its grid and the sizes differ
NAIVE = runpy.run_path(str(HERE.parent / "burn_matmul_naive" / "workload.py"))["WORKLOAD"]

WORKLOAD = dataclasses.replace(
    NAIVE,
    name="burn_matmul_vec4",
    summary="burn-wgpu block-tiled vec4 matmul (blocktiling_2d/vec4.wgsl), shapes in an info buffer",
    presets={"seed": {"M": 128, "K": 64, "N": 192}},
    defines=lambda s: {"elem": "f32", "workgroup_size_x": "16", "workgroup_size_y": "16", "workgroup_size_z": "1",
                       "b_m": "64", "b_n": "64", "b_k": "32", "bm_x_bk_4": "512", "bk_x_bn_4": "512", "int": "i32"},
    grid=lambda s, p: (-(-s["M"] // 64), -(-s["N"] // 64), 1),
    baseline=(HERE / "kernel.wgsl").read_text(encoding="utf-8"),
)
