"""Probe: fft2 with its columns first (benchmarks/experiments/fft2_cols_first.py) beside the
built-in's best kernels and torch, in one process, each pass timed too: is a strided write,
more than a strided read, what keeps fft2 at 0.6x cuFFT? (The 1-D fft's best is timed pass by
pass in the same call, for the same question.)

    python benchmarks/fft2_order_probe.py --size large --out results/fft2-order.json
    python benchmarks/fft2_order_probe.py --size seed --quick --no-torch --out /tmp/p.json   # lavapipe
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from experiments.fft2_cols_first import kernel  # noqa: E402
from fft2_three_probe import _timed, finish, probe_parser  # noqa: E402
from sweep import parse_key  # noqa: E402
from torch_ceilings import load_torch, torch_ceiling  # noqa: E402

from vajra_tui.engine.candidate import Candidate  # noqa: E402
from vajra_tui.engine.gpu.client import GPUClient  # noqa: E402
from vajra_tui.engine.sources.library import LibrarySource  # noqa: E402
from vajra_tui.engine.workloads import WORKLOADS, get_workload  # noqa: E402
from vajra_tui.settings import TimingSettings  # noqa: E402

FIRST = get_workload(str(ROOT / "benchmarks" / "experiments" / "fft2_cols_first.py") + ":WORKLOAD")
# the library's best fft2 (NOTES round 17) and fft (the H200 row's and the H100's)
BUILT_IN = {"fft2": ["fft2/regs regs=16 cols=4 ex=1 fold=2 blk=2", "fft2/regs regs=16 cols=4 ex=1 fold=2 blk=1"],
            "fft": ["fft/regs regs=32 cols=4 ex=1 blk=1", "fft/regs regs=16 cols=4 ex=1 blk=1"]}
# the columns-first kernels (re and im exchanged apart), each with its question (NOTES round 19;
# round 13 timed the unfolded ones: 1.1-1.5x slower than the built-in's fold=1)
FIRST_CONFIGS = [
    ({"regs": 16, "cols": 4, "fold": 2, "blk": 0}, "folded at the end, T row-major: down writes 32-byte runs"),
    ({"regs": 16, "cols": 4, "fold": 2, "blk": 1}, "folded, T in blocks of 4: every write contiguous, "
                                                   "across reads 32-byte runs"),
    ({"regs": 16, "cols": 4, "fold": 2, "blk": 2}, "folded, blocks of 8: across reads 64-byte runs"),
    ({"regs": 16, "cols": 4, "fold": 1, "blk": 1}, "unfolded (round 13's best columns-first), the control"),
]


def _first(i: int, params: dict, size: dict, device) -> Candidate:
    name = "fft2_cols_first " + " ".join(f"{k}={v}" for k, v in {**params, "ex": 1}.items())
    return Candidate(id=f"f{i}", name=name, strategy="A", generation=1, params={}, origin="probe",
                     source=kernel({**params, "ex": 1}, size, device))


async def _built_in(client, lib, name: str, size: dict, timing, batches: int) -> list[dict]:
    cands = [(lib.instantiate(parse_key(k), size, cid=f"{name}{i}", name=k), "the built-in") for i, k in
             enumerate(BUILT_IN[name])]
    return await _timed(client, WORKLOADS[name], size, timing, cands, batches, warm=True)


async def main(args) -> dict:
    torch = None if args.no_torch else load_torch()
    client = GPUClient()
    device = client.start()
    timing = TimingSettings(warmup=2, reps=3) if args.quick else TimingSettings(warmup=5, reps=9)
    size = WORKLOADS["fft2"].size(args.size)
    began = time.perf_counter()
    lib = LibrarySource(client.device)
    report = {"device": device.model_dump(), "size": size,
              "built_in": await _built_in(client, lib, "fft2", size, timing, args.batches),
              "cols_first": await _timed(client, FIRST, size, timing,
                                         [(_first(i, c, size, client.device), why)
                                          for i, (c, why) in enumerate(FIRST_CONFIGS)],
                                         args.batches, warm=True)}
    fft_size = WORKLOADS["fft"].size(args.size)
    report["fft"] = await _built_in(client, lib, "fft", fft_size, timing, args.batches)
    report["fft_torch_ms"] = torch_ceiling(torch, "fft", fft_size) if torch is not None else None
    ms = torch_ceiling(torch, "fft2", size) if torch is not None else None
    finish(report, report["built_in"] + report["cols_first"], ms, began, client, args.out, "torch.fft.fft2")
    print(f"fft (torch {report['fft_torch_ms']} ms): " + "; ".join(
        f"{r['key']} {r.get('median_ms')} passes {r.get('pass_ms')}" for r in report["fft"]))
    return report


if __name__ == "__main__":
    ap = probe_parser(__doc__, "fft2-order.json")
    asyncio.run(main(ap.parse_args()))
