"""Throughput per kernel as a plotext bar chart; the baseline bar is grey and labelled.

The unit is GFLOP/s, or GB/s for a workload of no arithmetic (a copy, a transpose): its
GFLOP/s are 0 for every kernel, and a chart of them was empty.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual_plotext import PlotextPlot


@dataclass(frozen=True)
class Bar:
    label: str
    value: float  # in the chart's unit
    baseline: bool = False
    winner: bool = False


class ThroughputChart(PlotextPlot):
    """Horizontal bars so long kernel names stay readable at 80 columns."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._bars: tuple[Bar, ...] = ()
        self.unit = "GFLOP/s"

    def on_mount(self) -> None:
        super().on_mount()
        self._draw()

    samples = ""  # which samples the bars cover, e.g. " · shoot-out batch 7"

    def sync(self, bars: list[Bar], samples: str = "", unit: str = "GFLOP/s") -> None:
        if tuple(bars) == self._bars and samples == self.samples and unit == self.unit:
            return
        self._bars, self.samples, self.unit = tuple(bars), samples, unit
        self._draw()

    @property
    def heading(self) -> str:
        return f"{self.unit} per kernel{self.samples} (grey: baseline, green: winner)"

    def render(self):  # type: ignore[no-untyped-def]
        if self._bars and len(self._bars) * 2 + 5 > self.size.height:
            return self._compact()  # too short for plotext to label every bar: a labelled list
        self._draw(refresh=False)  # how many bars fit depends on the height we render at
        return super().render()

    def _compact(self) -> Text:
        """One labelled row per bar (the best that fit, and always the baseline)."""
        rows = max(self.size.height - 1, 1)
        bars = list(self._bars)
        if len(bars) > rows:
            bars = [b for b in bars if not b.baseline][: max(rows - 1, 0)] + [b for b in bars if b.baseline]
        label = max((len(b.label[:14]) for b in bars), default=0)
        top = max((b.value for b in bars), default=0.0) or 1.0
        value = max(len(f"{b.value:,.2f}") for b in bars)
        room = max(self.size.width - label - value - 3, 1)
        text = Text(self.heading, style="bold")
        gap = "\n" if rows >= 2 * len(bars) else ""  # spaced out when there is room
        for bar in bars:
            color = "grey50" if bar.baseline else "green" if bar.winner else "blue"
            text.append(f"\n{gap}{bar.label[:14]:<{label}} ")
            text.append("█" * max(round(room * bar.value / top), 1 if bar.value > 0 else 0), style=color)
            text.append(f" {bar.value:,.2f}", style="bold" if bar.winner else "")
        return text

    def _fitting(self) -> list[Bar]:
        """The best kernels that fit two rows each, and always the baseline."""
        rows = max(self.size.height - 5, 2)
        fit = max(rows // 2, 2)
        if len(self._bars) <= fit:
            return list(self._bars)
        kept = [b for b in self._bars if not b.baseline][: fit - 1]
        return kept + [b for b in self._bars if b.baseline]

    def _draw(self, refresh: bool = True) -> None:
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title(self.heading)
        if not self._bars:
            if refresh:
                self.refresh()
            return
        bars = list(reversed(self._fitting()))  # plotext draws the first bar at the bottom
        for position, bar in enumerate(bars, 1):
            color = "gray" if bar.baseline else "green" if bar.winner else "blue"
            plt.bar([position], [bar.value], orientation="horizontal", color=color, width=0.6)
        plt.yticks(list(range(1, len(bars) + 1)), [b.label[:14] for b in bars])
        if refresh:
            self.refresh()
