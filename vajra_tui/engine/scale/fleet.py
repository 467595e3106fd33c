"""The same tune on every device model of a cluster, one merged lockfile, one comparison.

``vajra-tui fleet -w W`` answers "which kernel should ship for each GPU we have?". The
cluster's adapters are grouped by device model (:func:`.ray_cluster.by_model`); each
model gets a whole tune of its own on its own lanes (the run builder's, over those lanes), so
every number in a model's row divides a baseline timed on that model. The models run
concurrently (they are different machines), and one model's failure is a line in its row,
not the end of the others.

The merged lockfile holds one entry per device model: its winner (or, where nothing beat
the baseline, the baseline itself, so every device has a measured kernel to ship).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from vajra_tui.engine.events import CandidateResult, DeviceInfo, Event, WorkloadInfo
from vajra_tui.engine.export.lockfile import build_lock, lock_entry
from vajra_tui.engine.run.builder import Placement, RunRequest, build_run
from vajra_tui.engine.session import Session
from vajra_tui.engine.scale.lane import Lane

EmitFor = Callable[[str], Callable[[Event], None]]


@dataclass
class DeviceOutcome:
    """One device model's tune, as the table, the JSON and the lockfile need it."""

    model: str
    lanes: list[str]
    device: DeviceInfo | None = None
    workload: WorkloadInfo | None = None
    baseline: CandidateResult | None = None
    winner: CandidateResult | None = None
    ranking: list[str] = field(default_factory=list)
    lanes_summary: dict[str, Any] = field(default_factory=dict)
    generations: int = 0
    error: str = ""

    @property
    def shipped(self) -> CandidateResult | None:
        """What this device's lockfile entry holds: the winner, else the verified baseline."""
        if self.winner is not None and self.winner.status == "verified":
            return self.winner
        if self.baseline is not None and self.baseline.status == "verified":
            return self.baseline
        return None

    def row(self) -> dict[str, Any]:
        """The comparison's row (also the JSON document's ``devices`` item)."""
        shipped, base = self.shipped, self.baseline
        return {
            "model": self.model, "lanes": self.lanes, "error": self.error or None,
            "device": self.device.model_dump(include={"name", "backend", "driver", "vendor", "software"})
            if self.device else None,
            "baseline_ms": base.median_ms if base else None,
            "winner": self.winner.name if self.winner else None,
            "winner_ms": self.winner.median_ms if self.winner else None,
            "speedup": self.winner.speedup if self.winner else None,
            "gflops": shipped.gflops if shipped else None,
            "gbps": shipped.gbps if shipped else None,
            "pct_of_roofline": shipped.pct_of_roofline if shipped else None,
            "kernel_sha256": shipped.source_sha256 if shipped else None,
            "baseline_spread": self.lanes_summary.get("baseline_spread"),
            "generations": self.generations, "ranking": self.ranking,
        }


async def tune_model(model: str, request: RunRequest, lanes: list[Lane], emit: Callable[[Event], None]) -> DeviceOutcome:
    """A whole tune on one model's lanes; any failure is kept in the outcome, not raised."""
    outcome = DeviceOutcome(model=model, lanes=[lane.label for lane in lanes])
    run = build_run(replace(request, placement=Placement(lanes=lanes)), emit)
    try:
        report = await run.tune()
    except Exception as exc:  # noqa: BLE001 - one device's failure is its row's text
        outcome.error = " ".join(f"{type(exc).__name__}: {exc}".split())
        _fill(outcome, run.session)
        return outcome
    finally:
        await run.tuner.source.aclose()
    _fill(outcome, run.session)
    outcome.winner = report.winner
    outcome.ranking = report.ranking
    outcome.lanes_summary = run.tuner.board.summary()  # type: ignore[attr-defined]
    outcome.generations = report.generations
    return outcome


def _fill(outcome: DeviceOutcome, session: Session) -> None:
    outcome.device, outcome.workload = session.device, session.info
    outcome.baseline = session.results.get("baseline")


async def run_fleet(groups: dict[str, list[Lane]], request: RunRequest, emit_for: EmitFor) -> list[DeviceOutcome]:
    """Every model's tune at once (they run on different adapters); outcomes in ``groups`` order.

    ``request`` is the tune each model gets (its placement is that model's lanes); the lanes
    are the caller's to close.
    """
    return list(await asyncio.gather(*(tune_model(model, request, lanes, emit_for(model))
                                       for model, lanes in groups.items())))


def fleet_lock(outcomes: list[DeviceOutcome]) -> dict[str, Any]:
    """One lockfile, an entry per device model that has a verified kernel to ship."""
    entries = []
    for o in outcomes:
        shipped = o.shipped
        if shipped is not None and o.device is not None and o.workload is not None:
            entries.append(lock_entry(shipped, o.device, o.workload))
    return build_lock(entries)


def comparison(outcomes: list[DeviceOutcome]) -> dict[str, Any]:
    """The side-by-side document: one row per device, and which kernels won where."""
    rows = [o.row() for o in outcomes]
    timed = [r for r in rows if r["winner_ms"] or r["baseline_ms"]]
    fastest = min(timed, key=lambda r: r["winner_ms"] or r["baseline_ms"])["model"] if timed else None
    distinct = {r["kernel_sha256"] for r in rows if r["kernel_sha256"]}
    return {"devices": rows, "fastest_device": fastest, "distinct_winners": len(distinct),
            "lost_devices": [r["model"] for r in rows if r["error"]]}


__all__ = ["DeviceOutcome", "run_fleet", "tune_model", "fleet_lock", "comparison"]
