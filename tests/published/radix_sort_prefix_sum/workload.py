"""kishimisu/WebGPU-Radix-Sort `src/shaders/prefix_sum.js`, string `prefixSumSource`,
entry `reduce_downsweep` (see ../SOURCES.md).

The first pass of the library's prefix sum: each workgroup of 16×16 invocations scans
ITEMS_PER_WORKGROUP = 512 u32 items in place (Blelloch up-sweep/down-sweep, exclusive)
and writes its block's total to `blockSums[workgroup]`. Every override of the kernel has
no default (the library passes them as pipeline constants); here they are the workload's
dims, with the library's defaults, so Vajra must hand them to the pipeline.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vajra_tui import Binding, Workload

WG = {"WORKGROUP_SIZE_X": 16, "WORKGROUP_SIZE_Y": 16, "THREADS_PER_WORKGROUP": 256, "ITEMS_PER_WORKGROUP": 512}


def blocks(size: dict[str, int]) -> int:
    return -(-size["ELEMENT_COUNT"] // size["ITEMS_PER_WORKGROUP"])


def make_inputs(size: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"items": rng.integers(0, 1 << 16, size["ELEMENT_COUNT"]).astype(np.uint32)}


def reference(size: dict[str, int], inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    per = size["ITEMS_PER_WORKGROUP"]
    v = inputs["items"].astype(np.int64)
    scans, sums = [], []
    for start in range(0, len(v), per):
        block = v[start:start + per]
        inclusive = np.cumsum(block) % (1 << 32)
        scans.append(inclusive - block % (1 << 32))  # exclusive: the sum before each item
        sums.append(int(inclusive[-1]))
    exclusive = np.concatenate(scans) % (1 << 32)
    return {"items": exclusive, "blockSums": np.array(sums, np.int64)}


WORKLOAD = Workload(
    name="radix_sort_prefix_sum",
    summary="WebGPU-Radix-Sort prefix_sum reduce_downsweep: per-block exclusive scan of u32 + block sums",
    dims=("ELEMENT_COUNT", *WG),
    presets={"seed": {"ELEMENT_COUNT": 1000, **WG}, "large": {"ELEMENT_COUNT": 512 * 4096, **WG}},
    defaults=dict(WG),
    bindings=(Binding(0, "items", "inout", "u32"), Binding(1, "blockSums", "read_write", "u32")),
    buffer_len=lambda s: {"items": s["ELEMENT_COUNT"], "blockSums": blocks(s)},
    make_inputs=make_inputs,
    reference=reference,
    flops=lambda s: 2.0 * s["ELEMENT_COUNT"],
    entry="reduce_downsweep",
    grid=lambda s, p: (blocks(s), 1, 1),
    baseline=Path(__file__).with_name("kernel.wgsl").read_text(encoding="utf-8"),
    atol=0.0,
    rtol=0.0,
)
