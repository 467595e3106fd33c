"""gpu.cpp `experimental/kernels/kernels.h`, string `kShaderMatmul`, run as published
(see ../SOURCES.md).

llm.c's matmul forward, out = inp · weightᵀ + bias, one invocation per (b, t) row. It asks
`arrayLength(&bias) == 1` to tell "no bias" (a one-element buffer) from a bias per output
channel, so the buffer must be bound at its own length; here bias has OC elements. Every
buffer is declared `read_write`, the inputs too.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vajra_tui import Binding, Workload

WG = 256


def make_inputs(s: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"inp": rng.uniform(-1, 1, s["B"] * s["T"] * s["C"]).astype(np.float32),
            "weight": rng.uniform(-1, 1, s["OC"] * s["C"]).astype(np.float32),
            "bias": rng.uniform(-1, 1, s["OC"]).astype(np.float32)}


def reference(s: dict[str, int], inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray] | np.ndarray:
    x = inputs["inp"].astype(np.float64).reshape(-1, s["C"])
    w = inputs["weight"].astype(np.float64).reshape(s["OC"], s["C"])
    return (x @ w.T + inputs["bias"]).ravel()


WORKLOAD = Workload(
    name="gpucpp_llmc_matmul",
    summary="llm.c matmul forward from gpu.cpp, one invocation per (b, t) row",
    dims=("B", "T", "C", "OC"),
    presets={"seed": {"B": 2, "T": 40, "C": 48, "OC": 72}},
    bindings=(Binding(0, "inp", "read"), Binding(1, "weight", "read"), Binding(2, "bias", "read"),
              Binding(3, "out", "read_write"),
              Binding(4, "params", "uniform", struct="Params", fields=(("B", "u32"), ("T", "u32"), ("C", "u32"), ("OC", "u32")),
                      values=lambda s, p: {k: s[k] for k in ("B", "T", "C", "OC")})),
    buffer_len=lambda s: {"inp": s["B"] * s["T"] * s["C"], "weight": s["OC"] * s["C"], "bias": s["OC"],
                          "out": s["B"] * s["T"] * s["OC"]},
    make_inputs=make_inputs, reference=reference,
    flops=lambda s: 2.0 * s["B"] * s["T"] * s["C"] * s["OC"],
    defines=lambda s: {"precision": "f32", "workgroupSize": str(WG)},
    grid=lambda s, p: (-(-(s["B"] * s["T"]) // WG), 1, 1),
    baseline=Path(__file__).with_name("kernel.wgsl").read_text(encoding="utf-8"),
    atol=1e-5, rtol=1e-4,
)
