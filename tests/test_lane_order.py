"""A kernel whose outputs change when its lanes trade places within the workgroup is rejected.

A held-out check crowned a softmax whose tree reductions skip the barrier for their last
three steps ("warp-synchronous"): lavapipe and the browser's SwiftShader run eight lanes in
lockstep, so it verified on both. Before a crown (beside the fresh seed's check), each finalist
is verified once more with its lanes reordered (engine/wgsl/lanes.py); a race-free kernel
computes exactly the same.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import vajra_tui
from vajra_tui.engine.events import VerificationFinished
from vajra_tui.engine.wgsl.lanes import lane_order, reorder_lanes

KERNELS = Path(__file__).parent / "kernels"


def test_a_lockstep_reduction_verifies_as_written_and_is_never_crowned():
    events: list = []
    report = vajra_tui.bench("layernorm", [KERNELS / "layernorm_lockstep.wgsl"], size={"ROWS": 64, "COLS": 1024},
                             warmup=1, reps=3, on_event=events.append)
    racy = next(r for r in report.results if r.name == "layernorm_lockstep")
    as_written = [e for e in events if isinstance(e, VerificationFinished) and e.id == racy.id]
    assert len(as_written) >= 2 and all(e.passed for e in as_written)  # every seed: lavapipe alone never saw it
    assert racy.status == "rejected" and re.match(r"seed \d+ with its lanes reordered within each workgroup", racy.reason)
    assert "a workgroupBarrier() missing?" in racy.reason and "\n" not in racy.reason
    assert report.winner is None  # 1.8x the baseline as written: the crown it would have taken


@pytest.mark.parametrize("count", [2, 3, 8, 12, 16, 64, 96, 256, 1024])
def test_every_lane_gets_exactly_one_other_place(count):
    stride, _ = lane_order(count)
    if stride == 1:
        places = [count - 1 - p for p in range(count)]
    else:
        places = [(p % stride) * (count // stride) + p // stride for p in range(count)]
    assert sorted(places) == list(range(count))
    if count >= 64:  # logical neighbours 0..7 sit in eight different chunks of eight
        assert len({places.index(lane) // 8 for lane in range(8)}) == 8


SHARED = "var<workgroup> t: array<f32, 64>;\n"


@pytest.mark.parametrize("source, why", [
    ("@compute @workgroup_size(64) fn main(@builtin(local_invocation_id) l: vec3<u32>) { }",
     "no workgroup memory"),
    (SHARED + "@compute @workgroup_size(64) fn main(@builtin(local_invocation_id) l: vec3<u32>) "
              "{ t[l.x] = subgroupAdd(1.0); }", "subgroup operations are physical"),
    (SHARED + "@compute @workgroup_size(64) fn main(@builtin(subgroup_invocation_id) s: u32, "
              "@builtin(local_invocation_id) l: vec3<u32>) { t[l.x] = f32(s); }", "subgroup lane ids too"),
    (SHARED + "struct In { @builtin(local_invocation_id) l: vec3<u32> }\n"
              "@compute @workgroup_size(64) fn main(i: In) { t[i.l.x] = 1.0; }", "a struct of builtins"),
    (SHARED + "@compute @workgroup_size(64) fn main(@builtin(workgroup_id) w: vec3<u32>) { t[w.x] = 1.0; }",
     "no lane id to reorder"),
])
def test_what_is_not_reordered(source, why):
    assert reorder_lanes(source, "main", (64, 1, 1)) is None, why


def test_the_ids_keep_their_names_and_types():
    source = (SHARED + "@compute @workgroup_size(8, 8)\nfn main(@builtin(global_invocation_id) g: vec3<u32>,\n"
              "        @builtin(local_invocation_index) i: u32) {\n    t[i] = f32(g.x);\n}\n")
    out = reorder_lanes(source, "main", (8, 8, 1))
    assert out is not None
    assert "@builtin(global_invocation_id) vajra_phys_global_invocation_id: vec3<u32>" in out
    assert "let i = vajra_l;" in out and "let g = (vajra_phys_global_invocation_id / vec3<u32>(8u, 8u, 1u))" in out
    assert out.endswith("    t[i] = f32(g.x);\n}\n")
