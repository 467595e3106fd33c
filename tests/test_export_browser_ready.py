"""Exports a browser can take as they are (#24): the ``.wgsl`` carries its ``enable``
directives, the TS module pops its error scope on every path, names a missing buffer,
states its type dependency and is clean under ``tsc --strict --noUncheckedIndexedAccess``;
``tune --export-baseline`` exports the baseline when nothing beat it.

The TypeScript checks run under Node + Dawn (the npm ``webgpu`` package) and the sidecar's
``typescript``; each skips, with one reason, where those are absent."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from vajra_tui.engine.admission.contract import stitch
from vajra_tui.engine.events import CandidateResult, DeviceInfo
from vajra_tui.engine.export.winner import LOCK_NAME, export_winner
from vajra_tui.engine.workloads import WORKLOADS

pytestmark = pytest.mark.browser_judge  # the judge runs here: these tests assert its verdict (conftest.py)

ROOT = Path(__file__).resolve().parents[1]
ROW_NORMALIZE = ROOT / "examples" / "workloads" / "row_normalize.py"

SUBGROUP_BODY = """
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let base = wid.y * COLS;
    Y[base + lid.x] = subgroupMax(X[base + lid.x]);
}
"""


def _export(tmp_path: Path, name: str, spec: str, body: str | None = None) -> Path:
    """A stitched kernel of built-in ``name`` (its baseline unless ``body``), exported unmeasured."""
    w = WORKLOADS[name]
    size = w.size(spec)
    st = stitch(w, size, body if body is not None else w.baseline)
    result = CandidateResult(id="k", name="k", status="verified", stitched_source=st.source,
                             source_sha256=st.sha256, grid=list(st.dispatch), median_ms=1.0,
                             timing="timestamp", workgroup_size=list(st.workgroup_size))
    out = tmp_path / name
    export_winner(result, DeviceInfo(name="gpu"), w.info(size), out)
    return out


def _tsx() -> Path:
    from vajra_tui.engine.browser import sidecar, tint

    tsx = sidecar.node_dir() / "node_modules" / ".bin" / "tsx"
    if not tint.node_available() or not tsx.exists():
        pytest.skip("node or the sidecar's tsx is missing (vajra-tui setup-node): TypeScript not run")
    return tsx


def _node(script: str, *args: str, cwd: Path) -> dict:
    """Run a TypeScript ``script`` under tsx; its last JSON line."""
    (cwd / "runner.mts").write_text(script)
    proc = subprocess.run([str(_tsx()), str(cwd / "runner.mts"), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "EGL_PLATFORM": "surfaceless"})
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    assert proc.returncode == 0 and lines, (proc.stdout[-2000:], proc.stderr[-3000:])
    return json.loads(lines[-1])


# ---- the .wgsl carries its enables ---------------------------------------------
def test_a_subgroup_kernel_wgsl_starts_with_its_enable_and_browser_wgsl_is_the_file(tmp_path):
    out = _export(tmp_path, "softmax", "4x64", SUBGROUP_BODY)
    wgsl = (out / "softmax.wgsl").read_text()
    assert wgsl.startswith("enable subgroups;")
    source = stitch(WORKLOADS["softmax"], WORKLOADS["softmax"].size("4x64"), SUBGROUP_BODY).source
    assert wgsl.count("\n") == source.count("\n")  # on line 1: every line keeps its number
    ts = (out / "softmax.ts").read_text()
    assert 'export const ENABLES: readonly string[] = ["subgroups"];' in ts
    lock = json.loads((out / LOCK_NAME).read_text())
    assert lock["entries"][0]["kernel"]["enables"] == ["subgroups"]
    got = _node("""\
import { pathToFileURL } from 'node:url';
const mod = await import(pathToFileURL(process.argv[2]!).href);
console.log(JSON.stringify({ browser: mod.BROWSER_WGSL, first: mod.BROWSER_MODULES[0] }));
""", str(out / "softmax.ts"), cwd=tmp_path)
    assert got["browser"] == wgsl and got["first"] == wgsl


def test_a_kernel_without_subgroups_is_exported_byte_for_byte(tmp_path):
    out = _export(tmp_path, "sgemm", "M=32,N=16,K=8")
    w = WORKLOADS["sgemm"]
    assert (out / "sgemm.wgsl").read_text() == stitch(w, w.size("M=32,N=16,K=8"), w.baseline).source
    assert "export const BROWSER_WGSL: string = WGSL;" in (out / "sgemm.ts").read_text()
    assert json.loads((out / LOCK_NAME).read_text())["entries"][0]["kernel"]["enables"] == []


def test_the_module_states_its_type_dependency(tmp_path):
    ts = (_export(tmp_path, "sgemm", "M=32,N=16,K=8") / "sgemm.ts").read_text()
    head = ts.split("/* eslint-disable */", 1)[0]
    assert "@webgpu/types" in head and "TypeScript 5" in head and "TypeScript 7" in head
    assert not any(ln.startswith("/// <reference") for ln in ts.splitlines())  # breaks TS 7


# ---- error scopes and buffers, under Dawn ---------------------------------------
DAWN_CHECKS = """\
import { pathToFileURL } from 'node:url';
const [modulePath, webgpuPath] = process.argv.slice(2) as [string, string];
const mod = await import(pathToFileURL(modulePath).href);
const { create, globals } = await import(pathToFileURL(webgpuPath).href);
Object.assign(globalThis, globals);
const gpu = create([`backend=${process.env.VAJRA_DAWN_BACKEND || 'opengles'}`]);
const adapter = (await gpu.requestAdapter({ featureLevel: 'compatibility' })) ?? (await gpu.requestAdapter());
if (!adapter) { console.log(JSON.stringify({ unavailable: true })); process.exit(0); }
const device: GPUDevice = await mod.requestKernelDevice(adapter);
const message = async (f: () => unknown): Promise<string> => {
  try { await f(); return 'no error'; } catch (e) { return String((e as Error).message ?? e); }
};
const bad = await message(() => mod.run(device, { A: new Float32Array(3), B: new Float32Array(3) }));
const wrongKind = await message(() => mod.run(device, { A: new Float64Array(256), B: new Float64Array(256) }));
// Balanced: the stack is empty again, so popping rejects, and a later error is reported.
const pop = await message(() => device.popErrorScope());
device.pushErrorScope('validation');
device.createBuffer({ size: 4, usage: 0x0001 | 0x0080 });  // MAP_READ | STORAGE: invalid
const later = await device.popErrorScope();
const kernel = await mod.kernelFor(device);
const buffer = (b: { bytes: number }) => device.createBuffer({ size: b.bytes, usage: 0x0080 | 0x0008 });
const partial: Record<string, GPUBuffer> = {};
for (const b of mod.BUFFERS.slice(0, -1)) partial[b.name] = buffer(b);
const missing = mod.BUFFERS[mod.BUFFERS.length - 1].name;
const bind = await message(() => kernel.bind(partial));
const dispatchOnce = await message(() => kernel.dispatch(partial));
const dispatchFn = await message(() => mod.dispatch(device, partial));
const again = await message(() => device.popErrorScope());
device.destroy();
console.log(JSON.stringify({ bad, wrongKind, pop, later: later?.message ?? null, missing, bind, dispatchOnce, dispatchFn, again }));
"""


def test_a_failed_run_leaves_no_error_scope_and_a_missing_buffer_is_named(tmp_path):
    from vajra_tui.engine.browser import sidecar, tint

    _tsx()
    if shutil.which("npm") is None or tint.ensure_node_modules() is None:
        pytest.skip("the npm 'webgpu' package (Dawn) is missing: exported TypeScript not run")
    out = _export(tmp_path, "sgemm", "M=32,N=16,K=8")
    webgpu = sidecar.node_dir() / "node_modules" / "webgpu" / "index.js"
    got = _node(DAWN_CHECKS, str(out / "sgemm.ts"), str(webgpu), cwd=tmp_path)
    if got.get("unavailable"):
        pytest.skip("Dawn has no adapter here")
    assert got["bad"].startswith("vajra sgemm: input A needs 256 f32 (a Float32Array), got a Float32Array of 3"), got
    # a Float64Array of the right length was uploaded byte for byte (a raw RangeError, or wrong numbers)
    assert got["wrongKind"].startswith("vajra sgemm: input A needs 256 f32 (a Float32Array), got a Float64Array"), got
    assert got["pop"] != "no error", got  # nothing was left pushed by the failed run()
    assert got["later"], got  # a validation error after it is still reported
    expected = f"vajra sgemm: missing buffer {got['missing']}"
    assert got["bind"] == got["dispatchOnce"] == got["dispatchFn"] == expected, got
    assert got["again"] != "no error", got


# ---- tsc --strict --noUncheckedIndexedAccess ------------------------------------
def _tsc() -> tuple[Path, Path]:
    """tsc and the @webgpu/types folder: $VAJRA_TSC_DIR, else the sidecar's node_modules."""
    from vajra_tui.engine.browser import sidecar

    for folder in (os.environ.get("VAJRA_TSC_DIR"), str(sidecar.node_dir())):
        if not folder:
            continue
        tsc = Path(folder) / "node_modules" / ".bin" / "tsc"
        types = Path(folder) / "node_modules" / "@webgpu" / "types"
        if tsc.exists() and types.is_dir() and shutil.which("node"):
            return tsc, types.parent
    pytest.skip("typescript and @webgpu/types are not installed (npm i typescript@5 @webgpu/types "
                "in the sidecar folder, or set VAJRA_TSC_DIR): tsc not run")


def _strict_errors(module: Path) -> str:
    tsc, type_roots = _tsc()
    proc = subprocess.run([str(tsc), "--strict", "--noUncheckedIndexedAccess", "--noEmit", "--target", "es2022",
                           "--module", "esnext", "--lib", "es2022,dom", "--typeRoots", str(type_roots),
                           "--types", "types", str(module)], capture_output=True, text=True, timeout=180,
                          cwd=module.parent)
    return "" if proc.returncode == 0 else (proc.stdout + proc.stderr)[-4000:]


def test_exports_are_clean_under_tsc_strict(tmp_path, monkeypatch):
    _tsc()
    import vajra_tui

    monkeypatch.setenv("VAJRA_CACHE_DIR", str(tmp_path / "cache"))
    sgemm = _export(tmp_path, "sgemm", "M=32,N=16,K=8") / "sgemm.ts"
    subgroups = _export(tmp_path, "softmax", "4x64", SUBGROUP_BODY) / "softmax.ts"
    report = vajra_tui.bench(ROW_NORMALIZE, [], size="seed", warmup=1, reps=2)
    assert report.baseline.status == "verified" and len(report.baseline.passes) == 2
    assert report.baseline.uniforms  # the multi-pass + uniform case
    export_winner(report.baseline, report.device, report.workload, tmp_path / "rn")
    for module in (sgemm, subgroups, tmp_path / "rn" / "row_normalize.ts"):
        assert _strict_errors(module) == "", module.name


# ---- tune --export-baseline -------------------------------------------------------
TUNE = ["tune", "-w", str(ROW_NORMALIZE), "--source", "library", "--generations", "0", "--budget", "2",
        "--reps", "2", "--warmup", "1", "-q"]


def test_export_baseline_writes_the_baseline_when_nothing_beat_it(tmp_path, capsys, monkeypatch):
    from vajra_tui.cli.main import main

    monkeypatch.setenv("VAJRA_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "out"
    assert main([*TUNE, "--export", str(out), "--export-baseline"]) == 0
    err = capsys.readouterr().err
    if "no candidate beat the baseline" not in err and (out / LOCK_NAME).exists() \
            and json.loads((out / LOCK_NAME).read_text())["entries"][0]["kernel"]["name"] != "baseline":
        pytest.skip("a candidate beat the baseline here")
    assert {p.name for p in out.iterdir()} >= {"row_normalize.wgsl", "row_normalize.ts", LOCK_NAME}
    assert json.loads((out / LOCK_NAME).read_text())["entries"][0]["kernel"]["name"] == "baseline"
    assert f"wrote {out / 'row_normalize.ts'}" in err and "nothing exported" not in err


def test_without_the_flag_nothing_is_written_and_the_line_names_it(tmp_path, capsys, monkeypatch):
    from vajra_tui.cli.main import main

    monkeypatch.setenv("VAJRA_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "out"
    assert main([*TUNE, "--export", str(out)]) == 0
    err = capsys.readouterr().err
    if "nothing exported" not in err:
        pytest.skip("a candidate beat the baseline here")
    [line] = [ln for ln in err.splitlines() if "nothing exported" in ln]
    assert "--export-baseline" in line and not out.exists()
    assert main(["tune", "-w", "sgemm", "--export-baseline"]) == 2
    assert "--export-baseline needs --export DIR" in capsys.readouterr().err
