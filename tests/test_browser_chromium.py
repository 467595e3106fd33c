"""Headless Chromium judges exports (#24): each built-in at a small size, an example workload,
a folded grid and an f16 workload are exported as the user gets them, loaded in one browser,
run through the module's own API and verified against the float64 reference."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest

from vajra_tui.engine.browser.chromium import BrowserUnavailable, shared_judge
from vajra_tui.engine.browser.find import find_browser
from vajra_tui.engine.browser.judge import annotate_lock, apply, file_errors, judge_folder, lock_block
from vajra_tui.engine.browser.transpile import find_transpiler
from vajra_tui.engine.export.winner import LOCK_NAME, export_winner
from vajra_tui.engine.workloads import WORKLOADS

pytestmark = pytest.mark.browser_judge  # the judge runs here: these tests assert its verdict (conftest.py)

ROOT = Path(__file__).resolve().parents[1]
SIZES = {"sgemm": "M=64,N=48,K=40", "softmax": "ROWS=32,COLS=100", "conv1d": "N=1000,K=64",
         "sobel": "H=37,W=53", "layernorm": "ROWS=16,COLS=96", "gemv": "M=64,K=80",
         "attention": "B=1,H=2,S=37,D=64,MASK=2", "fft": "BATCH=2,N=256", "fft2": "H=16,W=32"}

FOLDED = '''
import numpy as np
from vajra_tui import Binding, Workload

def make_inputs(size, rng):
    return {"x": rng.standard_normal(size["N"]).astype(np.float32)}

WORKLOAD = Workload(
    name="folded_add", summary="y = x + 1 over a folded grid", dims=("N",), presets={"seed": {"N": 5000}},
    bindings=(Binding(0, "x", "read"), Binding(1, "y", "read_write")),
    buffer_len=lambda s: {"x": s["N"], "y": s["N"]},
    make_inputs=make_inputs,
    reference=lambda s, i: i["x"].astype(np.float64) + 1.0,
    flops=lambda s: float(s["N"]),
    output_grid=lambda s: (s["N"], 1),
    grid=lambda s, p: (8, (s["N"] + 8 * 64 - 1) // (8 * 64), 1),
    atol=1e-6,
    baseline="""
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let i = (wg.y * nwg.x + wg.x) * 64u + li;
    if (i < N) { y[i] = x[i] + 1.0; }
}
""",
)
'''

HALF = FOLDED.replace('"folded_add"', '"half_double"').replace(
    'Binding(0, "x", "read"), Binding(1, "y", "read_write")',
    'Binding(0, "x", "read", dtype="f16"), Binding(1, "y", "read_write", dtype="f16")').replace(
    ".astype(np.float32)", ".astype(np.float16)").replace("atol=1e-6", "atol=1e-2").replace(
    "y[i] = x[i] + 1.0;", "y[i] = x[i] + 1.0h;").replace('"""\n@compute', '"""\nenable f16;\n@compute')


def _no_browser_reason() -> str:
    found = find_browser()
    if not found.ok:
        return found.reason
    if not find_transpiler()[0]:
        return "no TypeScript transpiler (esbuild from vajra-tui setup-node): exports not run in Chromium"
    return ""


@pytest.fixture(scope="session")
def chromium():
    """One headless Chromium for the whole file (skipped, with its one reason, where none is)."""
    reason = _no_browser_reason()
    if reason:
        pytest.skip(reason)
    try:
        return shared_judge()  # the one a session's check_browser uses too (closed at exit)
    except BrowserUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def measured(tmp_path_factory, gpu):
    """Each workload's baseline, verified and timed by the real engine on the local adapter
    (conftest's worker, which the fft2 test below uses too). No calibration: the roofline is
    not what a browser judges, and its copy check cost each of these twelve sessions more than
    its baseline did."""
    from vajra_tui.engine.session import Session
    from vajra_tui.engine.workloads.loader import load_file as load_workload
    from vajra_tui.settings import TimingSettings

    folder = tmp_path_factory.mktemp("workloads")
    (folder / "folded.py").write_text(FOLDED)
    (folder / "half.py").write_text(HALF)
    cases = {name: (WORKLOADS[name], spec) for name, spec in SIZES.items()}
    cases["transpose"] = (load_workload(str(ROOT / "examples/workloads/transpose.py")), "seed")
    cases["folded_add"] = (load_workload(str(folder / "folded.py")), "seed")
    half = load_workload(str(folder / "half.py"))

    async def run() -> dict:
        out = {}
        for name, (workload, spec) in cases.items():
            size = workload.size(spec)
            session = Session(workload, size, gpu, lambda e: None, TimingSettings(warmup=1, reps=3))
            await session.start(calibrate=False)
            out[name] = (await session.run_baseline(time=True), session, workload, size)
        session = Session(half, half.size("seed"), gpu, lambda e: None, TimingSettings(warmup=1, reps=3))
        await session.start(calibrate=False)
        out["half_double"] = (await session.run_baseline(time=False), session, half, half.size("seed"))
        return out

    return asyncio.run(run())


# fft and fft2 among them: their twiddles use no WGSL sin/cos, which the spec promises only to
# 2^-11 and SwiftShader delivers about that coarse (820 of 1024 elements out at fft2 16x32 before).
CASES = list(SIZES) + ["transpose", "folded_add"]


@pytest.mark.parametrize("name", CASES)
def test_export_runs_and_matches_in_chromium(name, measured, chromium, tmp_path):
    result, session, workload, size = measured[name]
    assert result.status == "verified", result.reason
    export_winner(result, session.device, session.info, tmp_path)
    run, status, reason = judge_folder(chromium, tmp_path, workload, dict(size), session.info, session.seeds[0])
    assert status == "browser-valid", reason
    assert run.adapter and run.limits["maxComputeInvocationsPerWorkgroup"] >= 256
    assert not [m for m in run.messages if m["type"] == "error"]
    assert not file_errors(run)  # the .wgsl compiles on its own in the browser
    if "timestamp-query" in run.features:
        assert run.median_ms is not None and run.median_ms > 0
    if name == "folded_add":
        assert result.grid[0] == 8 and result.grid[1] > 1  # the grid really is folded


def _f16_result(measured):
    """The f16 workload's result: as verified where the local adapter has shader-f16, else its
    baseline stitched and exported as the same result would be (the export is what is judged)."""
    import hashlib

    from vajra_tui.engine.admission.contract import stitch

    result, session, workload, size = measured["half_double"]
    if result.status == "verified":
        return result, session.device, session.info, workload, size
    base, other, _, _ = measured["folded_add"]
    st = stitch(workload, size, workload.baseline)
    made = base.model_copy(deep=True, update={
        "stitched_source": st.source, "source_sha256": hashlib.sha256(st.source.encode()).hexdigest(),
        "workgroup_size": list(st.workgroup_size), "grid": list(st.dispatch), "enables": list(st.enables)})
    return made, other.device, workload.info(size), workload, size


def test_f16_workload_is_refused_in_one_line_without_shader_f16(measured, chromium, tmp_path):
    result, device, info, workload, size = _f16_result(measured)
    export_winner(result, device, info, tmp_path)
    run, status, reason = judge_folder(chromium, tmp_path, workload, dict(size), info, 1)
    if "shader-f16" in run.features:
        assert status == "browser-valid", reason
        return
    assert status == "browser-refused" and "shader-f16" in reason and "\n" not in reason, reason
    assert "shader-f16" not in run.used_features


def test_the_verdict_reaches_the_result_and_the_lockfile(measured, chromium, tmp_path):
    result, session, workload, size = measured["softmax"]
    mine = result.model_copy(deep=True)
    paths = export_winner(mine, session.device, session.info, tmp_path)
    run, status, reason = judge_folder(chromium, tmp_path, workload, dict(size), session.info, session.seeds[0])
    apply(mine, run, status, reason)
    assert mine.browser == "browser-valid" and mine.browser_judge.startswith("Chromium ")
    assert mine.browser_limits["maxComputeWorkgroupSizeX"] > 0 and mine.browser_features
    doc = json.loads(mine.model_dump_json())
    assert doc["browser_adapter"] == run.adapter and "browser_messages" in doc
    assert annotate_lock(paths[2], mine)
    entry = json.loads((tmp_path / LOCK_NAME).read_text())["entries"][0]
    assert entry["browser"] == json.loads(json.dumps(lock_block(mine)))
    assert entry["browser"]["status"] == "browser-valid"


def test_a_wrong_export_is_rejected(measured, chromium, tmp_path):
    """A module whose kernel computes the wrong thing runs in the browser and fails compare."""
    result, session, workload, size = measured["folded_add"]
    export_winner(result, session.device, session.info, tmp_path)
    ts = tmp_path / "folded_add.ts"
    ts.write_text(ts.read_text().replace("x[i] + 1.0", "x[i] + 2.0"))
    _, status, reason = judge_folder(chromium, tmp_path, workload, dict(size), session.info, session.seeds[0])
    assert status == "browser-rejected" and "differs from the reference" in reason


def test_a_session_judges_its_winner_in_the_browser(chromium, tmp_path):
    """bench: the user's fastest kernel is judged by Chromium first, Node/Dawn only without one."""
    import vajra_tui

    kernel = (ROOT / "examples/workloads/transpose_tiled.wgsl").read_text()
    report = vajra_tui.bench(str(ROOT / "examples/workloads/transpose.py"), [kernel], reps=3, warmup=1)
    mine = [r for r in report.results if r.id != "baseline"][0]
    assert mine.status == "verified", mine.reason
    assert mine.browser == "browser-valid", mine.browser
    assert mine.browser_judge.startswith("Chromium") and mine.browser_adapter


def test_folded_fft2_kernels_run_in_chromium(chromium, gpu, tmp_path):
    """fft2's folded register kernels (fold=2 and the radix-4 fold, blocked scratch) combine rows
    by subgroup shuffles: exported, each is browser-valid where Chromium has subgroups, and
    refused in one line naming them where it has not. Measured on the module's worker, with no
    calibration (what is judged is the export, not its roofline)."""
    from vajra_tui.engine.session import Session
    from vajra_tui.engine.sources.library import LibrarySource
    from vajra_tui.settings import TimingSettings

    workload = WORKLOADS["fft2"]
    size = workload.size("H=16,W=32")

    async def run() -> tuple[Session, list]:
        s = Session(workload, size, gpu, lambda e: None, TimingSettings(warmup=1, reps=3))
        await s.start(calibrate=False)
        lib, out = LibrarySource(s.device), []
        for i, p in enumerate(({"regs": 16, "cols": 4, "ex": 1, "fold": 2},
                               {"regs": 32, "cols": 4, "ex": 1, "blk": 1, "fold": 4})):
            cand = lib.instantiate({**p, "template": "fft2/regs"}, s.size, cid=f"fold{i}")
            assert cand is not None and await s.admit(cand), s.results[f"fold{i}"].reason
            await s.time_batch([cand.id])
            out.append(s.results[cand.id])
        return s, out

    session, results = asyncio.run(run())
    for i, result in enumerate(results):
        folder = tmp_path / str(i)
        export_winner(result, session.device, session.info, folder)
        run_, status, reason = judge_folder(chromium, folder, workload, dict(size), session.info, session.seeds[0])
        if "subgroups" in run_.features:
            assert status == "browser-valid", reason
        else:
            assert status == "browser-refused" and "subgroups" in reason and "\n" not in reason, reason
