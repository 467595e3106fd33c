"""Kernels are timed on the inputs of the seed drawn for the run, not on seed 1's.

A held-out attack crowned a gemv that recognised seed 1's inputs and returned outputs
stored for them, computing honestly on any other input: it passed every verification
(its stored answers are right, and its honest path passes the fresh seed) and was timed on
its shortcut, because every timed dispatch ran on seed 1. Here the "shortcut" is honest
too (it only skips a slow loop that adds nothing visible), so the kernel verifies either
way and only its time tells which inputs it was timed on. Real engine, lavapipe.
"""

from __future__ import annotations

import numpy as np

import vajra_tui
from vajra_tui import Binding, Workload
from vajra_tui.engine.events import SessionStarted, VerificationFinished

N = 1024


def _inputs(size, rng):
    return {"x": rng.standard_normal(size["N"]).astype(np.float32)}


ADD_ONE = Workload(
    name="add_one_seeded", summary="y = x + 1", dims=("N",), presets={"seed": {"N": N}},
    bindings=(Binding(0, "x", "read"), Binding(1, "y", "read_write")),
    buffer_len=lambda s: {"x": s["N"], "y": s["N"]},
    make_inputs=_inputs,
    reference=lambda s, i: i["x"].astype(np.float64) + 1.0,
    flops=lambda s: float(s["N"]),
    output_grid=lambda s: (s["N"], 1),
    atol=1e-5,
    baseline="""
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < N) { y[g.x] = x[g.x] + 1.0; }
}
""",
)

SLOW = """
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x >= N) { return; }
    var extra = 0.0;
    if (GUARD) {  // anything but seed 1's inputs: a long loop whose sum is far below f32's resolution
        for (var k = 0u; k < 3000u; k++) { extra += x[(g.x + k) % N] * 1e-30; }
    }
    y[g.x] = x[g.x] + 1.0 + extra;
}
"""


def test_a_kernel_fast_only_on_seed_ones_inputs_is_timed_at_its_honest_speed():
    x0 = float(_inputs({"N": N}, np.random.default_rng(1))["x"][0])  # seed 1's first input, exactly
    kernels = {"slow": SLOW.replace("GUARD", "true"),
               "seed_one_shortcut": SLOW.replace("GUARD", f"x[0] != {x0!r}")}
    events = []
    report = vajra_tui.bench(ADD_ONE, kernels, warmup=1, reps=5, on_event=events.append)
    by_name = {r.name: r for r in report.results}
    assert all(by_name[k].status == "verified" for k in kernels), {k: by_name[k].reason for k in kernels}
    fast, slow, shortcut = (by_name[k].median_ms for k in ("baseline", "slow", "seed_one_shortcut"))
    assert slow > 4 * fast, (fast, slow)  # the loop is what costs: the test can tell the two paths apart
    assert shortcut > 0.5 * slow and shortcut > 4 * fast, (fast, slow, shortcut)
    assert report.winner is None or report.winner.name != "seed_one_shortcut"

    fresh = next(e.fresh_seed for e in events if isinstance(e, SessionStarted))
    timed = [e for e in events if isinstance(e, VerificationFinished) and e.phase == "timed"]
    assert fresh not in (1, 2) and timed and {e.seed for e in timed} == {fresh}
