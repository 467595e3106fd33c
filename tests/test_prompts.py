"""What the model is told: the generation-1 contract, and later generations' continued conversations."""

from __future__ import annotations

from typing import Any

import pytest

from vajra_tui.engine.candidate import Candidate, GenerationContext
from vajra_tui.engine.admission.contract import prelude
from vajra_tui.engine.events import Calibration, CandidateResult, DeviceInfo, Diagnostic
from vajra_tui.engine.sources.llm.prompts import SYSTEM_PROMPT, build_messages
from vajra_tui.engine.tune import output_axes
from vajra_tui.engine.workloads import get_workload

B_SOURCE = """// tile: 32x32
var<workgroup> As: array<f32, 1024>;
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>) {
    let t = vajra_tile(wid);
    if (t.y >= TILES_Y) { return; }
    C[0] = As[0]; // win
}
"""
B_REPLY = f"<think>stage tiles of A and B</think>\nTiled version:\n```wgsl\n{B_SOURCE}```\n"
C_SOURCE = """@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>) {
    tile.x = 1u;
}
"""
A_SOURCE = """// tile: 64
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>) {
    C[0] = 0.0;
}
"""
CAL = Calibration(copy_gbps=25.3, fma_gflops=410.0, launch_floor_ms=0.012)


def device(**kw: Any) -> DeviceInfo:
    base: dict[str, Any] = dict(
        name="llvmpipe (LLVM 15.0.7, 256 bits)", backend="Vulkan", adapter_type="CPU", software=True,
        features=["shader-f16", "subgroups", "timestamp-query"], enabled_features=["subgroups"],
        subgroup_min_size=4, subgroup_max_size=64,
        limits={"max-compute-workgroup-storage-size": 32768,
                "max-compute-invocations-per-workgroup": 256,
                "max-compute-workgroups-per-dimension": 65535})
    base.update(kw)
    return DeviceInfo(**base)


def baseline_result(workload: str = "sgemm") -> CandidateResult:
    return CandidateResult(id="baseline", name="baseline", strategy="baseline", status="verified",
                           median_ms=1.234, iqr_ms=0.02, gflops=217.6, gbps=2.55,
                           pct_of_roofline=53.1, regime="compute")


def context(workload: str = "sgemm", generation: int = 1, **kw: Any) -> GenerationContext:
    wl = get_workload(workload)
    size = wl.size("seed")
    fields: dict[str, Any] = dict(
        workload=wl.info(size), device=device(), generation=generation,
        prelude=prelude(wl, size, (1, 1), 1, set()), baseline_source=wl.baseline,
        summary=wl.summary, output_axes=output_axes(wl, size), output=wl.output.name,
        calibration=CAL, baseline=baseline_result(workload))
    fields.update(kw)
    return GenerationContext(**fields)


def text_of(messages: list[dict[str, str]]) -> str:
    return "\n".join(m["content"] for m in messages)


# ---- generation 1: the contract -------------------------------------------------


@pytest.mark.parametrize("workload,axes", [
    ("sgemm", "x = N = 512, y = M = 512"),
    ("softmax", "x = COLS = 1024, y = ROWS = 1024"),
    ("conv1d", "x = N = 1048576, y = 1"),
    ("sobel", "x = W = 2048, y = H = 2048"),
])
def test_first_prompt_states_the_grid_per_axis(workload: str, axes: str) -> None:
    messages = build_messages(context(workload), "A")
    assert [m["role"] for m in messages] == ["system", "user"]
    assert f"Output grid: {axes}" in messages[1]["content"]


def test_first_prompt_carries_the_contract() -> None:
    messages = build_messages(context(), "B")
    assert messages[0]["content"] == SYSTEM_PROMPT
    user = messages[1]["content"]
    # tile header, with examples
    for needle in ("`// tile: 64x64`", "`// tile: 256`", "`// tile: COLS x 1`", "ceil(output / tile)"):
        assert needle in user, needle
    # the prelude's names and the no-work rule
    for needle in ("TILES_X", "TILES_Y", "DISPATCH_X", "vajra_tile(workgroup_id)", "tile.y >= TILES_Y",
                   "const M: u32 = 512u;"):
        assert needle in user, needle
    # NaN fill: every element must be written
    assert "filled with NaN" in user and "every output" in user and "never written" in user
    # the baseline's source and its measured numbers
    assert get_workload("sgemm").baseline.strip() in user
    for needle in ("median 1.234 ms", "218 GFLOP/s", "2.55 GB/s", "53.1% of the roofline",
                   "compute-bound"):
        assert needle in user, needle
    # calibrated ceilings and what bounds this size
    for needle in ("copy 25.3 GB/s", "FMA 410 GFLOP/s", "launch floor 12 µs", "ridge point is 16.2",
                   "intensity at this size: 85.3 FLOP/byte", "size is compute-bound"):
        assert needle in user, needle
    # software adapter, said as such, and llvmpipe's loop limit with it
    assert "SOFTWARE adapter" in user and "after 65,535 steps" in user
    # browser rules
    assert "uniform control flow" in user and "Tint" in user and "Naga" in user
    assert "Strategy B - shared workgroup memory tiling" in user


def test_memory_bound_size_is_said_so() -> None:
    user = build_messages(context("softmax"), "A")[1]["content"]
    assert "size is memory-bound" in user


def test_only_enabled_features_are_advertised() -> None:
    text = text_of(build_messages(context(), "C"))
    assert "subgroups (write `enable subgroups;` first" in text
    assert "between 4 and 64" in text
    assert "f16" not in text  # offered by the adapter, not requested on the device
    bare = text_of(build_messages(context(device=device(enabled_features=[])), "C"))
    assert "enabled on the device: none" in bare
    assert "enable subgroups;" not in bare and "subgroup size" not in bare
    f16 = text_of(build_messages(context(device=device(enabled_features=["shader-f16"])), "C"))
    assert "`enable f16;`" in f16 and "enable subgroups;" not in f16


def test_an_nvidia_gpu_is_said_to_run_32_lane_subgroups() -> None:
    """wgpu reports 4..128 on the H200: the model hears the 32 its warps always have."""
    h200 = device(name="NVIDIA H200", vendor_id=0x10DE, adapter_type="DiscreteGPU", software=False, subgroups=True,
                  subgroup_min_size=4, subgroup_max_size=128)
    text = text_of(build_messages(context(device=h200), "C"))
    assert "at least 32 lanes" in text and "wgpu reports 4 to 128" in text
    assert "between 4 and" not in text
    assert "65,535" not in text  # llvmpipe's loop limit is llvmpipe's


def test_hardware_adapter_is_not_called_software() -> None:
    hardware = device(software=False, adapter_type="DiscreteGPU")
    user = build_messages(context(device=hardware), "A")[1]["content"]
    assert "SOFTWARE" not in user and "DiscreteGPU" in user


# ---- generation 2 and later: feedback in the winner's conversation ----------------


def _results() -> tuple[dict[str, Candidate], list[CandidateResult]]:
    first_user = build_messages(context(), "B")
    cands = {
        "g1-B": Candidate(id="g1-B", name="B", strategy="B", origin="nemotron: m", source=B_SOURCE,
                          raw_reply=B_REPLY, messages=first_user),
        "g1-C": Candidate(id="g1-C", name="C", strategy="C", origin="nemotron: m", source=C_SOURCE),
        "g1-A": Candidate(id="g1-A", name="A", strategy="A", origin="nemotron: m", source=A_SOURCE),
    }
    winner = CandidateResult(id="g1-B", name="B", strategy="B", status="verified", source=B_SOURCE,
                             median_ms=0.3844, iqr_ms=0.004, gflops=698.3, gbps=8.2,
                             pct_of_roofline=61.5, regime="compute", speedup=3.21,
                             rewrites=["--- B\n+++ B (sanitized)\n-    if (x) { return; }\n+    if (!x) {"],
                             browser="browser-valid", workgroup_size=[16, 16, 1])
    over = CandidateResult(id="g1-A", name="A", strategy="A", status="verified", source=A_SOURCE,
                           median_ms=0.9, speedup=1.37, regime="compute", pct_of_roofline=20.0,
                           over_dispatch=[4, 1], workgroup_size=[64, 1, 1])
    broken = CandidateResult(
        id="g1-C", name="C", strategy="C", status="compile_error",
        reason="3:5: unresolved identifier 'tile'",
        diagnostics=[Diagnostic(line=3, column=5, message="unresolved identifier 'tile'",
                                source_line="    tile.x = 1u;")])
    wrong = CandidateResult(
        id="g2-D", name="D", strategy="D", generation=2, status="rejected",
        reason="seed 1: 3 of 262144 elements out of tolerance; worst at 4095 (got 1.5, want 2)",
        max_rel_error=0.25, worst_index=4095)
    dup = CandidateResult(id="g2-E", name="E", strategy="E", generation=2, status="duplicate",
                          reason="same kernel as A: not compiled or timed twice", duplicate_of="A")
    return cands, [baseline_result(), winner, over, broken, wrong, dup]


def evolved(generation: int = 2, **kw: Any) -> GenerationContext:
    cands, results = _results()
    fields: dict[str, Any] = dict(results=results, winner=results[1], candidates=cands)
    fields.update(kw)
    return context(generation=generation, **fields)


def test_evolution_continues_the_winners_conversation() -> None:
    ctx = evolved()
    first = ctx.candidates["g1-B"].messages
    messages = build_messages(ctx, "D")
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[:2] == first  # the exact turns that produced the winner, in order
    assert B_SOURCE.strip() in messages[2]["content"]
    assert "<think>" not in messages[2]["content"]  # its reasoning is not sent back
    feedback = messages[3]["content"]
    assert "Your kernel above verified" in feedback
    for needle in ("compute-bound", "61.5% of the roofline", "3.21x the baseline", "698 GFLOP/s",
                   "median 384 µs", "The baseline took 1.234 ms"):
        assert needle in feedback, needle
    # its sanitizer rewrite and its browser verdict
    assert "+    if (!x) {" in feedback and "Tint accepts B" in feedback
    assert "Write a variant that is faster than B" in feedback


def test_feedback_quotes_failures_with_their_source_lines() -> None:
    feedback = build_messages(evolved(), "D")[-1]["content"]
    # a compile error: location, message, and the line it points at
    assert "line 3:5: unresolved identifier 'tile'" in feedback
    assert "3 |     tile.x = 1u;" in feedback
    # a verification failure: the worst element, expected against got, and where it is
    assert "worst at 4095 (got 1.5, want 2)" in feedback
    assert "(x=511, y=7)" in feedback and "max relative error 0.25" in feedback
    # over-dispatch: the tile to declare
    assert "covered its output 4x over" in feedback and "`// tile: 256x1`" in feedback
    # duplicates
    assert "E was the same kernel as A" in feedback


def test_on_llvmpipe_a_rejected_kernel_comes_with_its_loop_limit() -> None:
    """A kernel cut short by llvmpipe's 65,535 loop steps fails as "never written" with no
    compiler message; the model hears the rule there, and nowhere else."""
    ctx = evolved()
    assert "llvmpipe" in ctx.device.name
    assert "ends each invocation's loops after 65,535 steps" in build_messages(ctx, "D")[-1]["content"]
    gpu = ctx.device.model_copy(update={"name": "NVIDIA H200", "driver": "570.133", "software": False})
    assert "65,535" not in build_messages(ctx.model_copy(update={"device": gpu}), "D")[-1]["content"]
    nothing_rejected = [r for r in ctx.results if r.status != "rejected"]
    assert "65,535" not in build_messages(ctx.model_copy(update={"results": nothing_rejected}), "D")[-1]["content"]


def test_nothing_beat_the_baseline_is_said_plainly() -> None:
    cands, results = _results()
    slow = results[1].model_copy(update={"speedup": 0.8, "median_ms": 1.5})
    feedback = build_messages(evolved(results=results, winner=slow, baseline_won=True), "D")[-1]["content"]
    assert "Nothing beat the baseline" in feedback
    assert "faster than the baseline (1.234 ms)" in feedback
    assert "faster than B" not in feedback
    none = build_messages(evolved(results=[baseline_result()], winner=None), "D")
    assert len(none) == 2  # nothing verified: a fresh start from the baseline
    assert "Nothing beat the baseline" in none[-1]["content"]
    assert "1 | // Naive SGEMM" in none[-1]["content"]


def test_a_winner_no_model_wrote_starts_fresh_with_line_numbers() -> None:
    cands, results = _results()
    library = results[2]  # A, but from the library: no conversation
    cands = {**cands, "g1-A": cands["g1-A"].model_copy(update={"origin": "library: sgemm/x"})}
    messages = build_messages(evolved(winner=library, candidates=cands), "D")
    assert [m["role"] for m in messages] == ["system", "user"]
    user = messages[1]["content"]
    assert "Output grid: x = N = 512, y = M = 512" in user  # the full contract again
    assert "1 | // tile: 64" in user and "4 |     C[0] = 0.0;" in user
    assert "The fastest verified kernel so far, A" in user


@pytest.mark.parametrize("letter", ["E", "F"])
def test_later_generations_get_a_full_brief(letter: str) -> None:
    generation = ord(letter) - ord("B")
    feedback = build_messages(evolved(generation), letter)[-1]["content"]
    assert f"Strategy {letter} (generation {generation}) - evolve the best kernel" in feedback
    assert f"Strategy {letter}." not in feedback
    assert "compute-bound at 61.5% of its roofline" in feedback
    assert "look in particular at" in feedback


def test_e_and_f_briefs_differ() -> None:
    e = build_messages(evolved(3), "E")[-1]["content"]
    f = build_messages(evolved(4), "F")[-1]["content"]
    focus = lambda t: t.split("look in particular at", 1)[1].split(".", 1)[0]  # noqa: E731
    assert focus(e) != focus(f)


def test_feedback_names_which_of_several_kernels_was_measured() -> None:
    cands, results = _results()
    several = cands["g1-B"].model_copy(update={"reply_kernels": 3, "reply_label": "B"})
    feedback = build_messages(evolved(candidates={**cands, "g1-B": several}), "D")[-1]["content"]
    assert "of the 3 kernels in your reply, Vajra took the one for slot B" in feedback


# ---- a user's workload: groups, uniforms, named entry points, explicit grids, passes ------

from vajra_tui import Binding, Pass, Workload  # noqa: E402
from vajra_tui.engine.sources.llm.extract import extract_for  # noqa: E402
from vajra_tui.engine.sources.llm.prompts import system_prompt  # noqa: E402

SCALE_KERNEL = """@compute @workgroup_size(64)
fn scale_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    for (var c = lid.x; c < params.cols; c += 64u) {
        B[wid.x * params.cols + c] = params.alpha * A[wid.x * params.cols + c];
    }
}
"""


def _declared(**kw: Any) -> Workload:
    """A workload as a user's file declares it: uniform params at group 0 binding 3, storage
    at group 1 with a gap, entry ``scale_rows``, one workgroup per row."""
    fields: dict[str, Any] = dict(
        name="scale_rows", summary="B = alpha * A, row by row", dims=("ROWS", "COLS"),
        presets={"seed": {"ROWS": 8, "COLS": 48}},
        bindings=(Binding(0, "A", "read", group=1), Binding(2, "B", "read_write", group=1),
                  Binding(3, "params", "uniform", struct="Params",
                          fields=(("rows", "u32"), ("cols", "u32"), ("alpha", "f32")),
                          values=lambda s, p: {"rows": s["ROWS"], "cols": s["COLS"], "alpha": 2.5})),
        buffer_len=lambda s: {"A": s["ROWS"] * s["COLS"], "B": s["ROWS"] * s["COLS"]},
        make_inputs=lambda s, rng: {"A": rng.standard_normal(s["ROWS"] * s["COLS"]).astype("float32")},
        reference=lambda s, i: 2.5 * i["A"].astype("float64"), flops=lambda s: s["ROWS"] * s["COLS"],
        baseline=SCALE_KERNEL, atol=1e-6, entry="scale_rows", grid=lambda s, p: (s["ROWS"], 1, 1))
    fields.update(kw)
    return Workload(**fields)


def _user_context(wl: Workload) -> GenerationContext:
    size = wl.size("seed")
    return GenerationContext(workload=wl.info(size), device=device(), prelude=prelude(wl, size, (1, 1), 1, set()),
                             baseline_source=wl.baseline, summary=wl.summary, output=wl.output.name,
                             calibration=CAL)


def test_a_user_workload_prompt_states_groups_uniforms_entry_and_grid() -> None:
    wl = _declared()
    system, user = (m["content"] for m in build_messages(_user_context(wl), "A", workload=wl))
    for needle in ("@group(1) @binding(0) A: array<f32>, 384 elements (input, read-only); `var<storage, read>`",
                   "@group(1) @binding(2) B: array<f32>, 384 elements (output, read_write: write every "
                   "element); `var<storage, read_write>`",
                   "Bindings (groups 0, 1), declared by the prelude:",
                   "@group(0) @binding(3) params: uniform, one `Params` holding at this size: rows=8, "
                   "cols=48, alpha=2.5",
                   "struct Params {\n    rows: u32,\n    cols: u32,\n    alpha: f32,\n}",
                   "@group(0) @binding(3) var<uniform> params: Params;",
                   "Entry point: `@compute fn scale_rows` (not `main`)",
                   "Dispatch: the workload gives its grid explicitly: (8, 1, 1) workgroups (x, y, z)",
                   "`// tile:` headers are ignored for it"):
        assert needle in user, needle
    # the tile planning text is not said for a grid the workload gives
    assert "Output grid:" not in user and "`// tile: 64x64`" not in user
    assert "fn scale_rows(...)`, named `scale_rows`" in system and "fn main" not in system
    assert "`// tile:` headers are ignored" in system and "Find your tile" not in system
    assert system == system_prompt(_user_context(wl), wl)


def test_without_the_workload_the_context_still_gives_groups_and_the_entry_point() -> None:
    wl = _declared()
    system, user = (m["content"] for m in build_messages(_user_context(wl), "A"))
    assert "@group(1) @binding(2) B: array<f32>" in user and "`var<uniform>`" in user
    assert "fn scale_rows(...)`, named `scale_rows`" in system  # read from the baseline's text


def test_fill_inout_and_scratch_are_said_in_wgsl_terms() -> None:
    wl = _declared(
        bindings=(Binding(0, "A", "inout"), Binding(1, "acc", "read_write", fill=0),
                  Binding(2, "tmp", "scratch")),
        buffer_len=lambda s: {"A": 4, "acc": 4, "tmp": 4},
        reference=lambda s, i: {"A": i["A"] * 1.0, "acc": i["A"] * 1.0},
        baseline=SCALE_KERNEL.replace("params.cols", "COLS").replace("params.alpha", "1.0"))
    system, user = (m["content"] for m in build_messages(_user_context(wl), "A", workload=wl))
    for needle in ("@group(0) @binding(0) A: array<f32>, 4 elements (holds an input; your kernel reads it "
                   "and overwrites it in place); `var<storage, read_write>`",
                   "@binding(1) acc: array<f32>, 4 elements (output, starts at 0: accumulate into it); "
                   "`var<storage, read_write>`",
                   "@binding(2) tmp: array<f32>, 4 elements (scratch: an intermediate between passes, "
                   "poisoned before each run)",
                   "starts at a value or holds an input starts so instead"):
        assert needle in user, needle
    assert "Outputs start as NaN unless the request says" in system


TWO_PASS = """@compute @workgroup_size(64)
fn row_sums(@builtin(workgroup_id) wid: vec3<u32>) { sums[wid.x] = 0.0; }
@compute @workgroup_size(64)
fn normalize(@builtin(global_invocation_id) g: vec3<u32>) { if (g.x < ROWS * COLS) { B[g.x] = A[g.x]; } }
"""


def test_a_two_pass_workload_lists_its_passes_and_what_a_reply_may_replace() -> None:
    wl = _declared(
        bindings=(Binding(0, "A", "read"), Binding(1, "B", "read_write"), Binding(2, "sums", "scratch")),
        buffer_len=lambda s: {"A": s["ROWS"] * s["COLS"], "B": s["ROWS"] * s["COLS"], "sums": s["ROWS"]},
        baseline=TWO_PASS, entry="main", grid=None,
        passes=(Pass("row_sums", lambda s, p: (s["ROWS"], 1, 1), name="sum rows"),
                Pass("normalize", lambda s, p: (-(-s["ROWS"] * s["COLS"] // 64), 1, 1))))
    ctx = _user_context(wl)
    system, user = (m["content"] for m in build_messages(ctx, "B", workload=wl))
    for needle in ("Passes: this workload runs 2 dispatches in this order",
                   "1. sum rows: `@compute fn row_sums`, grid (8, 1, 1) workgroups (x, y, z)",
                   "2. normalize: `@compute fn normalize`, grid (6, 1, 1) workgroups (x, y, z)",
                   "A reply may replace one pass (define only that entry point) or all of them (define "
                   "every entry point: `row_sums`, `normalize`); the passes it does not define run from "
                   "the workload's own module",
                   "Each pass's grid is fixed by the workload: `// tile:` headers are ignored."):
        assert needle in user, needle
    assert "named as the workload's passes: `row_sums`, `normalize`" in system
    # a reply of both passes is one kernel; a reply of one pass is a kernel too
    both = extract_for(f"```wgsl\n{TWO_PASS}```\n", "B", wl.entries)
    assert both.complete and both.candidates == 1 and "fn row_sums" in both.source and "fn normalize" in both.source
    one = extract_for("```wgsl\n@compute" + TWO_PASS.split("@compute")[2] + "```\n",
                      "B", wl.entries)
    assert one.complete and "fn normalize" in one.source and "row_sums" not in one.source
