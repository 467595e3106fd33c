"""gfx-rs/wgpu examples `hello_workgroups/shader.wgsl`, run as published (see ../SOURCES.md).

Workgroup i adds 1 to a[i] (its invocation 0) and to b[i] (its invocation 1): two i32
buffers that are both input and output ("inout"). One workgroup per element.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vajra_tui import Binding, Workload


def make_inputs(size: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    n = size["N"]
    return {"a": rng.integers(-1000, 1000, n).astype(np.int32),
            "b": rng.integers(-1000, 1000, n).astype(np.int32)}


def reference(size: dict[str, int], inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {"a": inputs["a"].astype(np.int64) + 1, "b": inputs["b"].astype(np.int64) + 1}


WORKLOAD = Workload(
    name="wgpu_hello_workgroups",
    summary="wgpu hello_workgroups: a[i] += 1, b[i] += 1 in place, i32",
    dims=("N",),
    presets={"seed": {"N": 64}, "large": {"N": 65535}},
    bindings=(Binding(0, "a", "inout", "i32"), Binding(1, "b", "inout", "i32")),
    buffer_len=lambda s: {"a": s["N"], "b": s["N"]},
    make_inputs=make_inputs,
    reference=reference,
    flops=lambda s: 2.0 * s["N"],
    grid=lambda s, p: (s["N"], 1, 1),
    baseline=Path(__file__).with_name("kernel.wgsl").read_text(encoding="utf-8"),
    atol=0.0,
    rtol=0.0,
)
