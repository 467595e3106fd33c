"""Screen 2: the naive baseline walking compile → verify → warm-up → timed dispatches.

Everything after it is a ratio against it, so its numbers and the calibrated
roofline they are judged by are shown in full.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Header, Static

from vajra_tui.tui.state import CandidateView, RunState
from vajra_tui import fmt
from vajra_tui.tui.widgets.banner import Banner
from vajra_tui.tui.widgets.footer import FittingFooter
from vajra_tui.tui.widgets.lanes import lanes_text
from vajra_tui.tui.widgets.sparkline import DispatchSpark
from vajra_tui.tui.widgets.stats import result_table
from vajra_tui.tui.screens import StateScreen

STEPS = [("compiling", "compile"), ("verifying", "verify"), ("warmup", "warm-up"),
         ("timing", "timed dispatches")]


def progress_text(view: CandidateView | None, reps: int) -> Text:
    """Passed steps ✓, the running one ▶, a failed one ✗, pending ones ·."""
    names = [stage for stage, _ in STEPS]
    seen = [names.index(s) for s in (view.stages if view else []) if s in names]
    reached = max(seen, default=-1)
    result = view.result if view is not None else None
    text = Text()
    for number, (stage, label) in enumerate(STEPS):
        if number:
            text.append("  →  ", style="dim")
        if number < reached or (number == reached and result is not None and result.status == "verified"):
            text.append(f"✓ {label}", style="green")
        elif number == reached and result is not None:
            text.append(f"✗ {label}", style="bold red")
        elif number == reached:
            wait = f": killed in {view.countdown} s" if view and view.countdown is not None and \
                stage == "verifying" else ""
            text.append(f"▶ {label}{wait}", style="bold yellow")
        else:
            text.append(f"· {label}", style="dim")
        if stage == "timing" and view is not None and view.dispatch_ms:
            done = len(view.dispatch_ms)
            text.append(f" {done}/{reps}" if done <= reps else f" {done}", style="bold")
    if result is not None:
        ok = result.status == "verified"
        text.append("\nverified ✓" if ok else f"\n{result.status}: {result.reason}",
                    style="bold green" if ok else "bold red")
    return text


class BaselineScreen(StateScreen):
    def compose(self) -> ComposeResult:
        yield Header()
        yield Banner()
        with VerticalScroll(id="baseline-body"):
            yield Static(id="baseline-device")
            yield Static(id="baseline-calibration")
            yield Static(id="baseline-progress", classes="box")
            yield DispatchSpark(id="baseline-spark", classes="box")
            yield Static(id="baseline-stats", classes="box")
            yield Static(id="baseline-notices")
        yield FittingFooter()

    def on_mount(self) -> None:
        self.title, self.sub_title = "Vajra", "baseline"
        self.mounted()

    def selected_view(self) -> CandidateView | None:
        return self.vapp.state.baseline  # the one kernel this screen is about

    def run_over(self) -> str:
        """What ended, when nothing more will arrive: "the run" (a live run whose first step ended
        without a first generation: an error, a cancel) or "the recording" (played to its end)."""
        driver = getattr(self.app, "driver", None)
        if driver is None:
            return ""
        if driver.replay:
            return "the recording" if getattr(driver, "done", False) else ""
        return "the run" if not driver.busy and not getattr(driver, "ready", False) else ""

    def sync(self, state: RunState) -> None:
        session = state.session
        over = self.run_over()  # then nothing is "waiting" or "calibrating" any more
        device = Text(f"{over} ended before the GPU worker reported its device" if over
                      else "waiting for the GPU worker…", style="dim")
        if session is not None:
            style = "bold yellow" if session.device.software else "bold green"
            device = Text.assemble(("Device ", "bold"), (fmt.device_label(session.device), style),
                                   ("\nWorkload ", "bold"), fmt.workload_label(session.workload),
                                   f"  ({fmt.si(session.workload.flops, 'FLOP')}, "
                                   f"{fmt.si(session.workload.min_bytes, 'B')})")
        lanes = lanes_text(state.lanes)  # several adapters: which are in use, which is timing
        if lanes:
            device.append("\n").append_text(lanes)
        self.query_one("#baseline-device", Static).update(device)
        cal = state.calibration
        self.query_one("#baseline-calibration", Static).update(
            Text(f"no roofline: {over} ended before it was calibrated" if over
                 else "calibrating the roofline…", style="dim") if cal is None else Text.assemble(
                ("Roofline ", "bold"), f"copy {fmt.num(cal.copy_gbps)} GB/s · FMA {fmt.num(cal.fma_gflops)} "
                f"GFLOP/s · launch floor {fmt.ms(cal.launch_floor_ms)} · {cal.method} timing",
                (f" ({fmt.calibration_note(cal, state.calibration_cached, recorded=getattr(self.app, 'replay_events', None) is not None)})",
                 "dim")))
        view = state.baseline
        reps = session.reps if session else 0
        self.query_one("#baseline-progress", Static).update(progress_text(view, reps))
        if view is not None:
            done = view.result if view.result is not None and view.result.times_ms else None
            self.query_one(DispatchSpark).sync(
                view.warmup_ms, done.times_ms if done else view.dispatch_ms, view.method,
                warmups_run=_warmups(view, done, session), batch=done.batch if done else None,
                stage="" if done else view.stage)
        stats = self.query_one("#baseline-stats", Static)
        result = view.result if view is not None else None
        if result is not None and result.status == "verified":
            stats.update(result_table(result))
        else:
            stats.update(Text("median, IQR, GFLOP/s, GB/s and roofline % appear once timed", style="dim"))
        notices = Text()
        for notice in state.notices[-4:]:
            style = {"error": "bold red", "warning": "yellow"}.get(notice.level, "dim")
            notices.append(f"{notice.level}: {notice.message}\n", style=style)
        self.query_one("#baseline-notices", Static).update(notices)


def _warmups(view: CandidateView, result, session) -> int | None:
    """Warm-ups that ran before the shown samples (older recordings only have the setting).

    Mid-run, a batched submission runs its warm-ups without timestamps of their own, so no
    warm-up samples arrive: once timed dispatches do, the configured warm-ups have run (it
    read "0 warm-up + 9 timed" while they had).
    """
    if result is None:
        if view.warmup_ms or not (view.dispatch_ms or view.stage == "timing"):
            return len(view.warmup_ms)  # timing (its samples still to come): the warm-ups have run
        return session.warmup if session is not None else None
    if result.warmup is not None:
        return result.warmup
    return session.warmup if session is not None else None
