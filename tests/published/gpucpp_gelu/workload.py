"""gpu.cpp `examples/hello_world/run.cpp`, string `kGelu`, run as published
(see ../SOURCES.md).

GELU, tanh form, with x itself above 10. The kernel is a gpu.cpp template: its
`{{precision}}` and `{{workgroupSize}}` are filled by Vajra from `defines`, with the
values hello_world uses (f32, 256). It guards with `arrayLength`, so N is any size.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vajra_tui import Binding, Workload

WG = 256


def make_inputs(size: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    x = rng.uniform(-12, 12, size["N"]).astype(np.float32)  # both sides of the x > 10 branch
    return {"inp": x}


def reference(size: dict[str, int], inputs: dict[str, np.ndarray]) -> np.ndarray:
    x = inputs["inp"].astype(np.float64)
    g = 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))
    return np.where(x > 10.0, x, g)


WORKLOAD = Workload(
    name="gpucpp_gelu",
    summary="gpu.cpp hello_world GELU (kGelu template), N f32",
    dims=("N",),
    presets={"seed": {"N": 1000}, "large": {"N": 1 << 24}},
    bindings=(Binding(0, "inp", "read"), Binding(1, "out", "read_write")),
    buffer_len=lambda s: {"inp": s["N"], "out": s["N"]},
    make_inputs=make_inputs,
    reference=reference,
    flops=lambda s: 10.0 * s["N"],
    defines=lambda s: {"precision": "f32", "workgroupSize": str(WG)},
    grid=lambda s, p: (-(-s["N"] // WG), 1, 1),
    baseline=Path(__file__).with_name("kernel.wgsl").read_text(encoding="utf-8"),
    atol=1e-5,
    rtol=1e-4,
)
