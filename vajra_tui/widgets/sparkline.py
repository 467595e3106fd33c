"""Dispatch times as a sparkline, with the count and the last value."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Sparkline, Static

from . import fmt


class DispatchSpark(Vertical):
    """Warm-up and timed dispatch times of one kernel (ms), newest on the right."""

    def compose(self) -> ComposeResult:
        yield Static("no dispatches yet", classes="spark-label")
        yield Sparkline([], summary_function=max, classes="spark")

    def sync(self, warmup: list[float], timed: list[float], method: str) -> None:
        values = list(warmup) + list(timed)
        self.query_one(Sparkline).data = values or [0.0]
        if not values:
            return
        label = (f"{len(warmup)} warm-up + {len(timed)} timed dispatches · last {fmt.ms(values[-1])} ms"
                 f" · min {fmt.ms(min(values))} · max {fmt.ms(max(values))} ({method or 'wall'})")
        self.query_one(".spark-label", Static).update(label)
