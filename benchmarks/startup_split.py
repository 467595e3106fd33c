"""Where a seed-size library tune spends its time: per worker request, and the worker's start.

Wraps ``GPUClient`` so every request a tune sends is timed from the parent (IPC
included), and times the steps of a GPU worker's start in this process (import,
adapter enumeration, device, NVML). Used to find the fixed costs behind issue #13's
seed-size targets; prints a table and writes JSON.

    .venv/bin/python benchmarks/startup_split.py [--workloads gemv,softmax] [--out x.json]
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from vajra_tui.engine.gpu import client as client_module

SECONDS: dict[str, float] = defaultdict(float)
COUNTS: Counter[str] = Counter()


def _timed(name: str, method: Any) -> Any:
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        try:
            return method(self, *args, **kwargs)
        finally:
            key = args[0].op if name == "request" else f"<{name}>"
            SECONDS[key] += time.perf_counter() - began
            COUNTS[key] += 1
    return wrapper


def start_steps() -> dict[str, float]:
    """The steps of a worker's start, each timed once in this process."""
    steps: dict[str, float] = {}
    began = time.perf_counter()
    import wgpu
    steps["import_wgpu"] = time.perf_counter() - began
    began = time.perf_counter()
    adapters = list(wgpu.gpu.enumerate_adapters_sync())
    steps["enumerate_adapters"] = time.perf_counter() - began
    began = time.perf_counter()
    from vajra_tui.engine.gpu.runtime import Runtime
    Runtime(None)
    steps["runtime(default)"] = time.perf_counter() - began
    began = time.perf_counter()
    from vajra_tui.engine.gpu.telemetry import Telemetry
    from vajra_tui.engine.gpu.runtime import device_info
    Telemetry(device_info(adapters[0]), None)
    steps["telemetry"] = time.perf_counter() - began
    return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workloads", default="sgemm,softmax,conv1d,sobel,layernorm,gemv")
    parser.add_argument("--size", default="seed")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    client_module.GPUClient._roundtrip = _timed("request", client_module.GPUClient._roundtrip)
    client_module.GPUClient.start = _timed("start", client_module.GPUClient.start)
    import vajra_tui
    rows = []
    for name in args.workloads.split(","):
        SECONDS.clear()
        COUNTS.clear()
        began = time.perf_counter()
        report = vajra_tui.tune(name, size=args.size, source="library", generations=2, budget=6)
        wall = time.perf_counter() - began
        ops = {k: {"count": COUNTS[k], "seconds": round(v, 4)} for k, v in sorted(SECONDS.items(), key=lambda kv: -kv[1])}
        rows.append({"workload": name, "wall_s": round(wall, 3),
                     "candidates": sum(r.id != "baseline" for r in report.results), "ops": ops,
                     "outside_requests_s": round(wall - sum(SECONDS.values()), 3)})
        print(f"{name}: {wall:.2f} s, {rows[-1]['candidates']} candidates, "
              f"outside requests {rows[-1]['outside_requests_s']:.2f} s", flush=True)
        for key, op in ops.items():
            print(f"   {key:<14}{op['count']:>5} {op['seconds']:8.3f} s {op['seconds'] / op['count'] * 1e3:9.1f} ms each")
    steps = start_steps()
    print("worker start steps:", {k: round(v, 3) for k, v in steps.items()})
    if args.out:
        args.out.write_text(json.dumps({"tunes": rows, "start_steps": steps}, indent=2) + "\n")


if __name__ == "__main__":
    main()
