"""A batch starts at the clock the GPU idled down to: the worker runs the batch's own
kernels untimed until NVML shows the SM clock near its maximum (benchmarks/NOTES.md,
round 13: a conv1d batch on an idle H200 timed 2.5-4x slow). These tests drive the loop
with a scripted clock (what NVML would report as the GPU ramps); the GPU work it runs in
the engine is the batch's own programs (Runtime.spin), exercised on lavapipe by every
timed batch, where NVML reports nothing and the loop runs nothing."""

from __future__ import annotations

from vajra_tui import fmt
from vajra_tui.engine.events import BatchTelemetry, TelemetrySample
from vajra_tui.engine.gpu.telemetry import STEP_S, bring_up


def _at(mhz: float) -> TelemetrySample:
    return TelemetrySample(t=0.0, sm_clock_mhz=mhz, mem_clock_mhz=2619.0, power_w=70.0, temperature_c=40.0)


class _Ramp:
    """An SM clock that rises by ``step`` MHz for every copy of the kernels run, as a GPU's
    governor raises it under load; ``now`` advances ``copy_s`` (1 ms) a copy."""

    def __init__(self, start: float, step: float, top: float, copy_s: float = 1e-3) -> None:
        self.mhz, self.step, self.top, self.now, self.runs = start, step, top, 0.0, []
        self.copy_s = copy_s

    def sample(self) -> TelemetrySample:
        return _at(self.mhz)

    def run(self, copies: int) -> None:
        self.runs.append(copies)
        self.mhz = min(self.top, self.mhz + self.step * copies)
        self.now += self.copy_s * copies

    def clock(self) -> float:
        return self.now


def test_an_idle_clock_is_brought_up_by_doubling_submissions():
    gpu = _Ramp(345.0, 100.0, 1980.0)
    ms, note = bring_up(gpu.sample, 1980.0, gpu.run, clock=gpu.clock)
    assert gpu.mhz >= 0.9 * 1980.0 and note == ""
    assert gpu.runs == [1, 2, 4, 8]  # 15 copies: 345 + 1500 MHz passes 1782 (90% of 1980)
    assert ms == 15.0


def test_a_clock_already_up_runs_nothing():
    gpu = _Ramp(1900.0, 100.0, 1980.0)
    assert bring_up(gpu.sample, 1980.0, gpu.run, clock=gpu.clock) == (0.0, "")
    assert gpu.runs == []


def test_no_telemetry_or_no_maximum_runs_nothing():
    gpu = _Ramp(345.0, 100.0, 1980.0)
    assert bring_up(lambda: None, 1980.0, gpu.run) == (0.0, "")
    assert bring_up(gpu.sample, None, gpu.run) == (0.0, "")
    assert gpu.runs == []


def test_a_clock_held_low_stops_at_the_budget_and_says_so():
    gpu = _Ramp(900.0, 0.0, 900.0)  # power-capped: it never rises
    ms, note = bring_up(gpu.sample, 1980.0, gpu.run, budget_s=0.5, clock=gpu.clock)
    assert 500.0 < ms < 500.0 + 33
    assert max(gpu.runs) == 32  # the first submission past STEP_S (25 ms) is not doubled again
    assert note == "SM clock 900 of 1980 MHz after 0.5 s of untimed warm-up"


def test_the_clock_is_read_at_least_every_step_however_slow_a_copy_is():
    """Whole doubled submissions overshot an H100's ramp (0.40 s for a jump that takes one
    200 ms sample): once a submission takes STEP_S, the copies stop growing."""
    gpu = _Ramp(345.0, 10.0, 1980.0, copy_s=0.012)
    ms, note = bring_up(gpu.sample, 1980.0, gpu.run, budget_s=5.0, clock=gpu.clock)
    assert note == "" and max(gpu.runs) == 4 and gpu.runs[:3] == [1, 2, 4]
    assert max(copies * 12 for copies in gpu.runs) <= 2 * STEP_S * 1e3


def test_the_report_line_says_how_long_the_clock_took():
    t = BatchTelemetry(source="nvml", first=_at(1980.0), last=_at(1965.0), sm_clock_drift=0.0076,
                       warmed_ms=42.4)
    assert fmt.telemetry(t) == "SM 1980→1965 MHz · mem 2619 MHz · 70 W · 40 °C · clock brought up in 42 ms"
    assert "brought up" not in fmt.telemetry(t.model_copy(update={"warmed_ms": 0.0}))


async def test_a_batch_asked_to_bring_the_clock_up_is_timed_and_says_what_it_did(gpu):
    """The setting travels to the worker with the batch; where NVML reports nothing (lavapipe)
    nothing is run first, and the batch says 0 ms."""
    from vajra_tui.engine.session import Session
    from vajra_tui.engine.workloads import get_workload
    from vajra_tui.settings import TimingSettings

    w = get_workload("softmax")
    s = Session(w, w.size("32x256"), gpu, lambda e: None, TimingSettings(warmup=1, reps=3, clock_bring_up=True))
    await s.start(calibrate=False)
    base = await s.run_baseline(time=True)
    assert base.status == "verified", base.reason
    assert base.telemetry is not None
    assert "one dispatch at a time" not in base.telemetry.note  # the batch went as one submission
    if s.device.vendor_id != 0x10DE:
        assert base.telemetry.warmed_ms == 0.0
    else:  # an NVIDIA GPU: the batch starts with the clock up
        assert base.telemetry.first.sm_clock_mhz > 0
