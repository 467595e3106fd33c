"""What each lane of a multi-adapter run is doing, told to consumers as ``LanesUpdated``.

The screens show which adapters are in use and which one is timing; the report shows
each lane's baseline and their spread (max/min: how far identical GPUs differ). Events
of a secondary lane's session that describe the run as a whole are held back here, so
consumers see one run: one ``SessionStarted``, one calibration, one baseline (the
primary lane's, which the shoot-out divides by).
"""

from __future__ import annotations

import statistics
from typing import Any, Callable, Sequence

from vajra_tui.engine.events import (
    CalibrationReady, CandidateFinished, DeviceInfo, Event, LaneInfo, LanesUpdated, Notice, RankingReady,
    SessionStarted,
)

RUN_LEVEL = (SessionStarted, CalibrationReady, RankingReady)


def filtered_emit(sink: Callable[[Event], None], is_primary: Callable[[], bool],
                  label: str) -> Callable[[Event], None]:
    """A secondary lane's emit: its baseline and run-level events stay in its session,
    its notices say which lane they are about; as the primary it passes everything."""
    def emit(event: Event) -> None:
        if not is_primary():
            if isinstance(event, RUN_LEVEL) or _about_baseline(event):
                return
            if isinstance(event, Notice):
                event = event.model_copy(update={"message": f"{label}: {event.message}"})
        sink(event)
    return emit


def _about_baseline(event: Event) -> bool:
    if isinstance(event, CandidateFinished):
        return event.result.id == "baseline"
    return getattr(event, "id", None) == "baseline"


class LaneBoard:
    """The lanes' state, published whole whenever it changes (consumers keep the latest)."""

    def __init__(self, lanes: Sequence[Any], emit: Callable[[Event], None]) -> None:
        self.emit = emit
        self.final = 0
        self.infos = [LaneInfo(label=lane.label, adapter_index=getattr(lane, "adapter_index", None),
                               host=str(getattr(lane, "host", "") or "")) for lane in lanes]

    def started(self, k: int, device: DeviceInfo | None) -> None:
        if device is not None:
            info = self.infos[k]
            info.adapter_index, info.name, info.driver = device.adapter_index, device.name, device.driver
            info.nvml_index = device.nvml.index if device.nvml else None
        self.state(k, "idle")

    def state(self, k: int, state: str) -> None:
        if self.infos[k].state != "lost":
            self.infos[k].state = state  # type: ignore[assignment]
            self.publish()

    def timed(self, k: int, baseline_ms: float | None, batch: bool = False, candidates: int = 0) -> None:
        info = self.infos[k]
        info.batches += int(batch)
        info.timed += candidates
        if baseline_ms is not None and batch:
            info.baseline_medians_ms.append(float(baseline_ms))
            info.baseline_median_ms = statistics.median(info.baseline_medians_ms)
        self.publish()

    def lose(self, k: int, in_flight: list[str]) -> None:
        self.infos[k].state, self.infos[k].lost = "lost", list(in_flight)
        self.publish()

    def live(self) -> list[int]:
        return [k for k, info in enumerate(self.infos) if info.state != "lost"]

    def is_live(self, k: int) -> bool:
        return self.infos[k].state != "lost"

    @property
    def spread(self) -> float | None:
        """max/min of the lanes' baseline medians: 1.0 when identical GPUs time identically."""
        medians = [i.baseline_median_ms for i in self.infos if i.baseline_median_ms]
        return max(medians) / min(medians) if len(medians) > 1 else None

    def publish(self) -> None:
        self.emit(LanesUpdated(lanes=[i.model_copy(deep=True) for i in self.infos],
                               timing=[i.label for i in self.infos if i.state == "timing"],
                               spread=self.spread, final_lane=self.infos[self.final].label))

    def summary(self) -> dict[str, Any]:
        """For the JSON document: every lane, the baseline spread, the shoot-out's lane."""
        return {"lanes": [i.model_dump() for i in self.infos], "baseline_spread": self.spread,
                "final_lane": self.infos[self.final].label}
