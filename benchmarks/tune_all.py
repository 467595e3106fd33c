"""A library tune of every built-in workload, end to end: wall seconds per workload and total.

Each workload is one ``vajra_tui.tune(name, size=..., source="library")`` call, as a user's
script runs it: a worker (the previous call's, left idle, unless ``VAJRA_WORKER_IDLE_S=0``
asks for a fresh one each time), calibration (cached after the first), prepare, the
baseline, generation 1 and evolution, each generation closed by a shoot-out. Issue #27's
target on the H200: under 40 s for all nine built-ins at seed size. The JSON is rewritten
after every workload, so a run cut short still leaves what it measured.

    .venv/bin/python benchmarks/tune_all.py --out results/tune-all.json [--size seed]
        [--judge auto|gpu|cpu] [--generations 2 --budget 6] [--workloads sgemm,gemv]
        [--timeline results/timelines]

``--timeline`` keeps each workload's events (time, type, candidate, stage) as JSON lines,
so where a slow tune spends its seconds can be read afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import Counter
from pathlib import Path

import vajra_tui
from vajra_tui.engine.events import Event
from vajra_tui.engine.workloads import WORKLOADS


def tune_one(name: str, size: str, generations: int, budget: int, timeline: Path | None = None) -> dict:
    """One workload's tune, timed from the call to the report."""
    events: list[dict] = []

    def keep(event: Event) -> None:
        events.append({"t": round(event.t, 4), "type": event.type, "id": getattr(event, "id", ""),
                       "stage": getattr(event, "stage", "")})

    began = time.perf_counter()
    report = vajra_tui.tune(name, size=size, source="library", generations=generations, budget=budget,
                            on_event=keep if timeline else None)
    wall = time.perf_counter() - began
    if timeline:
        timeline.mkdir(parents=True, exist_ok=True)
        (timeline / f"{name}.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    results = [r for r in report.results if r.id != "baseline"]
    winner = report.winner
    tels = [r.telemetry for r in report.results if r.telemetry is not None]
    # the clock bring-up (TimingSettings.clock_bring_up): each batch's telemetry is shared by its
    # results, so distinct values approximate the batches that ran untimed first, and for how long
    warmed = sorted({round(t.warmed_ms, 1) for t in tels if t.warmed_ms})
    starts = [t.first.sm_clock_mhz for t in tels if t.first is not None and t.first.sm_clock_mhz]
    return {"workload": name, "wall_s": round(wall, 3), "candidates": len(results),
            "warmed_ms": warmed, "lowest_start_mhz": min(starts) if starts else None,
            "verified": sum(r.status == "verified" for r in results),
            "statuses": dict(Counter(r.status for r in results)),
            "winner": winner.name if winner else None, "speedup": winner.speedup if winner else None,
            "seconds_per_candidate": round(wall / max(1, len(results)), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="where the JSON goes")
    parser.add_argument("--size", default="seed")
    parser.add_argument("--judge", default=None, help="VAJRA_VERIFY for the workers (default: auto)")
    parser.add_argument("--generations", type=int, default=2)
    parser.add_argument("--budget", type=int, default=6)
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--timeline", type=Path, default=None, help="a folder for each workload's events")
    args = parser.parse_args()
    if args.judge:
        os.environ["VAJRA_VERIFY"] = args.judge
    rows, began = [], time.perf_counter()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for name in [n for n in args.workloads.split(",") if n]:
        rows.append(tune_one(name, args.size, args.generations, args.budget, args.timeline))
        r = rows[-1]
        print(f"{name:<10} {r['wall_s']:>8.2f} s  {r['candidates']:>3} candidates  "
              f"{r['seconds_per_candidate']:.3f} s/candidate  winner {r['winner']}", flush=True)
        write(args, rows, time.perf_counter() - began)
    total = time.perf_counter() - began
    print(f"{'total':<10} {total:>8.2f} s")
    print(f"wrote {args.out}")


def write(args: argparse.Namespace, rows: list[dict], total: float) -> None:
    """The JSON so far: the workloads tuned, and the seconds since the first began."""
    args.out.write_text(json.dumps({
        "size": args.size, "judge": os.environ.get("VAJRA_VERIFY", "auto"),
        "idle_worker_s": os.environ.get("VAJRA_WORKER_IDLE_S", "30"),
        "generations": args.generations, "budget": args.budget,
        "total_s": round(total, 3), "workloads": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
