"""One honest report: one baseline sample per speedup, no slower crown, a calibration that holds."""

from __future__ import annotations

from conftest import kernel
from vajra_tui.engine import calibration_cache
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
    cached = s.calibration.model_copy(update={"copy_gbps": s.calibration.copy_gbps * 10})
    calibration_cache.store(s.device, cached)
    events: list = []
    again = Session(s.workload, s.size, gpu, events.append, FAST.model_copy())
    await again.start()
    [ready] = [e for e in events if isinstance(e, CalibrationReady)]
    assert not ready.cached and ready.calibration.measured_at and ready.calibration.driver
    assert any(isinstance(e, Notice) and "calibrating again" in e.message for e in events)
    assert calibration_cache.load(s.device).copy_gbps == ready.calibration.copy_gbps
