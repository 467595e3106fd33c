"""gpu.cpp `examples/transpose/run.cpp`, string `kShaderTranspose1`, run as published
(see ../SOURCES.md).

B = Aᵀ: A is M×N, B is N×M; x runs over B's rows (N), y over its columns (M), workgroup
16×16 (transpose version 1 of the example). No bounds check: M and N are multiples of 16.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vajra_tui import Binding, Workload


def make_inputs(size: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"A": rng.standard_normal(size["M"] * size["N"]).astype(np.float32)}


def reference(size: dict[str, int], inputs: dict[str, np.ndarray]) -> np.ndarray:
    return inputs["A"].astype(np.float64).reshape(size["M"], size["N"]).T.ravel()


WORKLOAD = Workload(
    name="gpucpp_transpose",
    summary="gpu.cpp transpose kShaderTranspose1: B = Aᵀ, naive, f32, sizes multiples of 16",
    dims=("M", "N"),
    presets={"seed": {"M": 48, "N": 32}, "large": {"M": 4096, "N": 4096}},
    bindings=(Binding(0, "A", "read"), Binding(1, "B", "read_write")),
    buffer_len=lambda s: {"A": s["M"] * s["N"], "B": s["M"] * s["N"]},
    make_inputs=make_inputs,
    reference=reference,
    flops=lambda s: 0.0,
    defines=lambda s: {"precision": "f32", "workgroupSize": "16, 16, 1"},
    grid=lambda s, p: (s["N"] // 16, s["M"] // 16, 1),
    baseline=Path(__file__).with_name("kernel.wgsl").read_text(encoding="utf-8"),
    atol=0.0,
    rtol=0.0,
)
