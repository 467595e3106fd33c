"""How fast is the harness itself? Seconds per candidate (compile + verify + time).

Runs each workload at the chosen size with its naive baseline and a batch of copies of
it as candidates, so the figure is the engine's own cost on this adapter, not the
kernels'. Prints a table and writes benchmarks/results/harness-<adapter>.json.

    .venv/bin/python benchmarks/harness.py [--size seed] [--candidates 4]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import time
from pathlib import Path

from vajra_tui.engine.candidate import Candidate
from vajra_tui.engine.gpu.client import GPUClient
from vajra_tui.engine.session import Session
from vajra_tui.engine.workloads import WORKLOADS
from vajra_tui.settings import TimingSettings

RESULTS = Path(__file__).parent / "results"


async def measure(client: GPUClient, name: str, size: str, count: int) -> dict:
    w = WORKLOADS[name]
    session = Session(w, w.size(size), client, lambda e: None, TimingSettings())
    began = time.perf_counter()
    await session.start()
    setup = time.perf_counter() - began
    await session.run_baseline(time=False)
    # distinct sources (a comment differs), so nothing is cached between them
    cands = [Candidate(id=f"c{i}", name=f"c{i}", strategy="user", source=f"// copy {i}\n{w.baseline}")
             for i in range(count)]
    began = time.perf_counter()
    results = await session.evaluate(cands)
    batch = time.perf_counter() - began
    assert all(r.status == "verified" for r in results), [r.reason for r in results]
    kernel_ms = sum(r.median_ms for r in results) * (session.timing.warmup + session.timing.reps)
    return {"workload": name, "size": session.size, "setup_s": setup, "candidates": count,
            "seconds_per_candidate": batch / count,
            "kernel_time_share": kernel_ms / 1e3 / batch}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", default="seed")
    parser.add_argument("--candidates", type=int, default=4)
    args = parser.parse_args()
    client = GPUClient()
    device = client.start()
    try:
        rows = [await measure(client, name, args.size, args.candidates) for name in WORKLOADS]
    finally:
        client.close()
    print(f"harness on {device.name} ({'software' if device.software else device.adapter_type})")
    print(f"{'workload':<10}{'setup s':>10}{'s/candidate':>14}{'GPU share':>11}")
    for r in rows:
        print(f"{r['workload']:<10}{r['setup_s']:>10.2f}{r['seconds_per_candidate']:>14.3f}"
              f"{100 * r['kernel_time_share']:>10.0f}%")
    slug = re.sub(r"[^a-z0-9]+", "-", device.name.lower()).strip("-")
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"harness-{slug}.json"
    out.write_text(json.dumps({"device": device.model_dump(include={"name", "backend", "software", "driver"}),
                               "size": args.size, "rows": rows}, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    asyncio.run(main())
