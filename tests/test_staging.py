"""Staging a generation on other cores gives what staging it here gives.

The staging processes exist only for speed (issue #14: 24 unrolled kernels took 4.5 s
of the event loop's thread on an H200 host), so every outcome a model's reply can
lead to must come back identical: a repair, a refusal, a flagged user kernel, a broken
contract, a tile warning, a clean kernel. A staging process that dies costs nothing,
and a script that drives Vajra from Python is never run a second time by them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import kernel
from test_admission import NON_UNIFORM_BARRIER, REWRITTEN_THEN_BROKEN, _cand, _session
from vajra_tui.engine.admission import staging
from vajra_tui.engine.admission.staging import Limits, stage_all
from vajra_tui.engine.workloads import get_workload

ROOT = Path(__file__).resolve().parent.parent


def _jobs() -> list[tuple[str, bool, bool, dict]]:
    """(source, written by a model?, sanitize?, constants): what a mixed generation holds."""
    # no @compute function at all (one compute entry of another name is taken as the kernel's entry)
    no_entry = kernel("softmax_row.wgsl").replace("@compute", "", 1).replace("fn main(", "fn helper(", 1)
    return [
        (NON_UNIFORM_BARRIER, True, True, {}),       # refused: a model's unrepairable barrier
        (NON_UNIFORM_BARRIER, False, True, {}),      # flagged only: the user's own kernel
        (REWRITTEN_THEN_BROKEN, True, True, {}),     # repaired, then the compiler's to judge
        (no_entry, True, True, {}),                  # the contract: no entry point
        (kernel("conv1d_vec4.wgsl"), True, True, {}),
        ("// tile: 64\n@compute @workgroup_size(WG)\nfn main() {}\n", True, True, {}),  # unknown size
    ]


def _comparable(staged) -> list:
    return [(s.source, [d.model_dump() for d in s.findings], s.diff, s.repaired, s.refused,
             s.stitched, s.contract.model_dump() if s.contract else None,
             [d.model_dump() for d in s.tile_warnings], s.probe) for s in staged]


async def _staged_here_then_pooled(monkeypatch) -> tuple:
    """(workload, size, limits, the jobs staged in this process); the pool is forced on after."""
    w = get_workload("conv1d")
    size, limits = w.size("1000x16"), Limits(65535, 16384)
    monkeypatch.setenv("VAJRA_STAGING_PROCESSES", "0")
    here = await stage_all(w, "conv1d", size, _jobs(), limits)
    monkeypatch.setenv("VAJRA_STAGING_PROCESSES", "2")
    return w, size, limits, here


async def test_staging_processes_give_what_staging_here_gives(monkeypatch):
    w, size, limits, here = await _staged_here_then_pooled(monkeypatch)
    try:
        there = await stage_all(w, "conv1d", size, _jobs(), limits)
        pids = [s.proc.pid for s in staging._STAGERS]
    finally:
        staging.shutdown()
    assert len(pids) == 2, "the forced pool was not used"
    assert _comparable(there) == _comparable(here)
    refused, flagged, repaired, broken, clean, unknown = here
    assert refused.refused and not flagged.refused and flagged.findings and repaired.repaired
    assert broken.contract is not None and "main" in broken.contract.message
    assert clean.stitched is not None and clean.contract is None
    assert unknown.contract is not None


async def test_two_lanes_staging_at_once_share_the_processes(monkeypatch):
    """Each lane of a `--gpus` run stages its own batch; both use the same few processes."""
    import asyncio

    w, size, limits, here = await _staged_here_then_pooled(monkeypatch)
    jobs = _jobs()
    try:
        lane0, lane1 = await asyncio.gather(stage_all(w, "conv1d", size, jobs, limits),
                                            stage_all(w, "conv1d", size, jobs[::-1], limits))
        assert all(s.alive() for s in staging._STAGERS), "a shared process was closed as broken"
    finally:
        staging.shutdown()
    assert _comparable(lane0) == _comparable(here) and _comparable(lane1) == _comparable(here[::-1])


async def test_a_staging_process_that_dies_costs_nothing(monkeypatch):
    w, size, limits, here = await _staged_here_then_pooled(monkeypatch)
    try:
        for stager in staging._pool():
            stager.proc.kill()
            stager.proc.wait()
        again = await stage_all(w, "conv1d", size, _jobs(), limits)
        broken = staging._STAGERS[0]
        broken.conn.close()  # a pipe that fails mid-batch: that job is staged here
        after = await stage_all(w, "conv1d", size, _jobs(), limits)
    finally:
        staging.shutdown()
    assert _comparable(again) == _comparable(here) == _comparable(after)


async def test_a_generation_staged_on_processes_is_admitted_as_before(gpu, monkeypatch):
    monkeypatch.setenv("VAJRA_STAGING_PROCESSES", "2")
    try:
        s, _ = await _session(gpu, "conv1d", "1000x16")
        results = await s.evaluate([_cand("A", NON_UNIFORM_BARRIER, "A"), _cand("mine", NON_UNIFORM_BARRIER + "\n"),
                                    _cand("B", REWRITTEN_THEN_BROKEN, "B"), _cand("empty", "  \n", "C")])
    finally:
        staging.shutdown()
    model, mine, rewritten, empty = results
    assert model.status == "compile_error" and "non-uniform" in model.reason
    assert mine.status == "verified" and mine.browser_invalid.startswith("7:")
    assert rewritten.rewrites and rewritten.status == "compile_error" and rewritten.diagnostics[0].line == 11
    assert empty.status == "no_kernel"


@pytest.mark.timeout(300)
def test_a_script_without_a_main_guard_runs_once(tmp_path):
    """multiprocessing's spawn would import the caller's ``__main__`` in every child."""
    marker = tmp_path / "runs.txt"
    script = tmp_path / "tune_it.py"
    script.write_text(textwrap.dedent(f"""
        import vajra_tui
        with open({str(marker)!r}, "a") as f:
            f.write("ran\\n")
        report = vajra_tui.tune("softmax", size="8x64", generations=0, warmup=1, reps=2)
        print(report.winner.name if report.winner else "none")
        from vajra_tui.engine.admission import staging
        print(f"staging processes: {{len(staging._STAGERS)}}")
    """))
    # one staging process is enough to import __main__ a second time; a second one only cost its start
    env = {**os.environ, "VAJRA_STAGING_PROCESSES": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                          timeout=280, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "staging processes: 1" in proc.stdout, proc.stdout  # the generation was staged there
    assert marker.read_text() == "ran\n"


async def test_a_workload_only_this_process_can_import_is_staged_here(monkeypatch, tmp_path):
    """A module that exists in this process alone (made at run time, with no file on any
    path): the staging processes cannot import it, say so, and its batches are staged here
    from then on (not respawned)."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("only_here_hist", ROOT / "examples" / "workloads" / "rowhist.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "only_here_hist", module)
    spec.loader.exec_module(module)
    w = get_workload("only_here_hist:WORKLOAD")
    size = w.size("seed")
    source = (ROOT / "examples" / "workloads" / "rowhist_shared.wgsl").read_text()
    jobs = [(source + f"\n// {i}\n", False, True, {}) for i in range(3)]
    monkeypatch.setenv("VAJRA_STAGING_PROCESSES", "0")
    here = await stage_all(w, "only_here_hist:WORKLOAD", size, jobs, Limits())
    monkeypatch.setenv("VAJRA_STAGING_PROCESSES", "2")
    try:
        first = await stage_all(w, "only_here_hist:WORKLOAD", size, jobs, Limits())
        assert "only_here_hist:WORKLOAD" in staging._HERE_ONLY
        pids = [s.proc.pid for s in staging._STAGERS]
        assert len(pids) == 2 and all(s.alive() for s in staging._STAGERS), "a refusal is no crash"
        again = await stage_all(w, "only_here_hist:WORKLOAD", size, jobs, Limits())
        assert [s.proc.pid for s in staging._STAGERS] == pids
    finally:
        staging.shutdown()
        staging._HERE_ONLY.discard("only_here_hist:WORKLOAD")
        sys.modules.pop("only_here_hist", None)
    assert _comparable(first) == _comparable(here) == _comparable(again)
    assert all(s.stitched is not None for s in here)


async def test_a_smaller_pool_asked_for_closes_the_extra_processes(monkeypatch):
    """On a 16-core host the default pool (8) was kept when a test then forced 2."""
    w, size, limits, _ = await _staged_here_then_pooled(monkeypatch)
    try:
        monkeypatch.setenv("VAJRA_STAGING_PROCESSES", "3")
        await stage_all(w, "conv1d", size, _jobs(), limits)
        assert len(staging._STAGERS) == 3
        monkeypatch.setenv("VAJRA_STAGING_PROCESSES", "2")
        await stage_all(w, "conv1d", size, _jobs(), limits)
        assert len(staging._STAGERS) == 2
    finally:
        staging.shutdown()


async def test_a_middling_generation_starts_the_processes_for_the_next(monkeypatch):
    """Generations of 64k-200k characters (six fft kernels: 121k) were staged here, one after
    another, while the worker waited: the first such batch now starts the processes, and the
    batches after it go to them. A small one stays here, and starts nothing."""
    w = get_workload("conv1d")
    size, limits = w.size("1000x16"), Limits(65535, 16384)
    monkeypatch.delenv("VAJRA_STAGING_PROCESSES", raising=False)
    monkeypatch.setattr(staging, "_cores", lambda: 4)  # a GPU host's cores (pool_size: 3)
    here: list[str] = []
    real = staging.stage_text
    monkeypatch.setattr(staging, "stage_text", lambda wl, sz, src, *a: here.append(src) or real(wl, sz, src, *a))
    clean = kernel("conv1d_vec4.wgsl")
    small = [(clean, True, True, {})] * 2
    middling = [(clean + "\n// " + "x" * 12000 + "\n", True, True, {})] * 6
    assert staging.POOL_WARM_MIN_CHARS <= sum(len(s) for s, *_ in middling) < staging.POOL_MIN_CHARS
    assert sum(len(s) for s, *_ in small) < staging.POOL_WARM_MIN_CHARS
    staging.shutdown()
    try:
        await stage_all(w, "conv1d", size, small, limits)
        assert not staging._STAGERS and len(here) == 2
        first = await stage_all(w, "conv1d", size, middling, limits)
        assert len(staging._STAGERS) == 3 and len(here) == 8, "the first middling batch is staged here"
        second = await stage_all(w, "conv1d", size, middling, limits)
        assert len(here) == 8, "the next went to the processes"
    finally:
        staging.shutdown()
    assert _comparable(first) == _comparable(second)
