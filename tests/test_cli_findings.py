"""What the CLI tells about a run must not depend on how it was asked, through main([...])
on the real adapter: ``-q`` hides progress, never a finding about the result (an
over-dispatched kernel); ``--show-source`` shows a rejected baseline's source; a workload
file whose own baseline cannot build is a broken file (exit 2, the file named); ``--json``
always leaves one JSON document on stdout, a failure's too; and ``new-workload`` never
guesses a grid from the order of the dims.
"""

from __future__ import annotations

import json
import runpy
import textwrap
from pathlib import Path

import pytest

from vajra_tui.cli.main import main

FAST = ["--reps", "3", "--warmup", "1", "--no-cache"]

ADD_ONE = '''
import numpy as np
from vajra_tui import Binding, Workload

def make_inputs(size, rng):
    return {"x": rng.standard_normal(size["N"]).astype(np.float32)}

WORKLOAD = Workload(
    name="add_one", summary="y = x + 1", dims=("N",), presets={"seed": {"N": 4096}},
    bindings=(Binding(0, "x", "read"), Binding(1, "y", "read_write")),
    buffer_len=lambda s: {"x": s["N"], "y": s["N"]},
    make_inputs=make_inputs,
    reference=lambda s, i: i["x"].astype(np.float64) + 1.0,
    flops=lambda s: float(s["N"]),
    GRID,
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
# Each workgroup writes 512 elements although its header (or the workload's grid) says 64.
OVER = PLAIN.replace("if (g.x < N) { y[g.x] = x[g.x] + 1.0; }",
                     "for (var k = 0u; k < 8u; k++) { let i = (g.x / 64u) * 512u + k * 64u + g.x % 64u;"
                     " if (i < N) { y[i] = x[i] + 1.0; } }")
OUTPUT_GRID = 'output_grid=lambda s: (s["N"], 1)'


def _workload(tmp_path: Path, baseline: str, grid: str = OUTPUT_GRID, name: str = "mine.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(ADD_ONE.replace("BASELINE", baseline).replace("GRID", grid)))
    return path


@pytest.fixture
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")


def test_quiet_still_flags_a_baseline_planned_from_a_too_small_tile(tmp_path, capsys, wide):
    w = _workload(tmp_path, OVER.replace("@compute", "// tile: 64\n@compute", 1))
    assert main(["bench", "-w", str(w), "-q", *FAST]) == 0
    out, err = capsys.readouterr()
    assert not [line for line in err.splitlines() if not line.startswith("vajra-tui: warning:")]  # -q: no progress
    assert "baseline†" in out
    assert "† baseline: dispatched 8x over" in out and "declare `// tile: 512x1`" in out


def test_quiet_still_flags_a_baseline_whose_own_grid_is_too_large(tmp_path, capsys, wide):
    w = _workload(tmp_path, OVER, grid='grid=lambda s, p: (s["N"] // 64, 1, 1)')
    assert main(["bench", "-w", str(w), "-q", *FAST]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "baseline†" in out and "† baseline: dispatched 8x over" in out
    assert "its time includes the extra workgroups: 8x1 of its 64x1 would do" in out
    assert "`// tile: 512x1`" in out


def test_show_source_prints_a_rejected_baselines_source(tmp_path, capsys):
    w = _workload(tmp_path, PLAIN.replace("+ 1.0", "+ 2.0"))
    assert main(["bench", "-w", str(w), "-q", "--show-source", *FAST]) == 1
    err = capsys.readouterr().err
    assert "// ===== baseline" in err and "y[g.x] = x[g.x] + 2.0;" in err
    assert err.strip().splitlines()[-1].startswith("vajra-tui: baseline rejected")


BAD_INPUTS = '''
from vajra_tui import Binding, Workload
import numpy as np
def mk(s, rng):
    raise ValueError("boom in make_inputs")
WORKLOAD = Workload(
    name="bad_inputs", summary="x", dims=("N",), presets={"seed": {"N": 64}},
    bindings=(Binding(0, "X", "read"), Binding(1, "Y", "read_write")),
    buffer_len=lambda s: {"X": s["N"], "Y": s["N"]},
    make_inputs=mk, reference=lambda s, i: i["X"].astype(np.float64), flops=lambda s: 0.0,
    output_grid=lambda s: (s["N"], 1),
    baseline="@compute @workgroup_size(64)\\nfn main(@builtin(global_invocation_id) g: vec3<u32>) { if (g.x < N) { Y[g.x] = X[g.x]; } }\\n",
    atol=0.0)
'''


@pytest.mark.parametrize("argv, said", [
    (["bench", "-w", "{tmp}/bad_inputs.py"], "make_inputs: raised ValueError: boom in make_inputs"),
    (["tune", "-w", "{tmp}/bad_inputs.py", "--source", "library", "--generations", "0"],
     "make_inputs: raised ValueError: boom in make_inputs"),
    (["bench", "-w", "{tmp}/absent.py"], "absent.py"),
    (["tune", "-w", "sgemm", "--export-baseline"], "--export-baseline needs --export DIR"),
    (["replay", "{tmp}/absent.jsonl"], "absent.jsonl"),
])
def test_json_gets_a_document_for_every_usage_error(tmp_path, capsys, argv, said):
    (tmp_path / "bad_inputs.py").write_text(BAD_INPUTS)
    args = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main([*args, "--json", *(["-q", *FAST] if args[0] != "replay" else [])]) == 2
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert said in doc["error"] and doc["winner"] is None and doc["results"] == []
    assert len(err.strip().splitlines()) == 1 and said in err


MATMUL = """\
struct Dimensions { M: u32, K: u32, N: u32, }
@group(0) @binding(0) var<uniform> dimensions: Dimensions;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> result: array<f32>;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) global_id: vec3<u32>) {
  let row: u32 = global_id.x;
  let col: u32 = global_id.y;
  if (row < dimensions.M && col < dimensions.N) {
    var sum = 0.0;
    for (var i: u32 = 0u; i < dimensions.K; i = i + 1u) {
      sum = sum + a[row * dimensions.K + i] * b[i * dimensions.N + col];
    }
    result[row * dimensions.N + col] = sum;
  }
}
"""


def test_the_scaffold_grid_follows_the_output_guards_or_fails_loudly(tmp_path, capsys):
    kernel = tmp_path / "mm.wgsl"
    kernel.write_text(MATMUL)
    assert main(["new-workload", str(kernel), "--out", str(tmp_path / "mm.py")]) == 0
    text = (tmp_path / "mm.py").read_text()
    assert 'size["K"]' not in next(line for line in text.splitlines() if "grid=" in line)
    workload = runpy.run_path(str(tmp_path / "mm.py"))["WORKLOAD"]
    assert workload.grid({"M": 40, "K": 3, "N": 16}, {}) == (5, 2, 1)  # x covers rows (M), y columns (N)
    # Eight outputs per invocation along each axis: no guard says which dim an axis covers.
    tiled = MATMUL.replace("let row: u32 = global_id.x;", "let row: u32 = global_id.x * 8u;")
    kernel.write_text(tiled)
    assert main(["new-workload", str(kernel), "--out", str(tmp_path / "tiled.py")]) == 0
    workload = runpy.run_path(str(tmp_path / "tiled.py"))["WORKLOAD"]
    with pytest.raises(NotImplementedError, match="TODO: grid= of entry main"):
        workload.grid({"M": 40, "K": 3, "N": 16}, {})


@pytest.mark.parametrize("baseline, grid, said", [
    # a template value no one gives: the template's own line, not the parser tripping on `{{`
    (PLAIN.replace("x[g.x] + 1.0", "x[g.x] + {{ONE}}"), OUTPUT_GRID,
     "baseline: compile_error: template: {{ONE}} on line 4 has no value"),
    # the workload's grid returns floats (the user wrote / for //)
    (PLAIN, 'grid=lambda s, p: (s["N"] / 64, 1, 1)', "workload grid: returned (64.0, 1, 1)"),
    # a plain WGSL error in the file's own baseline
    (PLAIN.replace("+ 1.0;", "+ 1.0"), OUTPUT_GRID, "baseline: compile_error: 4:42: expected `;`"),
])
def test_a_workload_files_baseline_that_cannot_build_is_a_broken_file(tmp_path, capsys, baseline, grid, said):
    """It exited 1 as a failed run, and a missing template value read as the compiler's
    'expected `;`, found "<"' at the unexpanded placeholder."""
    w = _workload(tmp_path, baseline, grid=grid)
    assert main(["bench", "-w", str(w), "-q", *FAST]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("vajra-tui: ") and "mine.py: baseline: compile_error" in err[-1], err
    assert said in err[-1], err


def test_a_written_input_names_the_inout_binding_that_allows_it(tmp_path, capsys):
    w = _workload(tmp_path, PLAIN.replace("{ y[g.x] = x[g.x] + 1.0; }", "{ x[g.x] = 0.0; y[g.x] = 1.0; }")
                  .replace("@compute", "@group(0) @binding(0) var<storage, read_write> x: array<f32>;\n@compute"))
    assert main(["bench", "-w", str(w), "-q", *FAST]) == 2
    assert "inputs must be read-only (a kernel that writes one needs the workload to bind it 'inout')" \
        in capsys.readouterr().err


READ_ONLY_AS_WRITTEN = """
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < arrayLength(&x)) { let v = x[g.x]; y[g.x] = v + 1.0; }
}
"""


def test_an_input_declared_read_write_and_only_read_runs_as_written(tmp_path, capsys):
    """gpu.cpp's llm.c kernels declare every buffer read_write; reads and arrayLength write nothing."""
    assert main(["bench", "-w", str(_workload(tmp_path, READ_ONLY_AS_WRITTEN)), "-q", *FAST]) == 0
    assert "verified" in capsys.readouterr().out


TWO_A = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) { if (g.x < arrayLength(&y)) { y[g.x] = x[g.x]; } }
"""


def test_the_scaffold_names_passes_that_share_an_entry_point(tmp_path, capsys):
    """Two modules, each with `main`: the passes it wrote had no name= and the file could not load."""
    (tmp_path / "a.wgsl").write_text(TWO_A)
    (tmp_path / "b.wgsl").write_text(TWO_A.replace("y[g.x] = x[g.x];", "y[g.x] = 2.0 * y[g.x];"))
    out = tmp_path / "two.py"
    assert main(["new-workload", str(tmp_path / "a.wgsl"), str(tmp_path / "b.wgsl"), "--out", str(out)]) == 0
    text = out.read_text()
    assert 'name="main_1"' in text and 'name="main_2"' in text, text


def test_the_scaffold_refuses_two_modules_with_different_buffers_at_one_slot(tmp_path, capsys):
    """The slot's second declaration was dropped without a word: a scaffold that could never run."""
    (tmp_path / "a.wgsl").write_text(TWO_A)
    (tmp_path / "b.wgsl").write_text(TWO_A.replace("var<storage, read> x: array<f32>", "var<storage, read> t: array<u32>")
                                     .replace("x[g.x]", "f32(t[g.x])"))
    assert main(["new-workload", str(tmp_path / "a.wgsl"), str(tmp_path / "b.wgsl"),
                 "--out", str(tmp_path / "two.py")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "both bind @group(0) @binding(0), as different buffers" in err[0], err
    assert not (tmp_path / "two.py").exists()
