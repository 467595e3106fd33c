"""gfx-rs/wgpu examples `hello_compute/shader.wgsl`, run as published (see ../SOURCES.md).

Collatz iteration counts, in place: `v_indices` is read_write and holds the input, so it
is an "inout" binding (restored before every dispatch). A start whose trajectory would
overflow u32 yields 0xFFFFFFFF, as the kernel says. `@workgroup_size(1)`: one workgroup
per element.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vajra_tui import Binding, Workload


def collatz_iterations(n: int) -> int:
    """The kernel's loop, on Python ints (its overflow test included)."""
    i = 0
    while n > 1:
        if n % 2 == 0:
            n //= 2
        else:
            if n >= 1431655765:
                return 0xFFFFFFFF
            n = 3 * n + 1
        i += 1
    return i


def make_inputs(size: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    v = rng.integers(0, 1 << 20, size["N"]).astype(np.uint32)
    v[:4] = [0, 1, 27, 1431655765]  # below 2, a long trajectory, an overflowing odd start
    return {"v_indices": v}


def reference(size: dict[str, int], inputs: dict[str, np.ndarray]) -> np.ndarray:
    return np.array([collatz_iterations(int(n)) for n in inputs["v_indices"]], np.uint32)


WORKLOAD = Workload(
    name="wgpu_hello_compute_collatz",
    summary="wgpu hello_compute: Collatz iteration counts of N u32, in place",
    dims=("N",),
    presets={"seed": {"N": 256}, "large": {"N": 65536}},
    bindings=(Binding(0, "v_indices", "inout", "u32"),),
    buffer_len=lambda s: {"v_indices": s["N"]},
    make_inputs=make_inputs,
    reference=reference,
    flops=lambda s: 0.0,
    grid=lambda s, p: (s["N"], 1, 1),
    baseline=Path(__file__).with_name("kernel.wgsl").read_text(encoding="utf-8"),
    atol=0.0,
    rtol=0.0,
)
