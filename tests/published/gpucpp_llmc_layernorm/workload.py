"""gpu.cpp `experimental/kernels/kernels.h`, string `kShaderLayerNorm`, run as published
(see ../SOURCES.md).

llm.c's layer norm forward, one invocation per (b, t) row: it writes the normalised row and
the row's mean and 1/std, three outputs, all verified. Like every kernel of that file it
declares each buffer `read_write`, the inputs too, and only reads them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vajra_tui import Binding, Workload

WG = 256


def make_inputs(s: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"inp": rng.standard_normal(s["B"] * s["T"] * s["C"]).astype(np.float32) * 2 + 0.5,
            "weight": rng.uniform(0.5, 1.5, s["C"]).astype(np.float32),
            "bias": rng.uniform(-1, 1, s["C"]).astype(np.float32)}


def reference(s: dict[str, int], inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray] | np.ndarray:
    x = inputs["inp"].astype(np.float64).reshape(-1, s["C"])
    mean = x.mean(axis=1)
    rstd = 1.0 / np.sqrt(((x - mean[:, None]) ** 2).mean(axis=1) + 1e-5)
    out = (x - mean[:, None]) * rstd[:, None] * inputs["weight"] + inputs["bias"]
    return {"out": out.ravel(), "mean": mean, "rstd": rstd}


WORKLOAD = Workload(
    name="gpucpp_llmc_layernorm",
    summary="llm.c layernorm forward from gpu.cpp, one invocation per row",
    dims=("B", "T", "C"),
    presets={"seed": {"B": 2, "T": 100, "C": 96}},
    bindings=(Binding(0, "inp", "read"), Binding(1, "weight", "read"), Binding(2, "bias", "read"),
              Binding(3, "out", "read_write"), Binding(4, "mean", "read_write"), Binding(5, "rstd", "read_write"),
              Binding(6, "params", "uniform", struct="Params", fields=(("B", "u32"), ("T", "u32"), ("C", "u32")),
                      values=lambda s, p: {"B": s["B"], "T": s["T"], "C": s["C"]})),
    buffer_len=lambda s: {"inp": s["B"] * s["T"] * s["C"], "weight": s["C"], "bias": s["C"],
                          "out": s["B"] * s["T"] * s["C"], "mean": s["B"] * s["T"], "rstd": s["B"] * s["T"]},
    make_inputs=make_inputs, reference=reference,
    flops=lambda s: 8.0 * s["B"] * s["T"] * s["C"],
    defines=lambda s: {"precision": "f32", "workgroupSize": str(WG)},
    grid=lambda s, p: (-(-(s["B"] * s["T"]) // WG), 1, 1),
    baseline=Path(__file__).with_name("kernel.wgsl").read_text(encoding="utf-8"),
    atol=1e-5, rtol=1e-4,
)
