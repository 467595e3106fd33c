"""A kernel benched as written, with ``override PER: u32 = 4;``, is dispatched for PER=4.

The workload's ``grid`` reads ``params``; in a bench nothing sets the kernel's overrides, so
``params`` was empty and the grid function's own fallback (PER=1) sized the dispatch: four
times the workgroups, timed without a word (a held-out workload file found it). Real engine,
lavapipe.
"""

from __future__ import annotations

import numpy as np

import vajra_tui
from vajra_tui import Binding, Workload

N = 4096


def _per(params) -> int:
    return int(params.get("PER", 1))


ADD_ONE = Workload(
    name="add_one_per", summary="y = x + 1, PER elements an invocation", dims=("N",),
    presets={"seed": {"N": N}},
    bindings=(Binding(0, "x", "read"), Binding(1, "y", "read_write")),
    buffer_len=lambda s: {"x": s["N"], "y": s["N"]},
    make_inputs=lambda s, rng: {"x": rng.standard_normal(s["N"]).astype(np.float32)},
    reference=lambda s, i: i["x"].astype(np.float64) + 1.0,
    flops=lambda s: float(s["N"]),
    grid=lambda s, p: (-(-s["N"] // (64 * _per(p))), 1, 1),
    atol=1e-6,
    baseline="""
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < N) { y[g.x] = x[g.x] + 1.0; }
}
""",
)

PER_KERNEL = """
// tune: PER = 1, 2, 4
override PER: u32 = 4;
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) w: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) {
    for (var k = 0u; k < PER; k++) {
        let i = (w.x * PER + k) * 64u + l.x;
        if (i < N) { y[i] = x[i] + 1.0; }
    }
}
"""


def test_the_grid_sees_the_kernels_declared_override_values():
    report = vajra_tui.bench(ADD_ONE, {"per4": PER_KERNEL}, warmup=1, reps=3)
    mine = next(r for r in report.results if r.name == "per4")
    assert mine.status == "verified", mine.reason
    assert list(mine.grid)[:1] == [N // (64 * 4)], mine.grid  # it was N // 64: PER=1's grid
