"""kishimisu/WebGPU-Radix-Sort's whole prefix sum, as the library dispatches it (see ../SOURCES.md).

The same published module, unmodified, run in three passes as the library's
`PrefixSumKernel` runs a two-level scan: `reduce_downsweep` scans each block of 512 items
and writes the block totals; `reduce_downsweep` again, its `items` bound to those totals
and its `blockSums` to a second scratch buffer, scans the totals; `add_block_sums` adds
each block's scanned total to its items. The levels differ in the buffers they bind and
in the `ELEMENT_COUNT` override, which is what `Pass(bind=..., constants=...)` says.
Two levels cover up to 512 * 512 items.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vajra_tui import Binding, Pass, Workload

WG = {"WORKGROUP_SIZE_X": 16, "WORKGROUP_SIZE_Y": 16, "THREADS_PER_WORKGROUP": 256, "ITEMS_PER_WORKGROUP": 512}


def blocks(n: int) -> int:
    return -(-n // WG["ITEMS_PER_WORKGROUP"])


def make_inputs(size: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"items": rng.integers(0, 1 << 12, size["ELEMENT_COUNT"]).astype(np.uint32)}


def reference(size: dict[str, int], inputs: dict[str, np.ndarray]) -> np.ndarray:
    v = inputs["items"].astype(np.int64)
    return (np.cumsum(v) - v) % (1 << 32)  # the exclusive scan of the whole array


WORKLOAD = Workload(
    name="radix_sort_prefix_sum_full",
    summary="WebGPU-Radix-Sort prefix sum, two levels in three passes: exclusive scan of u32, in place",
    dims=("ELEMENT_COUNT", *WG),
    presets={"seed": {"ELEMENT_COUNT": 100_000, **WG}, "large": {"ELEMENT_COUNT": 512 * 512, **WG}},
    defaults=dict(WG),
    bindings=(
        Binding(0, "items", "inout", "u32"),
        Binding(1, "blockSums", "scratch", "u32"),
        Binding(2, "blockSums2", "scratch", "u32"),
    ),
    buffer_len=lambda s: {"items": s["ELEMENT_COUNT"], "blockSums": blocks(s["ELEMENT_COUNT"]),
                          "blockSums2": blocks(blocks(s["ELEMENT_COUNT"]))},
    make_inputs=make_inputs,
    reference=reference,
    flops=lambda s: 2.0 * s["ELEMENT_COUNT"],
    passes=(
        Pass("reduce_downsweep", name="scan_blocks",
             grid=lambda s, p: (blocks(s["ELEMENT_COUNT"]), 1, 1)),
        Pass("reduce_downsweep", name="scan_totals",
             grid=lambda s, p: (blocks(blocks(s["ELEMENT_COUNT"])), 1, 1),
             bind={"items": "blockSums", "blockSums": "blockSums2"},
             constants=lambda s, p: {"ELEMENT_COUNT": blocks(s["ELEMENT_COUNT"])}),
        Pass("add_block_sums", grid=lambda s, p: (blocks(s["ELEMENT_COUNT"]), 1, 1)),
    ),
    baseline=Path(__file__).with_name("kernel.wgsl").read_text(encoding="utf-8"),
    atol=0.0,
    rtol=0.0,
)
