"""Your own workloads, end to end on the real adapter: files, modules, installed packages and
the user's folder, through the CLI, the Python API, the loopback LLM server and the picker."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import child_pythonpath

from vajra_tui.cli.main import main
from vajra_tui.engine.workloads import loader, registry

EXAMPLES = Path(__file__).parents[1] / "examples" / "workloads"
TRANSPOSE, TILED = EXAMPLES / "transpose.py", EXAMPLES / "transpose_tiled.wgsl"
ROWHIST, SHARED = EXAMPLES / "rowhist.py", EXAMPLES / "rowhist_shared.wgsl"
FAST = ["--reps", "3", "--warmup", "1", "--no-cache"]
# a test that needs a crown times nine rounds: of three, one preempted on a loaded machine
# (a 0.16 ms kernel against a 1.8 ms baseline) left the bootstrap unable to tell them apart
CROWN = ["--reps", "9", "--warmup", "1", "--no-cache"]

COPY_WITHOUT_TRANSPOSE = """\
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = vajra_tile(wid);
    let i = (t.y * 16u + lid.y) * ROWS + t.x * 16u + lid.x;
    if (t.x * 16u + lid.x < ROWS && t.y * 16u + lid.y < COLS) { B[i] = A[i]; }
}
"""
ROW_OF_B = """\
// tile: ROWS x 64
@compute @workgroup_size(1, 64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let y = vajra_tile(wid).y * 64u + lid.y;
    if (y >= COLS) { return; }
    for (var x = 0u; x < ROWS; x = x + 1u) { B[y * ROWS + x] = A[x * COLS + y]; }
}
"""
SKIPS_BIN_ZERO = SHARED.read_text().replace("for (var b = lid.x;", "for (var b = lid.x + 1u;")


def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


def test_bench_a_user_workload_file(capsys, tmp_path):
    """Correct kernels verify, a wrong one is rejected, and the origin says where it came from."""
    wrong = tmp_path / "copy.wgsl"
    wrong.write_text(COPY_WITHOUT_TRANSPOSE)
    assert main(["bench", "-w", str(TRANSPOSE), "--size", "ROWS=48,COLS=40", "-k", str(TILED),
                 "-k", str(wrong), "--json", "-q", *FAST]) == 0
    doc = _json(capsys)
    assert doc["workload"]["name"] == "transpose" and doc["workload"]["origin"] == f"file: {TRANSPOSE}"
    status = {r["name"]: (r["status"], r["reason"]) for r in doc["results"]}
    assert status["baseline"][0] == status["transpose_tiled"][0] == "verified", status
    assert status["copy"][0] == "rejected" and "out of tolerance" in status["copy"][1]
    tiled = next(r for r in doc["results"] if r["name"] == "transpose_tiled")
    assert tiled["workgroup_size"] == [16, 4, 1]  # the overrides' defaults: TILE=16, 4 rows each


def test_integer_outputs_are_poisoned_and_checked(capsys, tmp_path):
    """u32 in and out: an unwritten bin is "never written", whatever value the poison has."""
    skips = tmp_path / "skips.wgsl"
    skips.write_text(SKIPS_BIN_ZERO)
    assert main(["bench", "-w", str(ROWHIST), "--size", "ROWS=16,COLS=300,BINS=20", "-k", str(SHARED),
                 "-k", str(skips), "--json", "-q", *FAST]) == 0
    status = {r["name"]: (r["status"], r["reason"]) for r in _json(capsys)["results"]}
    assert status["rowhist_shared"][0] == "verified", status
    assert status["skips"][0] == "rejected" and "16 of 320 elements never written" in status["skips"][1]


@pytest.mark.usefixtures("node_sidecar")  # the export runs under Node + Dawn below
def test_params_search_measures_every_configuration_and_exports_the_winner(capsys, tmp_path):
    """--source params: the // tune: space, each configuration a candidate with its pipeline
    constants; the winner's values become the WGSL defaults, TS constants and lock entries."""
    out = tmp_path / "out"
    assert main(["tune", "-w", str(ROWHIST), "--size", "ROWS=64,COLS=512", "-k", str(SHARED),
                 "--source", "params", "--export", str(out), "--json", "-q", *CROWN]) == 0
    doc = _json(capsys)
    assert doc["params"]["search"] == "exhaustive" and doc["params"]["measured"] == 4
    configs = [r for r in doc["results"] if r["strategy"] == "params"]
    assert sorted(r["constants"]["WG"] for r in configs) == [32, 64, 128, 256]
    assert all(r["status"] == "verified" for r in configs), [r["reason"] for r in configs]
    assert len({r["source_sha256"] for r in configs}) == 4  # one source, four kernels
    winner = next(r for r in configs if r["name"] == doc["winner"])
    wg = winner["constants"]["WG"]
    assert winner["workgroup_size"] == [wg, 1, 1]
    wgsl = (out / "rowhist.wgsl").read_text()
    assert f"override WG: u32 = {wg}u;" in wgsl and "enable" not in wgsl
    ts = (out / "rowhist.ts").read_text()
    assert f'export const CONSTANTS: Readonly<Record<string, number>> = {{"WG": {wg}}};' in ts
    assert '"dtype": "u32"' in ts and "Uint32Array" in ts
    lock = json.loads((out / "vajra.lock.json").read_text())
    kernel = lock["entries"][0]["kernel"]
    assert kernel["constants"] == {"WG": wg} and kernel["params"]["search"] == "exhaustive"
    assert kernel["sha256"] == winner["source_sha256"]
    _run_under_dawn(out / "rowhist.ts", {"ROWS": 64, "COLS": 512, "BINS": 64}, tmp_path / "run")


def _run_under_dawn(module: Path, size: dict[str, int], work: Path) -> None:
    """The exported module, with its pipeline constants, under Node + Dawn: the reference's counts."""
    import os
    import subprocess

    import numpy as np

    from vajra_tui.engine.browser import sidecar
    from vajra_tui.engine.browser import tint

    if not tint.node_available() or shutil.which("npm") is None or tint.ensure_node_modules() is None:
        pytest.skip("node/npm or the npm 'webgpu' package (Dawn) missing: exported TypeScript not run")
    tsx = sidecar.node_dir() / "node_modules" / ".bin" / "tsx"
    if not tsx.exists():
        pytest.skip("tsx is not installed in the sidecar")
    w = loader.load_file(ROWHIST)
    inputs = w.checked_inputs(size, np.random.default_rng(7))
    work.mkdir(parents=True)
    inputs["X"].tofile(work / "X.bin")  # raw little-endian words, as the harness passes them on
    (work / "manifest.json").write_text(json.dumps({"inputs": {"X": "X.bin"}, "output": "out.bin"}))
    proc = subprocess.run([str(tsx), str(sidecar.node_dir() / "run_export.ts"), str(module),
                           str(work / "manifest.json")], cwd=sidecar.node_dir(), capture_output=True,
                          text=True, timeout=120, env={**os.environ, "EGL_PLATFORM": "surfaceless"})
    report = json.loads(([ln for ln in proc.stdout.splitlines() if ln.startswith("{")] or ["{}"])[-1])
    if report.get("unavailable"):
        pytest.skip(f"Dawn has no adapter here: {report.get('error')}")
    assert proc.returncode == 0 and report.get("ok"), (proc.stdout[-2000:], proc.stderr[-2000:])
    got = np.fromfile(work / "out.bin", dtype="<u4")
    assert np.array_equal(got, w.checked_references(size, inputs)["H"])


def test_params_search_past_the_budget_uses_optuna_through_the_api():
    import vajra_tui

    report = vajra_tui.tune(TRANSPOSE, [TILED], size="ROWS=40,COLS=24", source="params", budget=4,
                            warmup=1, reps=3)
    assert report.params["search"] == "optuna" and report.params["space"] == 12
    configs = [r for r in report.results if r.strategy == "params"]
    assert 1 <= len(configs) <= 4 and report.params["measured"] == len(configs)
    assert len({tuple(sorted(r.constants.items())) for r in configs}) == len(configs)
    assert all(r.status == "verified" for r in configs), [r.reason for r in configs]
    assert report.baseline.status == "verified" and report.to_json()["params"] == report.params


def test_llm_tune_of_a_user_workload_builds_its_prompt_from_the_declaration(monkeypatch, capsys):
    import llm_server
    from llm_server import LLMServer

    monkeypatch.setattr(llm_server, "KERNEL_REPLY", f"A row of B per invocation:\n```wgsl\n{ROW_OF_B}```\n")
    monkeypatch.setenv("NEBIUS_API_KEY", "test-key-0123456789")
    monkeypatch.setenv("VAJRA_LLM_MODEL", "m")
    monkeypatch.setenv("VAJRA_LLM_FALLBACK_MODEL", "m")
    with LLMServer(chunk_size=256, chunk_delay=0.0) as server:
        monkeypatch.setenv("VAJRA_LLM_BASE_URL", server.url)
        assert main(["tune", "-w", str(TRANSPOSE), "--size", "ROWS=40,COLS=24", "--source", "llm",
                     "--generations", "0", "--json", "-q", *FAST]) == 0
    doc = _json(capsys)
    gen1 = [r for r in doc["results"] if r["generation"] == 1 and r["name"] != "baseline"]
    assert {r["strategy"] for r in gen1} == {"A", "B", "C"} and "verified" in {r["status"] for r in gen1}
    prompt = server.messages("m")[0][1]["content"]
    for needle in ("Workload: transpose (B = Aᵀ", "ROWS=40, COLS=24", "@binding(0) A: array<f32>, 960 "
                   "elements (input, read-only)", "@binding(1) B: array<f32>", "Output grid: x = ROWS = 40, "
                   "y = COLS = 24", "B[y * ROWS + x] = A[x * COLS + y];", "Baseline kernel (correct, slow), measured"):
        assert needle in prompt, needle
    for builtin in ("sgemm", "softmax", "conv1d", "sobel", "layernorm", "gemv"):
        assert builtin not in prompt.lower(), builtin


# ---- broken files ---------------------------------------------------------------------
GOOD = TRANSPOSE.read_text()
BROKEN = {
    "missing_field": (GOOD.replace("    flops=lambda s: 0.0,", ""), "flops"),
    "import_error": (GOOD.replace("import numpy as np\n", "import numpy as np\nimport numpy_typo\n"),
                     "importing it raised ModuleNotFoundError: No module named 'numpy_typo'"),
    "syntax": (GOOD.replace("def reference(", "def reference(("), "syntax error"),
    "unknown_field": (GOOD.replace("rtol=0.0,", "rtoll=0.0,"), "rtoll: is no Workload field (did you mean 'rtol'?)"),
    "lengths": (GOOD.replace('"B": s["ROWS"] * s["COLS"]}', '"C": 1}'), "buffer_len: returns no length for binding 'B'"),
    "no_workload": (GOOD.replace("WORKLOAD = Workload(", "OTHER = Workload("), "WORKLOAD: not defined"),
    "dtype": (GOOD.replace('Binding(1, "B", "read_write")', 'Binding(1, "B", "read_write", dtype="f64")'),
              "bindings: 'B': dtype 'f64'"),
    # these two are found where they are computed: in the GPU worker, at the size that runs
    "reference_shape": (GOOD.replace("return a.T.ravel()", "return a.T.ravel()[:-1]"),
                        "reference: 'B' has 959 elements"),
    "input_dtype": (GOOD.replace(".astype(np.float32)}", "}"), "make_inputs: 'A' is float64, binding A is f32"),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_broken_workload_file_is_one_line_naming_file_and_field(case, tmp_path, capsys):
    text, needle = BROKEN[case]
    path = tmp_path / f"{case}.py"
    path.write_text(text)
    assert main(["bench", "-w", str(path), "--size", "ROWS=40,COLS=24", "-q", *FAST]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith(f"vajra-tui: {path}") and needle in err, err  # mine.py[:line]: field: ...


# ---- modules, packages, and results that follow the file ---------------------------------
def test_installed_packages_register_workloads_through_the_entry_point_group(tmp_path, monkeypatch, capsys):
    site = tmp_path / "site"
    (site / "vajra_extra").mkdir(parents=True)
    (site / "vajra_extra" / "__init__.py").write_text(
        GOOD.replace('name="transpose"', 'name="transpose2"'))
    info = site / "vajra_extra-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: vajra-extra\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[vajra_tui.workloads]\ntranspose2 = vajra_extra:WORKLOAD\n"
                                           "broken = vajra_extra:NOPE\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", str(site))  # the GPU worker imports it too
    monkeypatch.setattr(registry, "_REGISTERED", None)
    found = {f.name: f for f in loader.registered()}
    assert [n for n in found][:6] == ["sgemm", "softmax", "conv1d", "sobel", "layernorm", "gemv"]
    assert all(found[n].origin == "built-in" for n in ("sgemm", "gemv"))  # through the same group
    assert found["transpose2"].origin == "package vajra-extra" and found["transpose2"].workload
    assert "has no attribute 'NOPE'" in found["broken"].error and found["broken"].workload is None
    for spec in ("transpose2", "vajra_extra:WORKLOAD"):
        assert main(["bench", "-w", spec, "--size", "24", "--json", "-q", *FAST]) == 0
        assert _json(capsys)["results"][0]["status"] == "verified"
    monkeypatch.setattr(registry, "_REGISTERED", None)


LAZY_PROBE = """\
import json, os, sys
from vajra_tui.engine import workloads

def loaded():  # the workload modules imported so far, and whether the plugin's import was tried
    return [*sorted(m for m in sys.modules if m.startswith("vajra_tui.engine.workloads.")),
            *(["vajra_hostile tried"] if os.path.exists(os.environ["VAJRA_HOSTILE_MARK"]) else [])]

out = {"names": workloads.entry_point_names(), "after_names": loaded()}
out["softmax"] = workloads.get_workload("softmax").name
out["after_softmax"] = loaded()
try:
    workloads.get_workload("hostile")
except workloads.WorkloadError as exc:
    out["hostile"] = str(exc)
out["after_hostile"] = loaded()
from vajra_tui.engine.workloads import WORKLOADS
out["workloads"] = list(WORKLOADS)
print(json.dumps(out))
"""


def test_importing_the_registry_imports_no_workload_until_one_is_asked_for(tmp_path):
    """The GPU worker and each staging process import the engine: a registered workload's
    module (another package's, which may be slow or broken) is imported only when asked for."""
    import os
    import subprocess
    import sys

    site = tmp_path / "site"
    site.mkdir()
    (site / "vajra_hostile.py").write_text(  # leaves a mark: a failed import leaves no module behind
        'import os\nopen(os.environ["VAJRA_HOSTILE_MARK"], "w").close()\n'
        'raise RuntimeError("a plugin that breaks whoever imports it")\n')
    info = site / "vajra_hostile-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: vajra-hostile\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[vajra_tui.workloads]\nhostile = vajra_hostile:WORKLOAD\n")
    proc = subprocess.run([sys.executable, "-c", LAZY_PROBE], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": os.pathsep.join([str(site), child_pythonpath()]),
                                                  "VAJRA_HOSTILE_MARK": str(tmp_path / "mark")})
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.splitlines()[-1])
    builtins = ["sgemm", "softmax", "conv1d", "sobel", "layernorm", "gemv", "attention", "fft", "fft2"]
    assert out["names"] == [*builtins, "hostile"]  # from the metadata alone
    assert out["after_names"] == [f"vajra_tui.engine.workloads.{m}" for m in (
        "base", "bindings", "declaration", "errors", "load_checks", "loader", "origins", "registry", "returns",
        "sizes", "timed_import")]  # the type and the loader's modules: no workload's
    assert out["softmax"] == "softmax"
    assert out["after_softmax"] == sorted([*out["after_names"], "vajra_tui.engine.workloads.softmax"])
    assert out["hostile"] == ("entry point 'hostile' (vajra_hostile:WORKLOAD): raised RuntimeError: "
                              "a plugin that breaks whoever imports it")
    assert out["after_hostile"] == [*out["after_softmax"], "vajra_hostile tried"]  # asked for: imported
    assert out["workloads"] == builtins  # built on first access, every module imported then


def test_results_of_an_edited_workload_file_are_keyed_anew(tmp_path):
    from vajra_tui.engine.session import Session

    path = tmp_path / "mine.py"
    path.write_text(GOOD)
    w = loader.load_file(path)
    before = Session(w, w.size("8"), None, lambda e: None)._result_key("0" * 64)
    path.write_text(GOOD.replace("# a copy is exact", "# exact"))
    w2 = loader.load_file(path)
    after = Session(w2, w2.size("8"), None, lambda e: None)._result_key("0" * 64)
    assert before != after and before.startswith("transpose@") and after.startswith("transpose@")


HALVES = '''\
"""Two f16 outputs from one f16 input: LO = X / 2, HI = 2 X."""
import numpy as np
from vajra_tui import Binding, Workload

def make_inputs(s, rng):
    return {"X": rng.uniform(-4, 4, s["N"]).astype(np.float16)}

def reference(s, x):
    v = x["X"].astype(np.float64)
    return {"LO": v / 2, "HI": v * 2}

WORKLOAD = Workload(
    name="halves", summary="LO = X/2 and HI = 2X, f16", dims=("N",), presets={"seed": {"N": 1001}},
    bindings=(Binding(0, "X", "read", "f16"), Binding(1, "LO", "read_write", "f16"),
              Binding(2, "HI", "read_write", "f16")),
    buffer_len=lambda s: {"X": s["N"], "LO": s["N"], "HI": s["N"]},
    make_inputs=make_inputs, reference=reference, flops=lambda s: 2.0 * s["N"],
    output_grid=lambda s: (s["N"], 1), atol=0.0, rtol=1e-3,
    baseline="""
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < N) { LO[g.x] = X[g.x] * 0.5h; HI[g.x] = X[g.x] * 2.0h; }
}
""")
'''


def test_f16_bindings_and_several_outputs_through_the_api(tmp_path):
    """Every output is poisoned and verified: a kernel that forgets HI is rejected for it."""
    import vajra_tui

    path = tmp_path / "halves.py"
    path.write_text(HALVES)
    only_lo = ("@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {\n"
               "    if (g.x < N) { LO[g.x] = X[g.x] * 0.5h; }\n}\n")
    report = vajra_tui.bench(str(path), {"only_lo": only_lo}, warmup=1, reps=3)
    assert report.baseline.status == "verified", report.baseline.reason
    assert report["only_lo"].status == "rejected"
    assert "output HI: 1001 of 1001 elements never written" in report["only_lo"].reason
    assert report.workload.min_bytes == 3 * 2 * 1001  # each buffer once, at two bytes an element


def test_an_adapter_without_shader_f16_is_one_line():
    from vajra_tui.engine.events import DeviceInfo
    from vajra_tui.engine.admission.adapter_fit import missing_features

    w = loader.load_file(EXAMPLES / "transpose.py")
    assert missing_features(w, DeviceInfo(name="x")) is None
    halves = vajra_tui_workload(HALVES)
    why = missing_features(halves, DeviceInfo(name="Old GPU", enabled_features=["timestamp-query"]))
    assert why == "halves has f16 bindings, which need shader-f16; Old GPU does not offer it"


def test_a_size_over_the_adapters_buffer_limits_is_refused_before_any_buffer():
    """What one buffer or one storage binding may hold is the adapter's: a size over it is
    the user's to change, said as such (it was the driver's bind-group error, exit 1)."""
    from vajra_tui.engine.admission.adapter_fit import oversized
    from vajra_tui.engine.events import DeviceInfo

    halves = vajra_tui_workload(HALVES)  # f16: two bytes an element, buffers in whole words
    small = DeviceInfo(name="Small GPU", limits={"max-storage-buffer-binding-size": 1000,
                                                   "max-buffer-size": 4000})
    assert oversized(halves, {"N": 500}, small) is None  # 1000 bytes: exactly the limit
    assert oversized(halves, {"N": 499}, small) is None  # 998 bytes, allocated as 1000
    why = oversized(halves, {"N": 501}, small)
    assert why == ("halves at 501: binding 'X' needs 1004 B, and Small GPU allows 1000 B "
                   "(max-storage-buffer-binding-size); choose a smaller size")
    roomy = DeviceInfo(name="Roomy", limits={"max-storage-buffer-binding-size": 1 << 40, "max-buffer-size": 3000})
    assert "(max-buffer-size)" in oversized(halves, {"N": 1501}, roomy)
    unsaid = DeviceInfo(name="Quiet")  # no limits reported: WebGPU's defaults (128 MiB a binding)
    assert "128 MiB" in oversized(halves, {"N": 1 << 27}, unsaid)


def test_a_size_no_adapter_can_hold_is_a_usage_error(capsys):
    from vajra_tui.cli.main import main

    assert main(["bench", "-w", "softmax", "--size", "999999999x99999999", "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "binding 'X' needs 355 PiB" in err[0] and "choose a smaller size" in err[0], err


def vajra_tui_workload(text: str):
    import types

    module = types.ModuleType("halves_module")
    exec(compile(text, "halves.py", "exec"), module.__dict__)
    return module.WORKLOAD


# ---- the folder and the picker ---------------------------------------------------------
async def test_the_picker_lists_the_folder_and_runs_a_workload_from_it(user_dirs, monkeypatch, tmp_path):
    from textual.widgets import DataTable, Static

    from test_app import fast_settings, wait_for
    from vajra_tui.tui.app import VajraApp

    folder = Path(user_dirs) / "config" / "workloads"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(TRANSPOSE, folder / "transpose.py")
    (folder / "broken.py").write_text(BROKEN["missing_field"][0].replace('"transpose"', '"nope"'))
    monkeypatch.setenv("VAJRA_DATA_DIR", str(tmp_path / "data"))
    app = VajraApp(fast_settings(), source="library", size="ROWS=40,COLS=24")
    async with app.run_test(size=(100, 34)) as pilot:
        await wait_for(pilot, lambda: app.adapter_info is not None, "the adapter probe", 60)
        table = app.screen.query_one("#workloads", DataTable)
        labels = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        builtins = ["sgemm", "softmax", "conv1d", "sobel", "layernorm", "gemv", "attention", "fft", "fft2"]
        assert labels[:9] == builtins
        assert labels[9:] == ["broken (yours)", "transpose (yours)"], labels
        table.move_cursor(row=9)
        await pilot.pause(0.2)
        what = str(app.screen.query_one("#workload-what", Static).render())
        assert "broken.py" in what and "flops" in what
        await pilot.press("enter")  # refused in one line; the picker stays
        await pilot.pause(0.2)
        assert app.current == "picker" and "flops" in str(app.screen.query_one("#picker-error").render())
        table.move_cursor(row=10)
        await pilot.pause(0.1)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.driver is not None and app.driver.ready and not app.driver.busy,
                       "the baseline and generation 1")
        assert app.state.baseline.result.status == "verified"
        await wait_for(pilot, lambda: any("no templates for transpose" in n for n in _notices(app)),
                       "the library's note that it has nothing for this workload", 10)


def _notices(app) -> list[str]:
    return [n.message for n in app.state.notices]


# ---- the README's complete example, as a user runs it ----------------------------------
def test_the_readme_example_runs_as_written(tmp_path):
    """The script under "From Python": a workload declared in __main__, which the GPU worker
    imports again, tuned through its overrides and exported."""
    import os
    import re
    import subprocess
    import sys

    readme = (Path(__file__).parents[1] / "README.md").read_text()
    section = readme[readme.index("## Your own kernels"):]
    script = re.search(r"A complete script.*?```python\n(.*?)```", section, re.S).group(1)
    (tmp_path / "bias_gelu.py").write_text(script)
    proc = subprocess.run([sys.executable, "bias_gelu.py"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": child_pythonpath()})
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert len([ln for ln in lines if " verified " in ln]) == 10, proc.stdout  # baseline + 3x3
    exported = next(ln for ln in lines if ln.startswith("exported:")).split()[1:]
    if exported:  # a configuration beat the baseline beyond noise (it does on lavapipe and GPUs)
        assert exported == ["bias_gelu.wgsl", "bias_gelu.ts", "vajra.lock.json"]
        wgsl = (tmp_path / "out" / "bias_gelu.wgsl").read_text()
        assert re.search(r"override WG: u32 = \d+u;", wgsl) and re.search(r"override PER: u32 = \d+u;", wgsl)


def test_the_new_built_ins_catch_their_classic_mistake(capsys):
    """layernorm: a one-pass variance (E[x²] - E[x]²) loses its digits on rows far from zero."""
    kernels = Path(__file__).parent / "kernels"
    assert main(["bench", "-w", "layernorm", "--size", "ROWS=64,COLS=1024", "-k", str(kernels / "layernorm_row.wgsl"),
                 "-k", str(kernels / "layernorm_one_pass.wgsl"), "--json", "-q", *FAST]) == 0
    status = {r["name"]: (r["status"], r["reason"]) for r in _json(capsys)["results"]}
    assert status["baseline"][0] == status["layernorm_row"][0] == "verified", status
    assert status["layernorm_one_pass"][0] == "rejected" and "out of tolerance" in status["layernorm_one_pass"][1]


def test_two_folder_files_with_one_name_list_one_and_say_why_the_other_does_not(tmp_path, monkeypatch):
    """The name goes to the first file in folder order in the CLI's listing and in the picker's,
    which imports the files side by side: there the later twin loads first (the earlier one
    waits as it imports until the later one has), holds the name, and is given again as the broken row once the
    earlier has loaded. The picker keys rows by path, so the last row given for each stands.
    Before, the picker gave the name to the twin that loaded first, the CLI to the other."""
    folder = tmp_path / "config" / "workloads"
    folder.mkdir(parents=True)
    for stem in ("a_twin", "b_twin", "c_other"):
        name = "other" if stem == "c_other" else "twin"
        text = GOOD.replace('name="transpose"', f'name="{name}"')
        flag = repr(str(folder / "b_twin.loaded"))
        if stem == "a_twin":  # waits (up to 30 s) until b_twin has imported
            text = text.replace("import numpy as np\n", "import numpy as np\nimport os, time\nuntil = time.time() + 30\n"
                                f"while not os.path.exists({flag}) and time.time() < until:\n    time.sleep(0.05)\n", 1)
        if stem == "b_twin":
            text = text.replace("import numpy as np\n", f"import numpy as np\nopen({flag}, 'w').close()\n", 1)
        (folder / f"{stem}.py").write_text(text)
    monkeypatch.setenv("VAJRA_CONFIG_DIR", str(tmp_path / "config"))
    given = list(loader.each_in_folder_as_loaded(loader.folder_paths()))  # first: a waits for b's import
    ordered = loader.in_folder()
    assert [(f.name, bool(f.workload)) for f in ordered] == [("twin", True), ("b_twin", False), ("other", True)]
    assert "'twin' is taken by another workload" in ordered[1].error
    twins = [(Path(f.key).stem, bool(f.workload)) for f in given if f.key.endswith("_twin.py")]
    # b loaded first and held the name; a took it, and b was given again, refused
    assert twins == [("b_twin", True), ("a_twin", True), ("b_twin", False)], twins
    last = {Path(f.key).stem: f for f in given}
    assert {stem: bool(f.workload) for stem, f in last.items()} == {"a_twin": True, "b_twin": False, "c_other": True}
    assert "'twin' is taken by another workload" in last["b_twin"].error


async def test_a_package_that_registers_a_built_ins_name_is_one_broken_row(tmp_path, monkeypatch):
    """Both rows were keyed by the name, and the picker's table took one key once: a package
    registering `softmax` stopped the picker from opening. The second is keyed by its
    module:ATTR (what --workload takes) and says why it cannot run."""
    from textual.widgets import DataTable, Static

    from test_app import fast_settings, wait_for
    from vajra_tui.tui.app import VajraApp

    site = tmp_path / "site"
    (site / "vajra_dupe").mkdir(parents=True)
    (site / "vajra_dupe" / "__init__.py").write_text(GOOD.replace('name="transpose"', 'name="softmax"'))
    info = site / "vajra_dupe-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: vajra-dupe\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[vajra_tui.workloads]\nsoftmax = vajra_dupe:WORKLOAD\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(registry, "_REGISTERED", None)
    monkeypatch.setenv("VAJRA_CONFIG_DIR", str(tmp_path / "config"))
    try:
        app = VajraApp(fast_settings(), source="library")
        async with app.run_test(size=(100, 34)) as pilot:
            await wait_for(pilot, lambda: not app.screen.still_importing, "the package's row", 30)
            table = app.screen.query_one("#workloads", DataTable)
            rows = [(str(table.get_row_at(i)[0]), str(table.get_row_at(i)[1])) for i in range(table.row_count)]
            assert [r[0] for r in rows].count("softmax") == 2 and rows[-1] == ("softmax", "broken"), rows
            table.move_cursor(row=len(rows) - 1)
            await pilot.pause(0.1)
            assert "name already registered" in str(app.screen.query_one("#workload-what", Static).render())
    finally:
        registry._REGISTERED = None
