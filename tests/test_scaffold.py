"""`vajra-tui new-workload`: a kernel's bindings and entry points written as a workload file.

The written file must import at once (only its TODO stubs raise, when called), declare
each binding as the kernel does (group, number, access, dtype, uniform members), and the
command must refuse in one line, exit 2, what Vajra cannot run or must not overwrite.
"""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

import vajra_tui
from vajra_tui.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = ROOT / "tests" / "published"

TWO_PASSES = """\
// tune: TILE = 8, 16
struct Params {
    M: u32,
    N: u32,
    alpha: f32,
}
@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;
@group(1) @binding(0) var<storage, read> idx: array<u32>;
override WG: u32 = 64;

@compute @workgroup_size({{WG2}}, 4)
fn scale(@builtin(global_invocation_id) g: vec3<u32>) { out[g.x] = a[g.x].x * params.alpha; }

@compute @workgroup_size(WG)
fn gather(@builtin(global_invocation_id) g: vec3<u32>) { out[g.x] += f32(idx[g.x]); }
"""

ONE_PASS = """\
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<i32>;
#ifdef FAST
const K = 2u;
#endif
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>) { y[g.x] = i32(x[g.x]); }
"""

TEXTURE = """\
@group(0) @binding(0) var<storage, read_write> out: array<f32>;

@group(0) @binding(1) var img: texture_2d<f32>;
@compute @workgroup_size(8, 8)
fn main() {}
"""


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> None:
    """The workload API of issue #23: ``Pass`` exported by the package (added here until it is)."""
    bindings = pytest.importorskip("vajra_tui.engine.workloads.bindings")
    if not hasattr(bindings, "Pass"):
        pytest.skip("the Pass/Binding(group=...) API is not in this checkout yet")
    monkeypatch.setattr(vajra_tui, "Pass", bindings.Pass, raising=False)


def scaffold(tmp_path: Path, source: str, *flags: str, name: str = "kernel.wgsl") -> tuple[int, Path]:
    kernel = tmp_path / name
    kernel.write_text(source)
    out = tmp_path / "mine.py"
    return main(["new-workload", str(kernel), "--out", str(out), *flags]), out


def test_two_entry_points_become_passes_with_each_binding_as_declared(tmp_path, api, capsys):
    status, out = scaffold(tmp_path, TWO_PASSES)
    assert status == 0
    text = out.read_text()
    assert "from vajra_tui import Binding, Pass, Workload" in text
    assert 'KERNEL = Path(__file__).with_name("kernel.wgsl").read_text(encoding="utf-8")' in text
    assert 'Binding(0, "a", "read", "f32"),  # array<vec4<f32>>; dtype f32: buffer_len counts f32' in text
    assert 'Binding(1, "out", "read_write", "f32"),  # array<f32>; TODO: "inout"' in text
    assert 'Binding(3, "params", "uniform", struct="Params",' in text
    assert 'fields=(("M", "u32"), ("N", "u32"), ("alpha", "f32")),' in text
    assert 'Binding(0, "idx", "read", "u32", group=1),' in text
    assert 'dims=("M", "N"),' in text
    workload = runpy.run_path(str(out))["WORKLOAD"]
    assert [(b.group, b.index, b.name, b.access) for b in workload.bindings] == [
        (0, 0, "a", "read"), (0, 1, "out", "read_write"), (0, 3, "params", "uniform"), (1, 0, "idx", "read")]
    assert [p.entry for p in workload.passes] == ["scale", "gather"]
    assert workload.passes[1].grid({"M": 100, "N": 7}, {}) == (2, 1, 1)  # M over the override's 64
    assert workload.passes[1].grid({"M": 100, "N": 7}, {"WG": 32}) == (4, 1, 1)
    uniform = workload.bindings[2]
    with pytest.raises(NotImplementedError, match="TODO: alpha"):
        uniform.values({"M": 1, "N": 2}, {})
    with pytest.raises(NotImplementedError, match="TODO: the value of template name WG2"):
        workload.defines({"M": 1, "N": 2})
    for stub in (workload.buffer_len, workload.flops):
        with pytest.raises(NotImplementedError, match="TODO"):
            stub({"M": 1, "N": 2})
    said = capsys.readouterr().err
    todos = sum("TODO" in line for line in text.splitlines())
    assert f"wrote {out}" in said and f"{todos} TODOs left" in said


def test_one_entry_point_an_integer_output_and_a_kernel_in_another_folder(tmp_path, api):
    (tmp_path / "kernels").mkdir()
    kernel = tmp_path / "kernels" / "cast.wgsl"
    kernel.write_text(ONE_PASS)
    out = tmp_path / "work" / "cast.py"
    assert main(["new-workload", str(kernel), "--out", str(out), "--name", "cast"]) == 0
    text = out.read_text()
    assert "Pass" not in text.split("import Binding", 1)[1].split("\n", 1)[0]
    assert '(Path(__file__).parent / "../kernels/cast.wgsl")' in text
    assert 'entry="main",' in text and "atol=0.0" in text and "rtol=0.0" in text
    workload = runpy.run_path(str(out))["WORKLOAD"]
    assert workload.name == "cast" and workload.dims == ("N",)
    assert workload.grid({"N": 1000}, {}) == (4, 1, 1)
    with pytest.raises(NotImplementedError, match="FAST"):
        workload.defines({"N": 1})


def test_the_scaffold_of_every_published_kernel_imports_or_is_refused_in_one_line(tmp_path, api, capsys):
    for kernel in sorted(PUBLISHED.glob("*/kernel.wgsl")):
        out = tmp_path / f"{kernel.parent.name}.py"
        status = main(["new-workload", str(kernel), "--out", str(out), "--name", kernel.parent.name])
        err = capsys.readouterr().err
        if status == 0:
            runpy.run_path(str(out))
        else:
            assert status == 2 and len(err.strip().splitlines()) == 1
            assert "not supported yet" in err, err


def test_a_buffer_declared_read_write_that_no_module_writes_is_scaffolded_as_an_input(tmp_path, api):
    """gpu.cpp's llm.c kernels declare every buffer read_write; only out, mean and rstd are written."""
    kernel = PUBLISHED / "gpucpp_llmc_layernorm" / "kernel.wgsl"
    out = tmp_path / "layernorm.py"
    assert main(["new-workload", str(kernel), "--out", str(out)]) == 0
    workload = runpy.run_path(str(out))["WORKLOAD"]
    access = {b.name: b.access for b in workload.bindings}
    assert access == {"inp": "read", "weight": "read", "bias": "read", "out": "read_write", "mean": "read_write",
                      "rstd": "read_write", "params": "uniform"}
    assert 'Binding(0, "inp", "read", "f32"),  # array<precision>; declared read_write, never written' in out.read_text()


def test_a_texture_is_refused_with_its_line(tmp_path, capsys):
    status, out = scaffold(tmp_path, TEXTURE)
    assert status == 2 and not out.exists()
    assert capsys.readouterr().err.strip().endswith(
        "kernel.wgsl:3: `img` is a texture; Vajra runs storage and uniform buffers only "
        "(textures are not supported yet)")


def test_an_existing_file_is_never_overwritten(tmp_path, capsys):
    (tmp_path / "mine.py").write_text("# mine\n")
    status, out = scaffold(tmp_path, ONE_PASS)
    assert status == 2 and out.read_text() == "# mine\n"
    assert "exists" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("content", [b"\xff\xfe not utf-8", None])
def test_an_unreadable_kernel_is_one_line(tmp_path, capsys, content):
    kernel = tmp_path / "k.wgsl"
    if content is not None:
        kernel.write_bytes(content)
    assert main(["new-workload", str(kernel), "--out", str(tmp_path / "k.py")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "k.wgsl" in err and not (tmp_path / "k.py").exists()


def test_a_bad_name_or_a_kernel_without_an_output_is_refused(tmp_path, capsys):
    assert scaffold(tmp_path, ONE_PASS, "--name", "9lives")[0] == 2
    assert "--name" in capsys.readouterr().err
    assert scaffold(tmp_path, ONE_PASS.replace("read_write", "read"))[0] == 2
    assert "no read_write storage buffer" in capsys.readouterr().err


def test_the_command_line(tmp_path):
    kernel = tmp_path / "kernel.wgsl"
    kernel.write_text(ONE_PASS)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "vajra_tui", "new-workload", *args], env=env,
                              capture_output=True, text=True, timeout=120)

    first = run(str(kernel))
    assert first.returncode == 0, first.stderr
    assert (tmp_path / "kernel.py").exists() and "TODOs left" in first.stderr
    again = run(str(kernel))
    assert again.returncode == 2 and len(again.stderr.strip().splitlines()) == 1
    texture = tmp_path / "tex.wgsl"
    texture.write_text(TEXTURE)
    refused = run(str(texture))
    assert refused.returncode == 2 and "is a texture" in refused.stderr and not (tmp_path / "tex.py").exists()


def test_a_second_file_is_a_further_pass_with_its_own_source(tmp_path, api):
    first, second = tmp_path / "cast.wgsl", tmp_path / "more.wgsl"
    first.write_text(ONE_PASS)
    second.write_text(ONE_PASS.replace("fn main", "fn finish"))
    out = tmp_path / "both.py"
    assert main(["new-workload", str(first), str(second), "--out", str(out)]) == 0
    text = out.read_text()
    assert 'KERNEL_2 = Path(__file__).with_name("more.wgsl")' in text
    assert 'Pass(entry="finish", source=KERNEL_2,' in text
    workload = runpy.run_path(str(out))["WORKLOAD"]
    assert [p.entry for p in workload.passes] == ["main", "finish"]
    assert workload.passes[1].source == second.read_text()
    assert [b.name for b in workload.bindings] == ["x", "y"]  # one binding per slot
