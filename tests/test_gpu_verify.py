"""The GPU judge against the CPU judge, on hidden kernels, through the engine's Session.

The worker runs with VAJRA_VERIFY=check: every verification (both seeds, the
over-dispatch probe, the snapshot of every timed batch) is judged on the GPU
(gpu/gpu_verify.py) *and* read back and judged in float64 on the CPU, and any
difference in the verdict (pass/fail, counts of wrong, never-written and non-finite
elements, worst or first index, the values in the reason) crashes the candidate
with both verdicts named. Kernels here write part of the output, NaN built from
bits, Inf from an overflow, the right values one index off, values just out of
tolerance, or the right values; for f32 (inexact and exact workloads), f16, i32
and u32 outputs.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vajra_tui.engine.candidate import Candidate
from vajra_tui.engine.events import VerificationFinished
from vajra_tui.engine.gpu.gpu_verify import disagreement, judge_path
from vajra_tui.engine.session import Session
from vajra_tui.engine.workloads import get_workload
from vajra_tui.settings import TimingSettings

ROOT = Path(__file__).parent.parent
ROWHIST_PY = str(ROOT / "examples" / "workloads" / "rowhist.py")
TRANSPOSE_PY = str(ROOT / "examples" / "workloads" / "transpose.py")
MIXED_PY = str(Path(__file__).parent / "data" / "mixed_outputs.py")
TINY_PY = str(Path(__file__).parent / "data" / "f16_tiny.py")


@pytest.fixture(scope="module")
def checked():
    """A worker whose every verdict is the GPU's, checked against the CPU's."""
    from vajra_tui.engine.gpu.client import GPUClient

    before = os.environ.get("VAJRA_VERIFY")
    os.environ["VAJRA_VERIFY"] = "check"  # a restarted worker inherits it too
    client = GPUClient()
    client.start()
    yield client
    client.close()
    if before is None:
        os.environ.pop("VAJRA_VERIFY", None)
    else:
        os.environ["VAJRA_VERIFY"] = before


SGEMM_HEAD = """
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = vajra_tile(wid);
    let col = t.x * 16u + lid.x;
    let row = t.y * 16u + lid.y;
    if (row >= M || col >= N) { return; }
    var acc = 0.0;
    for (var k = START; k < K; k = k + 1u) { acc = acc + A[row * K + k] * B[k * N + col]; }
    let i = row * N + col;
"""


def sgemm(store: str, start: str = "0u") -> str:
    return SGEMM_HEAD.replace("START", start) + f"    {store}\n}}\n"


NAN = "bitcast<f32>(0x7fc00000u | (bitcast<u32>(A[row * K]) & 1u))"
SGEMM = {
    "right": (sgemm("C[i] = acc;"), "verified", ""),
    "half_written": (sgemm("if (row < M / 2u) { C[i] = acc; }"), "rejected", "never written, first at element 8192"),
    "nan_column": (sgemm(f"C[i] = select(acc, {NAN}, col == 5u);"), "rejected", "got NaN"),
    "overflow_row": (sgemm("C[i] = select(acc, exp(abs(A[row * K]) * 100.0 + 200.0), row == 7u);"),
                     "rejected", "got inf"),
    "one_index_off": (sgemm("if (i + 1u < M * N) { C[i + 1u] = acc; }"), "rejected", "never written, first at element 0"),
    "skips_first_term": (sgemm("C[i] = acc;", "1u"), "rejected", "elements out of tolerance; worst at"),
    "just_out": (sgemm("C[i] = acc + 2e-6 * f32(K) * 1.01;"), "rejected", "elements out of tolerance; worst at"),
    "just_in": (sgemm("C[i] = acc + 2e-6 * f32(K) * 0.9;"), "verified", ""),
}

ROWHIST_HEAD = """
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = vajra_tile(wid);
    let bin = t.x * 64u + lid.x;
    if (t.y >= TILES_Y || bin >= BINS) { return; }
    var n = 0u;
    for (var c = 0u; c < COLS; c = c + 1u) { n = n + select(0u, 1u, X[t.y * COLS + c] == bin); }
    let i = t.y * BINS + bin;
"""
ROWHIST = {
    "right": (ROWHIST_HEAD + "    H[i] = n;\n}\n", "verified", ""),
    "half_the_bins": (ROWHIST_HEAD + "    if (bin < BINS / 2u) { H[i] = n; }\n}\n", "rejected", "never written, first at element 32"),
    "bin0_plus_one": (ROWHIST_HEAD + "    H[i] = n + select(0u, 1u, bin == 0u);\n}\n", "rejected", "worst at 0 "),
    "one_index_off": (ROWHIST_HEAD + "    if (i + 1u < TILES_Y * BINS) { H[i + 1u] = n; }\n}\n", "rejected", "first at element 0"),
}

TRANSPOSE_HEAD = """
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = vajra_tile(wid);
    let x = t.x * 16u + lid.x;
    let y = t.y * 16u + lid.y;
    if (x >= ROWS || y >= COLS) { return; }
"""
TRANSPOSE_CASES = {
    "right": (TRANSPOSE_HEAD + "    B[y * ROWS + x] = A[x * COLS + y];\n}\n", "verified", ""),
    "one_ulp_off": (TRANSPOSE_HEAD + "    B[y * ROWS + x] = bitcast<f32>(bitcast<u32>(A[x * COLS + y]) + select(0u, 1u, x == 3u && y == 9u));\n}\n",
                    "rejected", "1 of 65536 elements out of tolerance; worst at 2307 "),
    "reads_one_off": (TRANSPOSE_HEAD + "    B[y * ROWS + x] = A[min(x * COLS + y + 1u, ROWS * COLS - 1u)];\n}\n",
                      "rejected", "out of tolerance; worst at"),
}

MIXED_HEAD = """
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x >= N) { return; }
    let h = f16(X[g.x] * 0.5);
    let q = i32(round(X[g.x] * 1000.0));
"""
MIXED_CASES = {
    "right": (MIXED_HEAD + "    H[g.x] = h;\n    Q[g.x] = q;\n}\n", "verified", ""),
    "half_scaled": (MIXED_HEAD + "    H[g.x] = h * 1.004h;\n    Q[g.x] = q;\n}\n", "rejected", "output H: "),
    "half_nan": (MIXED_HEAD + "    let nan = f16(unpack2x16float(0x7e01u | (bitcast<u32>(X[g.x]) & 1u)).x);\n"
                 "    H[g.x] = select(h, nan, g.x == 17u);\n    Q[g.x] = q;\n}\n",
                 "rejected", "output H: non-finite output: 1 elements computed as NaN or Inf, first at element 17 (got NaN"),
    "ints_half_written": (MIXED_HEAD + "    H[g.x] = h;\n    if (g.x < N / 2u) { Q[g.x] = q; }\n}\n",
                          "rejected", "output Q: 2049 of 4099 elements never written, first at element 2049"),
    "ints_off_by_one": (MIXED_HEAD + "    H[g.x] = h;\n    Q[g.x] = q + select(0, 1, g.x % 7u == 0u);\n}\n",
                        "rejected", "output Q: "),
}

TINY_HEAD = """
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x >= N) { return; }
    let h = f16(X[g.x] * 0.00000762939453125);
"""
# every H is subnormal: the nearest half passes, four steps (2^-22) off does not
TINY_CASES = {
    "right": (TINY_HEAD + "    H[g.x] = h;\n}\n", "verified", ""),
    "four_steps_off": (TINY_HEAD + "    H[g.x] = h + select(0.0h, 0.0000002384185791015625h, g.x == 11u);\n}\n",
                      "rejected", "1 of 4099 elements out of tolerance; worst at 11 "),
}

CASES = ([("sgemm", "128", k, *v) for k, v in SGEMM.items()]
         + [(ROWHIST_PY, "ROWS=48,COLS=256,BINS=64", k, *v) for k, v in ROWHIST.items()]
         + [(TRANSPOSE_PY, "256", k, *v) for k, v in TRANSPOSE_CASES.items()]
         + [(MIXED_PY, "4099", k, *v) for k, v in MIXED_CASES.items()]
         + [(TINY_PY, "4099", k, *v) for k, v in TINY_CASES.items()])


async def _run(client, spec: str, size: str, body: str):
    events: list = []
    w = get_workload(spec)
    s = Session(w, w.size(size), client, events.append, TimingSettings(warmup=1, reps=2))
    await s.start(calibrate=False)
    await s.run_baseline(time=False)
    (result,) = await s.evaluate([Candidate(id="k", name="k", strategy="user", origin="test", source=body)])
    return result, [e for e in events if isinstance(e, VerificationFinished)]


@pytest.mark.parametrize("spec,size,case,body,status,why", CASES,
                         ids=[f"{Path(c[0]).stem}-{c[2]}" for c in CASES])
async def test_the_gpu_and_cpu_judges_agree_on_hidden_kernels(checked, spec, size, case, body, status, why):
    result, verdicts = await _run(checked, spec, size, body)
    assert result.status == status, result.reason  # "crashed" names both verdicts when they differ
    assert why in result.reason
    mine = [v for v in verdicts if v.id == "k"]
    assert mine, "no verification of the kernel"
    # every verdict was the GPU's, and the CPU's agreed (else the worker would have raised)
    assert {v.judged_by for v in verdicts} == {"gpu=cpu"}, {v.judged_by for v in verdicts}
    if status == "verified":
        assert {v.phase for v in mine} == {"pre", "timed"}


def test_who_judges_by_default_and_when_told():
    assert judge_path(software=True, setting="auto") == "cpu"
    assert judge_path(software=False, setting="auto") == "gpu"
    assert judge_path(software=True, setting="gpu") == "gpu"
    assert judge_path(software=False, setting="CPU") == "cpu"
    assert judge_path(software=True, setting="check") == "check"


def test_a_disagreement_names_the_field():
    base = {"passed": False, "max_rel_error": 1.0, "worst_index": 3, "reason": "x", "unwritten": 0,
            "nonfinite": 0, "judged_by": "gpu"}
    assert disagreement(base, {**base, "judged_by": "cpu"}) == ""
    assert disagreement(base, {**base, "max_rel_error": 1.0 + 1e-9}) == ""
    assert disagreement(base, {**base, "worst_index": 4}) == "worst_index: GPU 3, CPU 4"


def _head(**words):
    import numpy as np

    from vajra_tui.engine.gpu import judge_wgsl as K

    head = np.zeros(K.WORDS, np.uint32)
    head[[K.FIRST_UNWRITTEN, K.FIRST_NONFINITE, K.R_FIRST]] = 0xFFFFFFFF
    for name, value in words.items():
        head[getattr(K, name.upper())] = value
    return head


def test_what_the_host_cannot_decide_exactly_goes_to_the_cpu():
    """Past CAP borderline elements, or near-ties for the worst one, the GPU's lists cannot be
    exact: resolve() says so (None) and the worker reads that output back instead."""
    import numpy as np

    from vajra_tui.engine.gpu import judge_wgsl as K
    from vajra_tui.engine.gpu.gpu_verify import resolve

    ref = np.arange(100, dtype=np.float64)
    got = lambda i: np.float32(ref[i])  # noqa: E731
    assert resolve(_head(border_n=K.CAP + 1), ref, "f32", 1e-3, 1e-4, got) is None
    assert resolve(_head(max_r=0x3F000000, r_n=K.CAP + 1), ref, "f32", 1e-3, 1e-4, got) is None
    # integers with rtol = 0: the key is the error itself, so the lowest index at the top is exact
    exact = resolve(_head(sure_bad=40, max_r=1, r_n=40, r_first=7, max_m=0x3F000000, m_n=40),
                    ref, "u32", 0.0, 0.0, lambda i: np.uint32(ref[i] + 1))
    assert exact is not None and exact.worst_index == 7 and not exact.passed
    assert "40 of 100 elements out of tolerance; worst at 7 (got 8, want 7)" in exact.reason
    # nothing differs from the reference: every error is 0 and numpy's argmax says element 0
    same = resolve(_head(), ref, "f32", 1e-3, 1e-4, got)
    assert same is not None and same.passed and same.worst_index == 0 and same.max_rel_error == 0.0
