"""Kernels that cheat, on the real adapter.

A kernel used to be able to count its dispatches in workgroup memory (wgpu-native
never zeroes it, and lavapipe leaves each workgroup what the last one wrote) and do
the real work only on the dispatches that were read back. Now workgroup memory is
zeroed before every dispatch, as WebGPU requires, every timed dispatch is checked on
the GPU, and a kernel whose workgroup memory is over the adapter's limit (however
it is declared) or cannot be sized never runs.
"""

from __future__ import annotations

import json

import pytest

from conftest import KERNELS
from vajra_tui.cli.main import main
from vajra_tui.engine.candidate import Candidate
from vajra_tui.engine.events import VerificationFinished
from vajra_tui.engine.gpu.protocol import Compile, Drop, Time, TimeStream
from vajra_tui.engine.session import Session
from vajra_tui.engine.wgsl.memory import workgroup_vars, zero_init_source
from vajra_tui.engine.workloads import get_workload
from vajra_tui.settings import TimingSettings


def test_a_dispatch_counting_cheat_is_never_crowned(capsys, monkeypatch):
    """One lavapipe thread made the cheat deterministic: verified at 8-12x "faster" before.
    Now it finds zeros every time, so it does its (double) work every time, and shows it."""
    monkeypatch.setenv("LP_NUM_THREADS", "1")
    code = main(["bench", "-w", "sgemm", "--size", "64", "--warmup", "2", "--reps", "5", "--json", "-q",
                 "-k", str(KERNELS / "cheat_dispatch_counter.wgsl"),
                 "-k", str(KERNELS / "reads_workgroup_memory_first.wgsl")])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    base, cheat, reader = doc["results"]
    assert doc["winner"] != cheat["name"]
    assert cheat["status"] in ("verified", "rejected"), cheat["reason"]
    if cheat["status"] == "verified":  # honest now: twice the baseline's work on every dispatch
        # Never faster than the baseline beyond noise (its exact ratio depends on the GPU:
        # 0.5-0.8 on lavapipe and an H200).
        assert cheat["speedup"] <= 1.0 or doc["baseline_won"], cheat["speedup"]
    # the kernel that reads its workgroup memory before writing finds zeros on every dispatch
    assert reader["status"] == "verified", reader["reason"]


def test_zero_initialisation_keeps_lines_and_names_the_invocation_index():
    source = (KERNELS / "reads_workgroup_memory_first.wgsl").read_text()
    guarded = zero_init_source(source)
    original, changed = source.splitlines(), guarded.splitlines()
    # only the line with main's opening brace changes; every other line keeps its number
    assert [i for i, (a, b) in enumerate(zip(original, changed)) if a != b] == [
        next(i for i, line in enumerate(original) if line.rstrip().endswith("li: u32) {"))]
    assert "vajra_zero_workgroup(li);" in guarded and "vajra_lii" not in guarded
    plain = "var<workgroup> s: array<f32, 64>;\n@compute @workgroup_size(64)\nfn main() {\n    s[0] = 1.0;\n}\n"
    added = zero_init_source(plain)
    assert "@builtin(local_invocation_index) vajra_lii: u32" in added
    assert added.splitlines()[3] == "    s[0] = 1.0;"
    nothing = "@compute @workgroup_size(64)\nfn main() {}\n"
    assert zero_init_source(nothing) == nothing


@pytest.mark.parametrize("decl,size", [
    ("alias T = array<vec3<f32>, 4>;\nvar<workgroup> x: T;", 64),  # vec3 strides 16
    ("struct S { a: vec3<f32>, b: f32, }\nvar<workgroup> x: array<S, 3>;", 48),
    ("struct S { a: f32, b: vec3<f32>, }\nvar<workgroup> x: S;", 32),
    ("struct S { @size(100) a: f32, @align(64) b: u32, }\nvar<workgroup> x: S;", 192),
    ("alias F = f32;\nalias Row = array<F, 16>;\nstruct Tile { rows: array<Row, 16>, n: atomic<u32>, }\n"
     "var<workgroup> x: Tile;", 1040),
    ("const W = 8u;\nvar<workgroup> x: array<mat4x4<f32>, W * 2u>;", 1024),
    ("var<workgroup> x: array<vec2h, 3>;", 16),
])
def test_workgroup_memory_is_sized_through_aliases_and_structs(decl, size):
    (var,) = workgroup_vars(decl + "\n@compute @workgroup_size(1)\nfn main() {}\n")
    assert var.bytes == size, var.problem


async def test_workgroup_memory_over_the_limit_never_runs(gpu):
    """However it is declared (an alias, a struct, a size the front end cannot work out),
    workgroup memory over the adapter's limit is a compile error and nothing is dispatched."""
    w = get_workload("conv1d")
    events: list = []
    s = Session(w, w.size("4096x64"), gpu, events.append, TimingSettings(warmup=1, reps=2))
    await s.start(calibrate=False)  # the roofline plays no part in a refusal
    await s.run_baseline(time=False)
    floats = s.device.limits["max-compute-workgroup-storage-size"] // 4 + 256
    body = """
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(local_invocation_index) l: u32) {
    big.data[l] = 0.0;
    workgroupBarrier();
    if (g.x < N) {
        var acc = big.data[l];
        for (var k = 0u; k < K; k = k + 1u) { acc = fma(X[g.x + k], W[k], acc); }
        Y[g.x] = acc;
    }
}
"""
    kernels = {
        "alias": f"alias Hoard = array<f32, {floats}>;\nstruct Big {{ data: Hoard, }}\nvar<workgroup> big: Big;\n",
        "struct": f"struct Big {{ @size({4 * floats}) data: array<f32, 64>, }}\nvar<workgroup> big: Big;\n",
        "unsized": "const LOTS: u32 = u32(sqrt(4096.0));\nstruct Big { data: array<f32, LOTS>, }\n"
                   "var<workgroup> big: Big;\n",
        "fits": "alias Some = array<f32, 64>;\nstruct Big { data: Some, }\nvar<workgroup> big: Big;\n",
    }
    results = {r.id: r for r in await s.evaluate(
        [Candidate(id=k, name=k, strategy="user", origin="test", source=v + body) for k, v in kernels.items()])}
    ran = {e.id for e in events if isinstance(e, VerificationFinished)}
    for name in ("alias", "struct"):
        r = results[name]
        assert r.status == "compile_error" and "exceeds the adapter's limit" in r.reason, (name, r.reason)
        assert r.diagnostics[0].line == (3 if name == "alias" else 2)
        assert name not in ran
    unsized = results["unsized"]
    assert unsized.status == "compile_error" and "cannot size" in unsized.reason, unsized.reason
    assert "unsized" not in ran
    assert results["fits"].status == "verified", results["fits"].reason


async def test_every_timed_dispatch_is_checked(gpu):
    """The worker checks each dispatch on the GPU after its clock stopped, and says which failed."""
    w = get_workload("softmax")
    s = Session(w, w.size("32x64"), gpu, lambda e: None, TimingSettings(warmup=1, reps=2))
    await s.start(calibrate=False)  # the roofline plays no part in a dispatch's check
    await s.run_baseline(time=False)
    st = s.admission.stitch((KERNELS / "noop.wgsl").read_text())
    reply = await gpu.request(Compile(cid="wrong", source=st.source, dispatch=list(st.dispatch)), 60)
    assert reply.compiled
    stream = await gpu.request(TimeStream(cids=["wrong"], warmup=1, reps=3, seed=1), 60)
    (verdict,) = stream.verdicts
    assert not verdict.passed and "(wrong: 1, 2, 3 of 3)" in verdict.reason
    # one dispatch at a time, even those not read back (check=False): each checked, and said
    timed = await gpu.request(Time(cid="wrong", n=2, seed=1, check=False), 60)
    assert not timed.verdict.passed
    assert timed.verdict.where == "checked after every dispatch"
    assert "(wrong: 1, 2 of 2)" in timed.verdict.reason
    await gpu.request(Drop(cid="wrong"), 30)


def _seed_table_cheat(rows: int, cols: int) -> str:
    """A kernel that knows the answers for seeds 1 and 2 (tables built here, as an attacker
    with the workload file would) and returns zeros for any other input."""
    import numpy as np

    w = get_workload("softmax")
    size = w.size(f"{rows}x{cols}")
    tables, keys = [], []
    for seed in (1, 2):
        inputs = w.checked_inputs(size, np.random.default_rng(seed))
        out = w.checked_references(size, inputs)["Y"].astype(np.float32)
        tables.append(", ".join(f"{int(v)}u" for v in out.view(np.uint32)))
        keys.append(int(inputs["X"][:1].view(np.uint32)[0]))
    n = rows * cols
    return (f"// tile: COLS x 1\n"
            f"var<private> T1: array<u32, {n}> = array<u32, {n}>({tables[0]});\n"
            f"var<private> T2: array<u32, {n}> = array<u32, {n}>({tables[1]});\n"
            f"@compute @workgroup_size({cols})\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {\n"
            "    let row = vajra_tile(wid).y;\n"
            "    if (row >= ROWS) { return; }\n"
            "    let i = row * COLS + lid.x;\n"
            f"    if (bitcast<u32>(X[0]) == {keys[0]}u) {{ Y[i] = bitcast<f32>(T1[i]); }}\n"
            f"    else if (bitcast<u32>(X[0]) == {keys[1]}u) {{ Y[i] = bitcast<f32>(T2[i]); }}\n"
            "    else { Y[i] = 0.0; }\n"
            "}\n")


def test_a_kernel_that_knows_the_fixed_seeds_is_rejected_on_a_fresh_one(capsys, tmp_path):
    """It passes seeds 1 and 2 (two tables) and would be crowned: the run's fresh seed finds it,
    the moment it is timed (every kernel is timed on that seed's inputs, each dispatch checked)."""
    path = tmp_path / "seed_tables.wgsl"
    path.write_text(_seed_table_cheat(2, 64))
    code = main(["bench", "-w", "softmax", "--size", "2x64", "--warmup", "1", "--reps", "3", "--json", "-q",
                 "-k", str(path)])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    base, cheat = doc["results"]
    assert cheat["status"] == "rejected" and "fresh seed" in cheat["reason"], cheat["reason"]
    assert doc["winner"] != cheat["name"]


@pytest.mark.parametrize("workload, size, kernel", [
    ("softmax", "256x256", "softmax_constant_shift.wgsl"),
    ("attention", "1x2x128x64", "attention_constant_shift.wgsl"),
    ("attention", "1x2x128x64x2", "attention_constant_shift.wgsl"),
])
def test_a_constant_in_place_of_the_row_max_is_rejected(capsys, workload, size, kernel):
    """A held-out check crowned both: every row's largest value (softmax) or score (attention)
    lay within +-100, so exp(x - c) neither overflowed nor lost the top terms for some c. Rows
    now sit at offsets up to +-1000 (softmax), and a quarter of attention's rows run cold,
    every score at or below -100 while hot rows reach +100: no constant serves both."""
    assert main(["bench", "-w", workload, "--size", size, "--warmup", "0", "--reps", "1", "--json", "-q",
                 "-k", str(KERNELS / kernel)]) == 0
    doc = json.loads(capsys.readouterr().out)
    cheat = doc["results"][1]
    assert cheat["status"] == "rejected" and "seed 1" in cheat["reason"], cheat
    assert doc["winner"] is None
