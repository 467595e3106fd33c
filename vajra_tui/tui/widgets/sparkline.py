"""Dispatch times as a sparkline, with the count and the last value."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Sparkline, Static

from vajra_tui import fmt


class DispatchSpark(Vertical):
    """Warm-up and timed dispatch times of one kernel (ms), newest on the right."""

    def compose(self) -> ComposeResult:
        yield Static("no dispatches yet", classes="spark-label")
        yield Sparkline([], summary_function=max, classes="spark")

    def sync(self, warmup: list[float], timed: list[float], method: str,
             warmups_run: int | None = None, batch: int | None = None, stage: str = "") -> None:
        """Show the timed samples of one batch: the very samples its stats summarise.

        In a batched submission the warm-ups run on the GPU without timestamps of their
        own, so their count comes from the result (``warmups_run``), not from the samples.
        """
        # no samples draw as a flat line: Textual draws a one-value series as a full block,
        # and the old [0.0] stand-in filled the box under "no dispatches yet"
        self.query_one(Sparkline).data = list(timed)
        self.query_one(".spark-label", Static).update(spark_label(warmup, timed, method, warmups_run, batch, stage))


def spark_label(warmup: list[float], timed: list[float], method: str,
                warmups_run: int | None = None, batch: int | None = None, stage: str = "") -> str:
    """The line above the sparkline; always redrawn, so a new batch never keeps the last one's.

    ``stage``: where the kernel is now. Timed samples arrive only when their batch ends, so
    a kernel already timing has none yet; the label said "no dispatches yet" under a progress
    line reading "✓ warm-up → ▶ timed dispatches".
    """
    warm = warmups_run if warmups_run is not None else len(warmup)
    if not timed and stage == "timing":
        return (f"{warm} warm-up dispatches run; " if warm else "") + "timed dispatches running…"
    if not timed and stage == "warmup":
        return "warm-up dispatches running…"
    if not timed:
        return f"{warm} warm-up dispatches run; timing next" if warm else "no dispatches yet"
    which = f"batch {batch}: " if batch is not None else ""
    return (f"{which}{warm} warm-up + {len(timed)} timed dispatches · last {fmt.ms(timed[-1])}"
            f" · min {fmt.ms(min(timed))} · max {fmt.ms(max(timed))} ({method or 'wall'})")
