"""How fast is the harness itself? Seconds per candidate, split by step, per judge.

Runs each workload at the chosen size with its naive baseline and a batch of copies of
it as candidates, so the figure is the engine's own cost on this adapter, not the
kernels'. Every request the session sends the worker is timed from the parent, so a
candidate's seconds split into compile, verify (two seeds), probe (the over-dispatch
check), timing (its share of the batch's timed stream, verification of the snapshots
included) and the rest. ``--judges cpu,gpu`` runs the whole table once per judge
(VAJRA_VERIFY, a fresh worker each), side by side in one run; ``prepare`` (inputs and
float64 references per seed, reference upload, pipelines) is reported per workload.

    .venv/bin/python benchmarks/harness.py [--size seed] [--candidates 4] [--judges cpu,gpu]
        [--warmup 5 --reps 9] [--workloads sgemm,softmax] [--out results/harness-x.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from vajra_tui.engine.candidate import Candidate
from vajra_tui.engine.gpu.client import GPUClient
from vajra_tui.engine.gpu.protocol import Prepare, Prepared, R, Request, Time, TimeStream, Verify
from vajra_tui.engine.session import Session
from vajra_tui.engine.workloads import WORKLOADS
from vajra_tui.settings import TimingSettings

RESULTS = Path(__file__).parent / "results"
STEPS = ("compile", "verify", "probe", "timing", "drop")


class TimedClient(GPUClient):
    """A GPUClient that adds up, per step, the seconds its requests take."""

    def __init__(self) -> None:
        super().__init__()
        self.seconds: dict[str, float] = defaultdict(float)
        self.prepare: dict[str, Any] = {}

    async def request(self, request: Request[R], timeout: float) -> R:
        began = time.perf_counter()
        reply = await super().request(request, timeout)
        step = "probe" if isinstance(request, Verify) and request.grid else \
            "timing" if isinstance(request, (Time, TimeStream)) else request.op
        self.seconds[step] += time.perf_counter() - began
        if isinstance(request, Prepare) and isinstance(reply, Prepared):
            self.prepare = {"judge": reply.judge, "seconds": reply.seconds,
                            "wall_s": time.perf_counter() - began}
        return reply


async def measure(client: TimedClient, name: str, size: str, count: int, timing: TimingSettings) -> dict:
    w = WORKLOADS[name]
    session = Session(w, w.size(size), client, lambda e: None, timing.model_copy())
    began = time.perf_counter()
    await session.start(calibrate=False)
    setup = time.perf_counter() - began
    await session.run_baseline(time=False)
    # distinct sources (a comment differs), so nothing is cached between them
    cands = [Candidate(id=f"c{i}", name=f"c{i}", strategy="user", source=f"// copy {i}\n{w.baseline}")
             for i in range(count)]
    client.seconds.clear()
    recycles = client.recycles
    began = time.perf_counter()
    results = await session.evaluate(cands)
    batch = time.perf_counter() - began
    assert all(r.status == "verified" for r in results), [r.reason for r in results]
    kernel_ms = sum(r.median_ms for r in results) * (session.timing.warmup + session.timing.reps)
    split = {step: client.seconds.get(step, 0.0) / count for step in STEPS}
    split["other"] = batch / count - sum(split.values())
    return {"workload": name, "size": session.size, "setup_s": setup, "prepare": client.prepare,
            "candidates": count, "seconds_per_candidate": batch / count, "split_s": split,
            "kernel_time_share": kernel_ms / 1e3 / batch,
            "worker_recycles": client.recycles - recycles}  # each one replays prepare


async def run_judge(judge: str, names: list[str], size: str, count: int, timing: TimingSettings) -> tuple:
    os.environ["VAJRA_VERIFY"] = judge  # the worker reads it when it starts
    client = TimedClient()
    device = client.start()
    try:
        rows = [await measure(client, name, size, count, timing) for name in names]
    finally:
        client.close()
    return device, rows


def table(judge: str, rows: list[dict]) -> None:
    print(f"\njudge: {judge} (prepare judged by {rows[0]['prepare'].get('judge') if rows else '?'})")
    print(f"{'workload':<10}{'prepare s':>10}{'s/cand':>9}" + "".join(f"{s:>9}" for s in (*STEPS, "other"))
          + f"{'GPU %':>7}")
    for r in rows:
        print(f"{r['workload']:<10}{r['prepare'].get('wall_s', 0):>10.2f}{r['seconds_per_candidate']:>9.3f}"
              + "".join(f"{r['split_s'][s]:>9.3f}" for s in (*STEPS, "other"))
              + f"{100 * r['kernel_time_share']:>6.0f}%")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="seed")
    parser.add_argument("--candidates", type=int, default=4)
    parser.add_argument("--judges", default="cpu,gpu", help="comma-separated: cpu, gpu, auto, check")
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--warmup", type=int, default=None)
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    timing = TimingSettings()
    timing = timing.model_copy(update={k: v for k, v in (("warmup", args.warmup), ("reps", args.reps)) if v})
    names = [n for n in args.workloads.split(",") if n]
    runs, device = {}, None
    for judge in [j for j in args.judges.split(",") if j]:
        device, runs[judge] = await run_judge(judge, names, args.size, args.candidates, timing)
        table(judge, runs[judge])
    assert device is not None
    print(f"\nharness on {device.name} ({'software' if device.software else device.adapter_type}), "
          f"size {args.size}, warmup {timing.warmup}, reps {timing.reps}")
    slug = re.sub(r"[^a-z0-9]+", "-", device.name.lower()).strip("-")
    out = args.out or RESULTS / f"harness-{slug}-{args.size}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"device": device.model_dump(include={"name", "backend", "software", "driver"}),
                               "size": args.size, "warmup": timing.warmup, "reps": timing.reps,
                               "judges": runs}, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    asyncio.run(main())
