"""webgpu-samples `sample/bitonicSort/bitonicCompute.ts`, the WGSL that `NaiveBitonicCompute`
returns, kept as the template literal's text with its `${...}` substitutions (see ../SOURCES.md).

One dispatch of the sample's sort at `algo = 1` (a local flip): each workgroup loads
2 × workgroupSize values into workgroup memory, compares index t with index BH − 1 − t in
every block of BH values, swaps the pairs out of order (counting each swap in the atomic
`counter`) and writes the chunk back. `${workgroupSize}` and `${workgroupSize * 2}` are
filled from the workload's `defines`, as the sample's function argument fills them. The
sample runs the sort's steps as dispatches with other uniform values and copies between
them; one step is what a workload of one uniform can state.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vajra_tui import Binding, Workload

WG = 64  # the sample's workgroupSize argument (it takes up to 256)
LOCAL_FLIP = 1


def make_inputs(s: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"input_data": rng.integers(0, 1 << 20, s["N"]).astype(np.uint32)}


def reference(s: dict[str, int], inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    data = inputs["input_data"].astype(np.int64).reshape(-1, s["BH"])
    lo, hi = np.arange(s["BH"] // 2), s["BH"] - 1 - np.arange(s["BH"] // 2)
    swap = data[:, hi] < data[:, lo]
    out = data.copy()
    out[:, lo] = np.where(swap, data[:, hi], data[:, lo])
    out[:, hi] = np.where(swap, data[:, lo], data[:, hi])
    return {"output_data": out.ravel().astype(np.uint32), "counter": np.array([swap.sum()], dtype=np.uint32)}


WORKLOAD = Workload(
    name="webgpu_samples_bitonic_flip",
    summary="webgpu-samples bitonic sort (bitonicCompute.ts): one local flip step, u32",
    dims=("N", "BH"),
    presets={"seed": {"N": 4096, "BH": 8}},
    bindings=(
        Binding(0, "input_data", "read", dtype="u32"),
        Binding(1, "output_data", "read_write", dtype="u32"),
        Binding(2, "uniforms", "uniform", struct="Uniforms",
                fields=(("width", "f32"), ("height", "f32"), ("algo", "u32"), ("blockHeight", "u32")),
                values=lambda s, p: {"width": 2.0 * WG, "height": s["N"] / (2.0 * WG), "algo": LOCAL_FLIP,
                                     "blockHeight": s["BH"]}),
        Binding(3, "counter", "read_write", dtype="u32", fill=0),
    ),
    buffer_len=lambda s: {"input_data": s["N"], "output_data": s["N"], "counter": 1},
    make_inputs=make_inputs,
    reference=reference,
    flops=lambda s: 0.0,
    defines=lambda s: {"workgroupSize": WG},
    grid=lambda s, p: (s["N"] // (2 * WG), 1, 1),
    baseline=Path(__file__).with_name("kernel.wgsl").read_text(encoding="utf-8"),
    atol=0,
    rtol=0,
)
