"""Kernels as written (#23): the seven wrong or misleading verdicts, and the declarations
that let a published kernel run unmodified, through the CLI on the real adapter.

Each workload file here is written from the README alone, at module level, as a user's.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from vajra_tui.cli.main import main
from vajra_tui.engine.admission.contract import ContractError, stitch
from vajra_tui.engine.workloads import loader

EXAMPLES = Path(__file__).parents[1] / "examples" / "workloads"
FAST = ["--reps", "3", "--warmup", "1", "--no-cache", "-q"]

ADD_ONE = '''
import numpy as np
from vajra_tui import Binding, Workload

def make_inputs(size, rng):
    return {"x": rng.standard_normal(size["N"]).astype(np.float32)}

WORKLOAD = Workload(
    name="add_one", summary="y = x + 1", dims=("N",), presets={"seed": {"N": 1000}},
    bindings=(Binding(0, "x", "read"), Binding(1, "y", "read_write")),
    buffer_len=lambda s: {"x": s["N"], "y": s["N"]},
    make_inputs=make_inputs,
    reference=lambda s, i: i["x"].astype(np.float64) + 1.0,
    flops=lambda s: float(s["N"]),
    output_grid=lambda s: (s["N"], 1),
    atol=1e-6,
    baseline="""BASELINE""",
)
'''
PLAIN = """
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < N) { y[g.x] = x[g.x] + 1.0; }
}
"""


def _workload(tmp_path: Path, text: str, name: str = "mine.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def _bench(capsys, workload: Path, *kernels: str, size: str = "seed", where: Path | None = None) -> dict:
    files = []
    for k, text in enumerate(kernels):
        path = (where or workload.parent) / f"k{k}.wgsl"
        path.write_text(text)
        files += ["-k", str(path)]
    code = main(["bench", "-w", str(workload), "--size", size, *files, "--json", *FAST])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0, doc
    return {r["name"]: r for r in doc["results"]}


def test_reading_the_output_before_writing_it_is_not_called_never_written(tmp_path, capsys):
    """Verdict 1: `y[i] = y[i] + ...` on a plain output computes from the poison; a second
    fill tells that apart from an element the kernel never wrote."""
    w = _workload(tmp_path, ADD_ONE.replace("BASELINE", PLAIN))
    reads_old = PLAIN.replace("y[g.x] = x[g.x] + 1.0;", "y[g.x] = y[g.x] + x[g.x] + 1.0;")
    skips = PLAIN.replace("if (g.x < N)", "if (g.x < N && g.x % 2u == 0u)")
    got = _bench(capsys, w, reads_old, skips)
    assert got["baseline"]["status"] == "verified"
    assert got["k0"]["status"] == "rejected" and "reads its output's old contents" in got["k0"]["reason"]
    assert got["k1"]["status"] == "rejected" and "never written" in got["k1"]["reason"]
    assert "old contents" not in got["k1"]["reason"]



@pytest.mark.parametrize("body", [
    "y[g.x] = max(y[g.x], x[g.x] + 1.0);",  # NaN poison: max returns x + 1, the answer
    "y[g.x] = min(x[g.x] + 1.0, y[g.x]);",
    "y[g.x] = select(x[g.x] + 1.0, y[g.x], y[g.x] == y[g.x] && y[g.x] < 0.0);",
])
def test_a_kernel_whose_nan_absorbing_read_of_its_output_matches_is_still_caught(tmp_path, capsys, body):
    """max, min and select return the other operand when one is the NaN poison, so these
    kernels give the answer from the poison; from zeros or an output's old results they do
    not. A verified kernel runs again from the ends of its type's range and is rejected."""
    w = _workload(tmp_path, ADD_ONE.replace("BASELINE", PLAIN))
    got = _bench(capsys, w, PLAIN.replace("y[g.x] = x[g.x] + 1.0;", body))
    assert got["k0"]["status"] == "rejected", got["k0"]
    assert "reads its output's old contents" in got["k0"]["reason"]


def test_stale_reads_and_unwritten_elements_are_counted_apart(tmp_path, capsys):
    """A quarter of y accumulates into its old contents, a quarter is never written: the reason
    counts each as what it is, not the two together as "never written"."""
    w = _workload(tmp_path, ADD_ONE.replace("BASELINE", PLAIN))
    mixed = PLAIN.replace("if (g.x < N) { y[g.x] = x[g.x] + 1.0; }",
                          "if (g.x < 250u) { y[g.x] += x[g.x] + 1.0; } "
                          "else if (g.x < 750u) { y[g.x] = x[g.x] + 1.0; }")
    reason = _bench(capsys, w, mixed)["k0"]["reason"]
    assert "reads its output's old contents: y (250 elements, first at element 0)" in reason, reason
    assert "never written: y (250 elements, first at element 750)" in reason, reason
    assert "1000 elements never written" not in reason and "500 of 1000" not in reason

COUNTER = '''
import numpy as np
from vajra_tui import Binding, Workload

WORKLOAD = Workload(
    name="counter", summary="count[0] = N, by atomics", dims=("N",), presets={"seed": {"N": 4096}},
    bindings=(Binding(0, "x", "read", "u32"), Binding(1, "count", "read_write", "u32", fill=FILL)),
    buffer_len=lambda s: {"x": s["N"], "count": 1},
    make_inputs=lambda s, rng: {"x": np.ones(s["N"], np.uint32)},
    reference=lambda s, i: np.array([s["N"]], np.int64),
    flops=lambda s: 0.0,
    grid=lambda s, p: (s["N"] // 64, 1, 1),
    atol=0, rtol=0,
    baseline="""
@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> count: array<atomic<u32>>;
@compute @workgroup_size(64)
fn count_ones(@builtin(global_invocation_id) g: vec3<u32>) { atomicAdd(&count[0], x[g.x]); }
""",
)
'''


def test_an_atomic_counter_starts_from_its_fill(tmp_path, capsys):
    """Verdict 5: an output that accumulates declares fill=0 and counts right; declared as a
    plain output it is told that it reads its old contents, not "off by one"."""
    ok = _bench(capsys, _workload(tmp_path, COUNTER.replace("FILL", "0"), "ok.py"))
    assert ok["baseline"]["status"] == "verified", ok["baseline"]["reason"]
    code = main(["bench", "-w", str(_workload(tmp_path, COUNTER.replace("FILL", "None"), "bad.py")),
                 "--json", *FAST])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and "reads its output's old contents" in doc["error"]  # verdict 7: a document too
    assert doc["results"][0]["status"] == "rejected"


def test_a_tile_header_with_arithmetic_is_read_and_an_unreadable_one_is_named():
    """Verdict 2: `// tile: 4*WX x 4*WY` is (16, 8), not (4, WX); a header that cannot be
    read is refused in one line that quotes it."""
    w = loader.load_file(EXAMPLES / "transpose.py")
    body = ("// tile: 4*WX x 4*WY\nconst WX: u32 = 4u;\nconst WY: u32 = 2u;\n"
            "@compute @workgroup_size(4, 2)\nfn main(@builtin(workgroup_id) wid: vec3<u32>) {}\n")
    assert stitch(w, w.size("seed"), body).tile == (16, 8)
    with pytest.raises(ContractError) as info:
        stitch(w, w.size("seed"), body.replace("4*WY", "4*WZ"))
    assert "`// tile: 4*WX x 4*WZ`" in str(info.value) and "'WZ'" in str(info.value)
    assert info.value.diagnostic.line == 1


def test_a_baseline_dispatched_many_times_over_is_said(tmp_path, capsys):
    """Verdict 3: a user's baseline whose tile header undercounts its work is probed like
    any candidate: the run says so and times it on the grid it needs."""
    over = PLAIN.replace("@compute @workgroup_size(64)", "// tile: 64\n@compute @workgroup_size(64)").replace(
        "if (g.x < N) { y[g.x] = x[g.x] + 1.0; }",
        "for (var k = 0u; k < 8u; k++) { let i = (g.x / 64u) * 512u + k * 64u + g.x % 64u;"
        " if (i < N) { y[i] = x[i] + 1.0; } }")
    w = _workload(tmp_path, ADD_ONE.replace("BASELINE", over).replace("1000", "4096"))
    assert main(["bench", "-w", str(w), *FAST[:-1]]) == 0
    err = capsys.readouterr().err
    assert "the baseline: dispatched 8x over" in err


def test_binding_gaps_a_second_group_and_a_uniform_run_as_declared(tmp_path, capsys):
    """Verdicts 4 and 6: bindings 0, 2, 4 and @group(1) bind as the kernel declares them;
    an input too big for a uniform binding, and an output, declared var<uniform> are refused
    at their own declarations."""
    got = _bench(capsys, EXAMPLES / "row_normalize.py")
    base = got["baseline"]
    assert base["status"] == "verified", base["reason"]
    assert [p["entry"] for p in base["passes"]] == ["row_sums", "normalize"] and len(base["pass_ms"]) == 2
    assert base["uniforms"]["params"] == "00020000" "00040000" "0000003f" "00000000"  # 512, 1024, 0.5
    text = (EXAMPLES / "row_normalize.wgsl").read_text().replace(
        "@group(0) @binding(0) var<storage, read> x: array<f32>;",
        "@group(0) @binding(0) var<uniform> x: Params;")
    w = loader.load_file(EXAMPLES / "row_normalize.py")
    with pytest.raises(ContractError) as info:
        stitch(w, w.size("seed"), text)
    assert "maxUniformBufferBindingSize" in str(info.value) and info.value.diagnostic.line == 11
    text = text.replace("@group(0) @binding(2) var<storage, read_write> y: array<f32>;",
                        "@group(0) @binding(2) var<uniform> y: Params;")
    with pytest.raises(ContractError) as info:  # an output is never a uniform
        stitch(w, w.size("seed"), text)
    assert "declared var<uniform>" in str(info.value) and "only a read-only input" in str(info.value)


def test_a_candidate_may_replace_one_pass(tmp_path, capsys):
    """A kernel that defines only the second pass's entry point runs after the workload's first."""
    only = textwrap.dedent("""
        struct Params { rows: u32, cols: u32, alpha: f32, }
        @group(0) @binding(0) var<storage, read> x: array<f32>;
        @group(0) @binding(2) var<storage, read_write> y: array<f32>;
        @group(0) @binding(4) var<uniform> params: Params;
        @group(1) @binding(0) var<storage, read> sums: array<f32>;
        @compute @workgroup_size(256)
        fn normalize(@builtin(global_invocation_id) gid: vec3<u32>) {
            let i = gid.y * params.cols + gid.x;
            if (gid.x < params.cols) { y[i] = params.alpha * x[i] / sums[gid.y]; }
        }
    """)
    wrong = only.replace("params.alpha * x[i]", "x[i]")
    got = _bench(capsys, EXAMPLES / "row_normalize.py", only, wrong, size="ROWS=64,COLS=300", where=tmp_path)
    assert got["k0"]["status"] == "verified", got["k0"]["reason"]
    assert [p["own"] for p in got["k0"]["passes"]] == [False, True]
    assert got["k1"]["status"] == "rejected"


def test_a_template_kernel_is_filled_and_tuned(tmp_path, capsys):
    """`{{WG}}` and `#ifdef` are expanded by Vajra; a `// tune:` line may name a template value."""
    template = textwrap.dedent("""
        // tune: WG = 32, 64
        @compute @workgroup_size({{WG}})
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {
        #ifdef PLUS_ONE
            if (g.x < N) { y[g.x] = x[g.x] + 1.0; }
        #else
            if (g.x < N) { y[g.x] = x[g.x]; }
        #endif
        }
    """)
    w = _workload(tmp_path, ADD_ONE.replace("BASELINE", PLAIN).replace(
        "atol=1e-6,", "atol=1e-6, defines=lambda s: {'PLUS_ONE': 1},"))
    kernel = tmp_path / "t.wgsl"
    kernel.write_text(template)
    assert main(["tune", "-w", str(w), "-k", str(kernel), "--source", "params", "--budget", "2",
                 "--generations", "1", "--json", *FAST]) == 0
    doc = json.loads(capsys.readouterr().out)
    tuned = [r for r in doc["results"] if r["name"].startswith("t ")]
    assert sorted(r["params"]["WG"] for r in tuned) == [32, 64]
    assert all(r["status"] == "verified" for r in tuned), [r["reason"] for r in tuned]
    assert all(r["workgroup_size"][0] == r["params"]["WG"] for r in tuned)


def test_a_texture_is_refused_in_one_line(tmp_path, capsys):
    kernel = "@group(0) @binding(1) var img: texture_2d<f32>;\n" + PLAIN
    got = _bench(capsys, _workload(tmp_path, ADD_ONE.replace("BASELINE", PLAIN)), kernel)
    reason = got["k0"]["reason"]
    assert got["k0"]["status"] == "compile_error" and "`img` is a texture_2d" in reason
    assert "\n" not in reason


def test_a_published_two_level_scan_runs_as_three_passes(capsys):
    """WebGPU-Radix-Sort's prefix sum, unmodified: one entry point run at two levels with other
    buffers bound and another ELEMENT_COUNT (Pass bind/constants), then its second entry point."""
    got = _bench(capsys, Path(__file__).parent / "published" / "radix_sort_prefix_sum" / "workload_full.py",
                 size="ELEMENT_COUNT=70000")
    base = got["baseline"]
    assert base["status"] == "verified", base["reason"]
    assert [p["label"] for p in base["passes"]] == ["scan_blocks", "scan_totals", "add_block_sums"]
    assert [p["grid"][0] for p in base["passes"]] == [137, 1, 137]
    assert base["passes"][1]["constants"]["ELEMENT_COUNT"] == 137 and len(base["pass_ms"]) == 3


def test_a_folded_explicit_grid_refuses_a_kernel_that_indexes_globally(tmp_path):
    """Past the adapter's per-axis limit the grid is folded; a kernel that indexes by
    global_invocation_id would compute the wrong elements there, and is told so."""
    w = loader.load_file(_workload(tmp_path, ADD_ONE.replace("BASELINE", PLAIN).replace(
        "atol=1e-6,", "atol=1e-6, grid=lambda s, p: (-(-s['N'] // 64), 1, 1),")))
    size = w.size("N=8000000")  # 125000 workgroups along x: over 65535
    with pytest.raises(ContractError) as info:
        stitch(w, size, PLAIN)
    assert "global_invocation_id" in str(info.value) and "vajra_tile" in str(info.value)
    folded = PLAIN.replace("@builtin(global_invocation_id) g: vec3<u32>", "@builtin(workgroup_id) wid: vec3<u32>, "
                           "@builtin(local_invocation_id) lid: vec3<u32>").replace(
        "if (g.x < N)", "let t = vajra_tile(wid); let i = t.x * 64u + lid.x; if (t.y == 0u && i < N)").replace(
        "y[g.x] = x[g.x] + 1.0;", "y[i] = x[i] + 1.0;")
    st = stitch(w, size, folded)
    assert st.dispatch[0] <= 65535 and st.dispatch[0] * st.dispatch[1] >= 125000


def test_a_multi_pass_run_records_and_replays_the_same_passes(tmp_path, capsys):
    """The recording carries each pass; replay's document is the tune's."""
    rec = tmp_path / "run.jsonl"
    assert main(["bench", "-w", str(EXAMPLES / "row_normalize.py"), "--size", "ROWS=32,COLS=128",
                 "--record", str(rec), "--json", *FAST]) == 0
    live = json.loads(capsys.readouterr().out)
    assert main(["replay", str(rec), "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    pick = lambda doc: [(r["name"], r["passes"], r["pass_ms"], r["uniforms"]) for r in doc["results"]]  # noqa: E731
    assert pick(replayed) == pick(live) and len(live["results"][0]["passes"]) == 2
