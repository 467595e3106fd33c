"""webgpu-samples gameOfLife `compute.wgsl`, run as published (see ../SOURCES.md).

One generation of Conway's Game of Life on u32 cells (0/1). The board's size is a
*storage* `vec2u` binding named `size` (the sample writes [W, H] there); neighbours are
found with u32 arithmetic, `(x - 1) % w`, which wraps round the board only when W and H
divide 2^32, so the reference repeats that arithmetic exactly. `override blockSize = 8`
keeps its default: the grid is (W/8, H/8) and the kernel has no bounds check.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vajra_tui import Binding, Workload

U32 = 1 << 32


def make_inputs(size: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    w, h = size["W"], size["H"]
    return {"size": np.array([w, h], np.uint32),
            "current": rng.integers(0, 2, w * h).astype(np.uint32)}


def reference(size: dict[str, int], inputs: dict[str, np.ndarray]) -> np.ndarray:
    w, h = (int(v) for v in inputs["size"])
    cur = inputs["current"].astype(np.int64).reshape(h, w)
    xs, ys = np.arange(w, dtype=np.int64), np.arange(h, dtype=np.int64)
    n = np.zeros((h, w), np.int64)
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            if dx or dy:  # getIndex: ((y + dy) as u32 % h) * w + ((x + dx) as u32 % w)
                yy, xx = ((ys + dy) % U32) % h, ((xs + dx) % U32) % w
                n += cur[np.ix_(yy, xx)]
    alive = np.where(cur == 1, (n == 2) | (n == 3), n == 3)
    return alive.astype(np.uint32).ravel()


WORKLOAD = Workload(
    name="webgpu_samples_game_of_life",
    summary="webgpu-samples Game of Life generation (compute.wgsl), W x H u32 cells",
    dims=("W", "H"),
    presets={"seed": {"W": 64, "H": 32}, "large": {"W": 2048, "H": 2048}},
    bindings=(Binding(0, "size", "read", "u32"), Binding(1, "current", "read", "u32"),
              Binding(2, "next", "read_write", "u32")),
    buffer_len=lambda s: {"size": 2, "current": s["W"] * s["H"], "next": s["W"] * s["H"]},
    make_inputs=make_inputs,
    reference=reference,
    flops=lambda s: 0.0,
    grid=lambda s, p: (s["W"] // 8, s["H"] // 8, 1),
    baseline=Path(__file__).with_name("kernel.wgsl").read_text(encoding="utf-8"),
    atol=0.0,
    rtol=0.0,
)
