"""Probe: conv1d with its taps in a uniform (benchmarks/experiments/conv1d_taps.py) beside the
built-in's best kernel and torch, in one process: are W's 64 registers what keeps conv1d at
56% of the FMA peak?

    python benchmarks/conv1d_taps_probe.py --size large --out results/conv1d-taps.json
    python benchmarks/conv1d_taps_probe.py --size seed --quick --no-torch --out /tmp/p.json   # lavapipe
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from experiments.conv1d_taps import kernel  # noqa: E402
from fft2_three_probe import _timed, finish, probe_parser  # noqa: E402
from sweep import parse_key  # noqa: E402
from torch_ceilings import load_torch, torch_ceiling  # noqa: E402

from vajra_tui.engine.candidate import Candidate  # noqa: E402
from vajra_tui.engine.gpu.client import GPUClient  # noqa: E402
from vajra_tui.engine.sources.library import LibrarySource  # noqa: E402
from vajra_tui.engine.workloads import WORKLOADS, get_workload  # noqa: E402
from vajra_tui.settings import TimingSettings  # noqa: E402

TAPS = get_workload(str(ROOT / "benchmarks" / "experiments" / "conv1d_taps.py") + ":WORKLOAD")
BEST = "conv1d/regs wg=128 groups=1 v4out=1 run=2 slide=0 wsrc=2 xsrc=0 seq=8 lay=0"  # the H200 row (#27)
BUILT_IN = [(BEST, "the built-in's best: W in 64 registers"),
            (BEST.replace("seq=8", "seq=4"), "four tiles a workgroup")]
# (changes to BEST, what each tests) with the taps in the uniform
TAPS_CONFIGS = [
    ({}, "the same kernel, taps from the constant bank"),
    ({"seq": 4}, "four tiles"),
    ({"run": 3}, "runs of three vec4: the freed registers as outputs"),
    ({"run": 4}, "runs of four vec4"),
    ({"wg": 256}, "256 lanes"),
    ({"groups": 2}, "two runs of two a lane (slower with W in registers, round 7)"),
    ({"pd": 2, "seq": 4}, "two windows in flight (slower with W in registers, round 8)"),
    ({"run": 3, "seq": 4}, "runs of three, four tiles"),
    ({"wg": 64, "seq": 4}, "64 lanes, four tiles"),
]


def _taps(i: int, change: dict, size: dict) -> Candidate:
    params = {**{k: v for k, v in parse_key(BEST).items() if k != "template"}, **change}
    name = "conv1d_taps " + " ".join(f"{k}={v}" for k, v in params.items())
    return Candidate(id=f"t{i}", name=name, strategy="A", generation=1, params={}, origin="probe",
                     source=kernel(params, size))


async def main(args) -> dict:
    torch = None if args.no_torch else load_torch()
    client = GPUClient()
    device = client.start()
    timing = TimingSettings(warmup=2, reps=3) if args.quick else TimingSettings(warmup=5, reps=9)
    timing.clock_bring_up = bool(args.idle_s)  # idle before each batch: the worker brings the clock up
    size = WORKLOADS["conv1d"].size(args.size)
    began = time.perf_counter()
    lib = LibrarySource(client.device)
    # the built-in's kernels read W, which the experiment binds too: every kernel in one session
    built = [(lib.instantiate(parse_key(k), size, cid=f"b{i}", name=k), why) for i, (k, why) in enumerate(BUILT_IN)]
    taps = [(_taps(i, c, size), why) for i, (c, why) in enumerate(TAPS_CONFIGS)]
    report = {"device": device.model_dump(), "size": size,
              "idle_s": args.idle_s,
              "rows": await _timed(client, TAPS, size, timing, built + taps, args.batches, warm=not args.idle_s,
                                   idle_s=args.idle_s)}
    ms = torch_ceiling(torch, "conv1d", size) if torch is not None else None
    finish(report, report["rows"], ms, began, client, args.out, "torch conv1d")
    return report


if __name__ == "__main__":
    ap = probe_parser(__doc__, "conv1d-taps.json", batches=3)
    ap.add_argument("--idle-s", type=float, default=0.0,
                    help="idle the GPU this long before every batch, with no untimed batch first")
    asyncio.run(main(ap.parse_args()))
