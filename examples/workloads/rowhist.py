"""Per-row histograms of small integers: H[r, b] counts the elements of row r of X equal to b.

An integer workload: X and H are u32. Integers have no NaN, so Vajra fills H with a
different pattern on each seed (0xFFFFFFFF, then 0xAAAAAAAA) before every dispatch; a
bin a kernel never writes holds the wrong count on at least one of them. Values are
skewed towards bin 0, so atomic counters there contend, as they do in real histograms.

    vajra-tui bench -w examples/workloads/rowhist.py -k examples/workloads/rowhist_shared.wgsl
    vajra-tui tune  -w examples/workloads/rowhist.py -k examples/workloads/rowhist_shared.wgsl \\
        --source params
"""

from __future__ import annotations

import numpy as np

from vajra_tui import Binding, Workload


def make_inputs(size: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    n, bins = size["ROWS"] * size["COLS"], size["BINS"]
    skewed = np.minimum(rng.geometric(0.15, n) - 1, bins - 1)
    return {"X": skewed.astype(np.uint32)}


def reference(size: dict[str, int], inputs: dict[str, np.ndarray]) -> np.ndarray:
    rows, cols, bins = size["ROWS"], size["COLS"], size["BINS"]
    row = np.repeat(np.arange(rows, dtype=np.int64), cols)
    # integer counts are exact: an integer reference is accepted as it is
    return np.bincount(row * bins + inputs["X"].astype(np.int64), minlength=rows * bins)


BASELINE = """\
// Naive: one invocation per (row, bin), counting its matches along the whole row.
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = vajra_tile(wid);
    let bin = t.x * 64u + lid.x;
    if (t.y >= TILES_Y || bin >= BINS) {
        return;
    }
    let base = t.y * COLS;
    var n = 0u;
    for (var c = 0u; c < COLS; c = c + 1u) {
        n = n + select(0u, 1u, X[base + c] == bin);
    }
    H[t.y * BINS + bin] = n;
}
"""

WORKLOAD = Workload(
    name="rowhist",
    summary="per-row histograms: H[r, b] = #{c : X[r, c] == b}, u32",
    dims=("ROWS", "COLS", "BINS"),
    presets={"seed": {"ROWS": 1024, "COLS": 1024, "BINS": 64},
             "large": {"ROWS": 8192, "COLS": 4096, "BINS": 256}},
    bindings=(Binding(0, "X", "read", dtype="u32"), Binding(1, "H", "read_write", dtype="u32")),
    buffer_len=lambda s: {"X": s["ROWS"] * s["COLS"], "H": s["ROWS"] * s["BINS"]},
    make_inputs=make_inputs,
    reference=reference,
    flops=lambda s: float(s["ROWS"] * s["COLS"]),  # one increment per element
    output_grid=lambda s: (s["BINS"], s["ROWS"]),  # element (x, y) is H[y * BINS + x]
    baseline=BASELINE,
    atol=0.0,  # counts are exact
    rtol=0.0,
    defaults={"BINS": 64},  # --size 512x2048 leaves BINS alone
)
