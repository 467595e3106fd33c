"""Probe: the 1-D fft's passes chunk by chunk over the batch (benchmarks/experiments/
fft_chunked.py), beside the built-in's best kernel and torch, in one process: does the
scratch T staying in L2 between a chunk's two passes lift fft past cuFFT?

    python benchmarks/fft_chunk_probe.py --size large --out results/fft-chunk.json
    python benchmarks/fft_chunk_probe.py --size seed --quick --no-torch --out /tmp/p.json   # lavapipe
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from experiments.fft_chunked import kernel  # noqa: E402
from fft2_three_probe import _timed, finish, probe_parser  # noqa: E402
from sweep import parse_key  # noqa: E402
from torch_ceilings import load_torch, torch_ceiling  # noqa: E402

from vajra_tui.engine.candidate import Candidate  # noqa: E402
from vajra_tui.engine.gpu.client import GPUClient  # noqa: E402
from vajra_tui.engine.sources.library import LibrarySource  # noqa: E402
from vajra_tui.engine.workloads import WORKLOADS, get_workload  # noqa: E402
from vajra_tui.settings import TimingSettings  # noqa: E402

FILE = str(ROOT / "benchmarks" / "experiments" / "fft_chunked.py")
BEST = ["fft/regs regs=64 cols=4 ex=1 blk=1", "fft/regs regs=32 cols=4 ex=1 blk=1"]  # NOTES, #27
# chunk sizes in the order they are timed: the unchunked control first and last (drift)
ORDER = {"large": [16, 4, 2, 8, 1, 16], "seed": [4, 2, 1, 4]}


def _chunked(ch: int, size: dict, run: int) -> list[tuple[Candidate, str]]:
    out = []
    for i, key in enumerate(BEST):
        params = {k: v for k, v in parse_key(key).items() if k != "template"}
        name = f"fft_chunked ch={ch} " + key.split(" ", 1)[1]
        out.append((Candidate(id=f"c{run}_{i}", name=name, strategy="A", generation=1, params={}, origin="probe",
                              source=kernel(params, size, ch)), f"{ch} batch rows a chunk"))
    return out


async def main(args) -> dict:
    torch = None if args.no_torch else load_torch()
    client = GPUClient()
    device = client.start()
    timing = TimingSettings(warmup=2, reps=3) if args.quick else TimingSettings(warmup=5, reps=9)
    size = WORKLOADS["fft"].size(args.size)
    began = time.perf_counter()
    lib = LibrarySource(client.device)
    builtin = [(lib.instantiate(parse_key(k), size, cid=f"b{i}", name=k), "the built-in, two dispatches")
               for i, k in enumerate(BEST)]
    report: dict = {"device": device.model_dump(), "size": size, "runs": []}
    report["runs"].append({"chunk": "built-in", "rows": await _timed(client, WORKLOADS["fft"], size, timing,
                                                                     builtin, args.batches)})
    prefix = "LARGE" if size["BATCH"] == 16 else "SEED"
    for run, ch in enumerate(ORDER["large" if prefix == "LARGE" else "seed"]):
        w = get_workload(f"{FILE}:{prefix}_CH{ch}")
        rows = await _timed(client, w, size, timing, _chunked(ch, size, run), args.batches)
        report["runs"].append({"chunk": ch, "rows": rows})
    ms = torch_ceiling(torch, "fft", size) if torch is not None else None
    finish(report, [row for run in report["runs"] for row in run["rows"]], ms, began, client, args.out, "torch.fft.fft")
    return report


if __name__ == "__main__":
    ap = probe_parser(__doc__, "fft-chunk.json")
    asyncio.run(main(ap.parse_args()))
