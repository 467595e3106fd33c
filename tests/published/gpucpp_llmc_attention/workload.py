"""gpu.cpp `experimental/kernels/kernels.h`, string `kShaderAttention`, run as published
(see ../SOURCES.md).

llm.c's causal attention forward over packed q, k, v (B, T, 3C), one invocation per (b, t),
looping over the heads. `preatt` holds the scores of the keys up to t only, so it is
scratch; `att` (every row, zero above the diagonal) and `out` are verified. Every buffer is
declared `read_write`, the input too.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vajra_tui import Binding, Workload

WG = 256


def make_inputs(s: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"inp": rng.standard_normal(s["B"] * s["T"] * 3 * s["C"]).astype(np.float32)}


def reference(s: dict[str, int], inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray] | np.ndarray:
    B, T, C, NH = s["B"], s["T"], s["C"], s["NH"]
    hs = C // NH
    x = inputs["inp"].astype(np.float64).reshape(B, T, 3, NH, hs)
    q, k, v = x[:, :, 0].transpose(0, 2, 1, 3), x[:, :, 1].transpose(0, 2, 1, 3), x[:, :, 2].transpose(0, 2, 1, 3)
    sc = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hs)
    mask = np.tril(np.ones((T, T), bool))
    sc = np.where(mask, sc, -np.inf)
    p = np.exp(sc - sc.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    out = (p @ v).transpose(0, 2, 1, 3).reshape(B, T, C)
    return {"att": p.ravel(), "out": out.ravel()}


WORKLOAD = Workload(
    name="gpucpp_llmc_attention",
    summary="llm.c causal attention forward from gpu.cpp, one invocation per (b, t)",
    dims=("B", "T", "C", "NH"),
    presets={"seed": {"B": 2, "T": 48, "C": 64, "NH": 4}},
    bindings=(Binding(0, "inp", "read"), Binding(1, "preatt", "scratch"), Binding(2, "att", "read_write"),
              Binding(3, "out", "read_write"),
              Binding(4, "params", "uniform", struct="Params", fields=(("B", "u32"), ("T", "u32"), ("C", "u32"), ("NH", "u32")),
                      values=lambda s, p: {k: s[k] for k in ("B", "T", "C", "NH")})),
    buffer_len=lambda s: {"inp": s["B"] * s["T"] * 3 * s["C"], "preatt": s["B"] * s["NH"] * s["T"] ** 2,
                          "att": s["B"] * s["NH"] * s["T"] ** 2, "out": s["B"] * s["T"] * s["C"]},
    make_inputs=make_inputs, reference=reference,
    flops=lambda s: 2.0 * s["B"] * s["NH"] * s["T"] ** 2 * (s["C"] // s["NH"]),
    defines=lambda s: {"precision": "f32", "workgroupSize": str(WG)},
    grid=lambda s, p: (-(-(s["B"] * s["T"]) // WG), 1, 1),
    baseline=Path(__file__).with_name("kernel.wgsl").read_text(encoding="utf-8"),
    atol=1e-5, rtol=1e-4,
)
