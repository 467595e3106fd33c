"""gpu.cpp `experimental/kernels/kernels.h`, string `kShaderEncoder`, run as published
(see ../SOURCES.md).

llm.c's encoder forward: out[b, t] = wte[token] + wpe[t], with the token ids an i32 input.
Every buffer is declared `read_write`, the inputs too.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vajra_tui import Binding, Workload

WG = 256
V = 50


def make_inputs(s: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"inp": rng.integers(0, V, s["B"] * s["T"]).astype(np.int32),
            "wte": rng.standard_normal(V * s["C"]).astype(np.float32),
            "wpe": rng.standard_normal(s["T"] * s["C"]).astype(np.float32)}


def reference(s: dict[str, int], inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray] | np.ndarray:
    wte = inputs["wte"].astype(np.float64).reshape(V, s["C"])
    wpe = inputs["wpe"].astype(np.float64).reshape(s["T"], s["C"])
    ids = inputs["inp"].reshape(s["B"], s["T"])
    return (wte[ids] + wpe[None]).ravel()


WORKLOAD = Workload(
    name="gpucpp_llmc_encoder",
    summary="llm.c encoder forward from gpu.cpp",
    dims=("B", "T", "C"),
    presets={"seed": {"B": 3, "T": 37, "C": 40}},
    bindings=(Binding(0, "inp", "read", dtype="i32"), Binding(1, "wte", "read"), Binding(2, "wpe", "read"),
              Binding(3, "out", "read_write"),
              Binding(4, "params", "uniform", struct="Params", fields=(("B", "u32"), ("T", "u32"), ("C", "u32")),
                      values=lambda s, p: {k: s[k] for k in ("B", "T", "C")})),
    buffer_len=lambda s: {"inp": s["B"] * s["T"], "wte": V * s["C"], "wpe": s["T"] * s["C"], "out": s["B"] * s["T"] * s["C"]},
    make_inputs=make_inputs, reference=reference,
    flops=lambda s: 1.0 * s["B"] * s["T"] * s["C"],
    defines=lambda s: {"precision": "f32", "workgroupSize": str(WG)},
    grid=lambda s, p: (-(-(s["B"] * s["T"]) // WG), 1, 1),
    baseline=Path(__file__).with_name("kernel.wgsl").read_text(encoding="utf-8"),
    atol=1e-6, rtol=1e-6,
)
