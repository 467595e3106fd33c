"""Matrix transpose, B = Aᵀ: a user workload for Vajra, written from the README alone.

A transpose moves data and computes nothing, so its score is bandwidth: the naive
kernel reads A along rows and writes B along columns (every write lands far from the
last); a tiled kernel stages a block in workgroup memory and writes whole rows of B.

    vajra-tui bench -w examples/workloads/transpose.py -k examples/workloads/transpose_tiled.wgsl
    vajra-tui tune  -w examples/workloads/transpose.py -k examples/workloads/transpose_tiled.wgsl \\
        --source params --budget 12 --export out/

Copy this file into the folder `vajra-tui config path` names (`.../workloads/`) and it
appears in the TUI's picker.
"""

from __future__ import annotations

import numpy as np

from vajra_tui import Binding, Workload


def make_inputs(size: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    # of the bindings' dtypes exactly (f32 here): the reference sees what the kernel sees
    return {"A": rng.standard_normal(size["ROWS"] * size["COLS"]).astype(np.float32)}


def reference(size: dict[str, int], inputs: dict[str, np.ndarray]) -> np.ndarray:
    a = inputs["A"].astype(np.float64).reshape(size["ROWS"], size["COLS"])
    return a.T.ravel()  # B is COLS x ROWS, row-major


BASELINE = """\
// Naive transpose: one invocation per element of B.
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = vajra_tile(wid);
    let x = t.x * 16u + lid.x;  // column of B = row of A
    let y = t.y * 16u + lid.y;  // row of B = column of A
    if (x >= ROWS || y >= COLS) {
        return;
    }
    B[y * ROWS + x] = A[x * COLS + y];
}
"""

WORKLOAD = Workload(
    name="transpose",
    summary="B = Aᵀ, A is a ROWS×COLS f32 matrix, row-major",
    dims=("ROWS", "COLS"),
    presets={"seed": {"ROWS": 1024, "COLS": 1024}, "large": {"ROWS": 8192, "COLS": 8192}},
    bindings=(Binding(0, "A", "read"), Binding(1, "B", "read_write")),
    buffer_len=lambda s: {"A": s["ROWS"] * s["COLS"], "B": s["ROWS"] * s["COLS"]},
    make_inputs=make_inputs,
    reference=reference,
    flops=lambda s: 0.0,  # pure data movement: judged by GB/s against the copy rate
    # (x, y) of the output: element (x, y) is B[y * ROWS + x]
    output_grid=lambda s: (s["ROWS"], s["COLS"]),
    baseline=BASELINE,
    atol=0.0,  # a copy is exact
    rtol=0.0,
    broadcast=("ROWS", "COLS"),  # --size 2048 sets both
)
