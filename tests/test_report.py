"""One honest report: one baseline sample per speedup, no slower crown, a calibration that holds."""

from __future__ import annotations

import time

import pytest

from conftest import cache_with_this_runs_calibration, kernel
from vajra_tui.engine.store import calibration_cache
from vajra_tui.engine.candidate import Candidate
from vajra_tui.engine.events import CalibrationReady, Notice, RankingReady
from vajra_tui.engine.session import Session
from vajra_tui.engine.workloads import get_workload
from vajra_tui.settings import TimingSettings

FAST = TimingSettings(warmup=1, reps=5)


async def _session(gpu, name: str, size: str, calibrate: bool = False):
    events: list = []
    w = get_workload(name)
    s = Session(w, w.size(size), gpu, events.append, FAST.model_copy())
    await s.start(calibrate=calibrate)
    await s.run_baseline(time=True)
    return s, events


def _user(cid: str, source: str, generation: int = 1) -> Candidate:
    return Candidate(id=cid, name=cid, strategy="user", origin="test", source=source,
                     generation=generation)


# The baseline's own arithmetic, done four times over: verified, and slower than it.
def _slower(baseline: str) -> str:
    return baseline.replace(
        "C[row * N + col] = acc;",
        "var again = 0.0;\n    for (var r = 0u; r < 3u; r = r + 1u) {\n"
        "        for (var k = 0u; k < K; k = k + 1u) { again = fma(A[row * K + k], B[k * N + col], again); }\n"
        "    }\n    C[row * N + col] = acc + again * 1e-30;")


async def test_a_kernel_slower_than_the_baseline_is_not_crowned(gpu):
    s, events = await _session(gpu, "sgemm", "96x80x64")
    slow_source = _slower(s.workload.baseline)
    assert slow_source != s.workload.baseline
    [slow] = await s.evaluate([_user("slow", slow_source)])
    assert slow.status == "verified", slow.reason
    assert slow.speedup is not None and slow.speedup < 1.0
    ranking = s.standings(1)
    assert ranking.winner is None and ranking.baseline_won
    assert s.rank(1) == []
    [last] = [e for e in events if isinstance(e, RankingReady)][-1:]
    assert last.winner_id is None and last.headline == "no candidate beat the baseline"


async def test_the_shootout_times_every_finalist_beside_one_baseline_sample(gpu):
    s, events = await _session(gpu, "softmax", "64x256")
    await s.evaluate([_user("row", kernel("softmax_row.wgsl"))], generation=1)
    second = kernel("softmax_row.wgsl").replace("// tile: COLS x 1", "// tile: COLS x 1\n// again")
    await s.evaluate([_user("again", second, 2)], generation=2)
    assert s.results["row"].batch != s.results["again"].batch
    ranking = await s.shootout(2)
    base = s.results["baseline"]
    finalists = [r for r in ranking.ranked if r.id != "baseline"]
    assert {r.id for r in finalists} == {"row", "again"}
    for r in finalists:
        assert r.batch == base.batch, "a finalist kept the numbers of another batch"
        assert r.speedup == base.median_ms / r.median_ms
        assert r.history and r.history[-1]["batch"] < base.batch  # the earlier numbers stay
    final = [e for e in events if isinstance(e, RankingReady) and e.final][-1]
    assert final.batch == base.batch and final.headline


async def test_a_cached_calibration_that_no_longer_holds_is_redone(gpu):
    s, _ = await _session(gpu, "conv1d", "1000x16", calibrate=True)
    # checked an hour ago: a software adapter's check is skipped only within minutes of the last
    cached = s.calibration.model_copy(update={"copy_gbps": s.calibration.copy_gbps * 10,
                                              "checked_at": time.time() - 3600})
    calibration_cache.store(s.device, cached)
    events: list = []
    again = Session(s.workload, s.size, gpu, events.append, FAST.model_copy())
    await again.start()
    [ready] = [e for e in events if isinstance(e, CalibrationReady)]
    assert not ready.cached and ready.calibration.measured_at and ready.calibration.driver
    assert any(isinstance(e, Notice) and "calibrating again" in e.message for e in events)
    assert calibration_cache.load(s.device).copy_gbps == ready.calibration.copy_gbps


async def test_a_software_roofline_checked_minutes_ago_is_not_checked_again(gpu):
    """Its quick copy is CPU work of its own there; a run minutes after the last check trusts
    the roofline as it is (ten times off, it would otherwise be measured again)."""
    s, _ = await _session(gpu, "conv1d", "1000x16", calibrate=True)
    if not s.device.software:
        pytest.skip("a GPU's roofline is checked at every run")
    off = s.calibration.model_copy(update={"copy_gbps": s.calibration.copy_gbps * 10, "checked_at": time.time() - 5})
    calibration_cache.store(s.device, off)
    events: list = []
    await Session(s.workload, s.size, gpu, events.append, FAST.model_copy()).start()
    [ready] = [e for e in events if isinstance(e, CalibrationReady)]
    assert ready.cached and ready.calibration.copy_gbps == off.copy_gbps
    assert calibration_cache.load(s.device).checked_at == off.checked_at  # no check, so no new stamp


def test_only_a_software_adapters_recent_check_stands_in_for_a_new_one():
    from vajra_tui.engine.events import Calibration

    cal = Calibration(copy_gbps=1.0, fma_gflops=1.0, launch_floor_ms=0.1, checked_at=1000.0)
    fresh = calibration_cache.SOFTWARE_CHECK_FRESH_S
    assert not calibration_cache.needs_check(cal, software=True, now=1000.0 + fresh - 1)
    assert calibration_cache.needs_check(cal, software=True, now=1000.0 + fresh + 1)
    assert calibration_cache.needs_check(cal, software=True, now=900.0)  # a clock set back
    assert calibration_cache.needs_check(cal, software=False, now=1000.0)  # a GPU: every run
    assert calibration_cache.needs_check(cal.model_copy(update={"checked_at": None}), software=True, now=1000.0)


def test_the_results_cache_never_crosses_devices(tmp_path):
    from vajra_tui.engine.events import CandidateResult, DeviceInfo
    from vajra_tui.engine.store.result_cache import ResultCache

    h200 = DeviceInfo(name="NVIDIA H200", vendor_id=0x10DE, device_id=0x2335, backend="Vulkan",
                      driver="580.95")
    result = CandidateResult(id="A", name="A", status="verified", median_ms=1.0)
    ResultCache(tmp_path, h200).put("k", result)
    assert ResultCache(tmp_path, h200).get("k").median_ms == 1.0
    for changed in ({"driver": "575.1"}, {"device_id": 0x2330}, {"backend": "OpenGL"},
                    {"name": "NVIDIA H100"}):
        assert ResultCache(tmp_path, h200.model_copy(update=changed)).get("k") is None, changed
    # A file whose header names another schema or device is never read, even at the same path.
    cache = ResultCache(tmp_path, h200)
    lines = cache.path.read_text().splitlines()
    cache.path.write_text(lines[0].replace('"schema_version": ', '"schema_version": 9') + "\n"
                          + "\n".join(lines[1:]) + "\n")
    assert ResultCache(tmp_path, h200).get("k") is None


def test_resume_after_a_killed_tune_measures_nothing_that_finished(tmp_path):
    import json
    import os
    import signal
    import subprocess
    import sys
    import time

    cache = cache_with_this_runs_calibration(tmp_path / "cache")
    env = {**os.environ, "VAJRA_CACHE_DIR": str(cache), "PYTHONUNBUFFERED": "1"}
    base = [sys.executable, "-m", "vajra_tui", "tune", "-w", "conv1d", "--size", "3000x16",
            "--source", "library", "--budget", "2", "--reps", "2", "--warmup", "0"]
    proc = subprocess.Popen([*base, "--generations", "6"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    seen: list[str] = []
    deadline = time.monotonic() + 120
    try:  # kill -9 as soon as generation 2 has started: generation 1 is finished and on disk
        for line in proc.stderr:
            seen.append(line)
            if "-- generation 2" in line or time.monotonic() > deadline:
                break
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert any("-- generation 2" in line for line in seen), "".join(seen[-20:])
    files = list((tmp_path / "cache" / "results").glob("*.jsonl"))
    assert len(files) == 1
    kept = {json.loads(line)["result"]["name"] for line in files[0].read_text().splitlines()[1:]}
    assert {"A", "B", "C"} <= kept

    rec = tmp_path / "resumed.jsonl"
    done = subprocess.run([*base, "--generations", "0", "--resume", "--json", "-q", "--record", str(rec)],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    doc = json.loads(done.stdout)
    from vajra_tui.engine.events import CompileFinished, VerificationFinished
    from vajra_tui.engine.store.record import read_recording

    _, events = read_recording(rec)
    names = {e.id: e.name for e in events if hasattr(e, "name") and hasattr(e, "strategy")}
    remeasured = {names.get(e.id, e.id) for e in events
                  if isinstance(e, (CompileFinished, VerificationFinished)) and e.id != "baseline"
                  and getattr(e, "phase", "pre") == "pre"}
    assert not (remeasured & kept), remeasured
    by_name = {r["name"]: r for r in doc["results"]}
    assert all(by_name[n]["batch"] is not None for n in kept & set(by_name)
               if by_name[n]["status"] == "verified"), "finalists are re-timed in the shoot-out"


async def test_cold_caches_are_flushed_and_recorded_and_telemetry_says_what_it_has(gpu):
    from vajra_tui.engine.gpu.flush import l2_bytes

    s, _ = await _session(gpu, "softmax", "32x256")
    assert s.results["baseline"].cache_state == "warm"
    s.timing.cache = "cold"
    [r] = await s.evaluate([_user("row", kernel("softmax_row.wgsl"))])
    assert r.status == "verified", r.reason
    assert r.cache_state == "cold" and s.results["baseline"].cache_state == "cold"
    assert r.telemetry is not None
    if s.device.vendor_id != 0x10DE:  # lavapipe and other vendors: no NVML, and it says so
        assert r.telemetry.source == "none" and "no telemetry" in r.telemetry.note
        assert r.telemetry.first is None
    else:
        assert r.telemetry.source == "nvml" and r.telemetry.first.sm_clock_mhz > 0
    assert l2_bytes(s.device) > 0


def test_one_name_per_kernel_across_json_lockfile_and_recording(tmp_path, capsys):
    import json

    from vajra_tui.cli.main import main
    from vajra_tui.engine.events import CandidateQueued, RankingReady
    from vajra_tui.engine.store.record import read_recording

    rec, out = tmp_path / "run.jsonl", tmp_path / "export"
    code = main(["tune", "-w", "conv1d", "--size", "20000x32", "--source", "library",
                 "--generations", "1", "--budget", "2", "--reps", "5", "--warmup", "1",
                 "--json", "-q", "--record", str(rec), "--export", str(out)])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    names = {r["name"] for r in doc["results"]}
    assert set(doc["ranking"]) <= names
    _, events = read_recording(rec)
    queued = {e.id: e.name for e in events if isinstance(e, CandidateQueued)}
    final = [e for e in events if isinstance(e, RankingReady) and e.final][-1]
    if doc["winner"] is None:
        assert final.winner_id is None and doc["baseline_won"] and not out.exists()
        return
    assert queued[final.winner_id] == doc["winner"] == doc["ranking"][0]
    lock = json.loads((out / "vajra.lock.json").read_text())
    [entry] = lock["entries"]
    assert entry["kernel"]["name"] == doc["winner"]
    winner = next(r for r in doc["results"] if r["name"] == doc["winner"])
    base = next(r for r in doc["results"] if r["name"] == "baseline")
    # The exported numbers are the shoot-out's, divided by that batch's baseline sample.
    assert entry["timing"]["batch"] == winner["batch"] == base["batch"] == doc["final_batch"]
    assert entry["throughput"]["speedup_vs_baseline"] == winner["speedup"]
    assert abs(winner["speedup"] - base["median_ms"] / winner["median_ms"]) < 1e-9
