"""Probe: where an FFT pass spends its time. The library's best fft and fft2 kernels are timed
whole and with parts of every pass taken out, pass by pass, in one process:

- ``full``: the kernel as the library writes it (the control; it verifies);
- ``no-butterflies``: loads, workgroup exchanges and stores, no arithmetic between them;
- ``no-exchanges``: loads, butterflies and stores; each stage reads the last one's registers;
- ``memory-only``: loads and stores alone (with what a store computes: a folded pass's
  shuffles, the 1-D fft's four-step twiddle).

The ablated kernels compute nothing useful, so they fail verification (the table prints them
BAD, as expected); they are compiled through the same admission as the control (same prelude,
grid and bindings), and their pipelines are timed in the same batches with the worker's ``TimeStream`` request. If
``memory-only`` is as slow as ``full``, a pass is bound by its access pattern and its
residency, and rewriting its arithmetic cannot help; if it is much faster, the difference is
split between the exchanges and the butterflies.

    python benchmarks/fft_pass_ablation.py --size large --out results/fft-ablation.json
    python benchmarks/fft_pass_ablation.py --size seed --quick --no-torch --out /tmp/a.json   # lavapipe
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import sys
import time
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from fft2_three_probe import finish, probe_parser  # noqa: E402
from sweep import parse_key  # noqa: E402
from torch_ceilings import load_torch, torch_ceiling, torch_copy_gbps  # noqa: E402

from vajra_tui.engine.candidate import Candidate  # noqa: E402
from vajra_tui.engine.gpu.client import GPUClient  # noqa: E402
from vajra_tui.engine.gpu.protocol import TimeStream  # noqa: E402
from vajra_tui.engine.session import Session  # noqa: E402
from vajra_tui.engine.sources.library import LibrarySource, fft_gen  # noqa: E402
from vajra_tui.engine.timing.batches import pass_medians  # noqa: E402
from vajra_tui.engine.workloads import WORKLOADS  # noqa: E402
from vajra_tui.settings import TimingSettings  # noqa: E402

# the best measured kernels (NOTES: fft round 7, fft2 round 17) and fft2's unfolded control
KERNELS = {"fft2": ["fft2/regs regs=16 cols=4 ex=1 blk=2 last=0 fold=2",
                    "fft2/regs regs=16 cols=4 ex=1 blk=0 last=0 fold=1"],
           "fft": ["fft/regs regs=32 cols=4 ex=1 blk=1 last=0"]}
ABLATIONS = {"full": (), "no-butterflies": ("_butterflies",), "no-exchanges": ("_exchange",),
             "memory-only": ("_butterflies", "_exchange")}


def without(parts: tuple[str, ...]) -> contextlib.ExitStack:
    """fft_gen with the named emitters writing nothing, while a kernel is rendered."""
    stack = contextlib.ExitStack()
    for name in parts:
        stack.enter_context(mock.patch.object(fft_gen, name, lambda *a, **k: None))
    return stack


def candidates(lib: LibrarySource, name: str, size: dict) -> list[Candidate]:
    """Every kernel of ``name`` under every ablation, the control first."""
    out = []
    for k, key in enumerate(KERNELS[name]):
        for a, (label, parts) in enumerate(ABLATIONS.items()):
            with without(parts):
                c = lib.instantiate(parse_key(key), size, cid=f"{name}{k}{a}", name=f"{key} [{label}]")
            if c is not None:
                out.append(c)
    return out


async def timed(client: GPUClient, name: str, size: dict, timing: TimingSettings, batches: int,
                torch_ms: float | None) -> list[dict]:
    """Compile every candidate (the ablated ones fail verification, which is expected), then time
    the compiled ones in ``batches`` rotated batches after the naive baseline; each beside
    ``torch_ms``, torch's time for this workload."""
    s = Session(WORKLOADS[name], size, client, lambda e: None, timing)
    await s.start(calibrate=True)
    if not await s.admit(s.baseline_candidate()):
        raise RuntimeError(f"{name} baseline: {s.results['baseline'].reason}")
    rows, ids = [], []
    began = time.perf_counter()
    for cand in candidates(LibrarySource(client.device), name, size):
        ok = await s.admit(cand)
        print(f"{time.perf_counter() - began:7.1f} s  {'verified' if ok else s.results[cand.id].status}: {cand.name}",
              flush=True)
        r = s.results[cand.id]
        compiled = ok or r.status == "rejected"
        rows.append({"id": cand.id, "key": cand.name, "verified": bool(ok), "compiled": compiled,
                     "reason": r.reason[:300]})
        if compiled:
            ids.append(cand.id)
    got: dict[str, list[float]] = {}
    passes: dict[str, list[list[float]]] = {}
    for b in range(1, batches + 1):  # the worker brings an idled clock up before each batch
        order = ids[b % len(ids):] + ids[:b % len(ids)]
        reply = await client.request(TimeStream(cids=["baseline", *order], warmup=timing.warmup, reps=timing.reps,
                                                seed=s.seeds[0], bring_up=True), 600)
        print(f"{time.perf_counter() - began:7.1f} s  batch {b} timed", flush=True)
        for cid, ts, ps in zip(["baseline", *order], reply.ts_ms, reply.pass_ms or [[]] * (len(order) + 1)):
            got.setdefault(cid, []).append(statistics.median(ts))
            if ps:
                passes.setdefault(cid, []).append(pass_medians(ps))
    for row in rows:
        if row["id"] in got:
            row["median_ms"] = statistics.median(got[row["id"]])
            row["batch_ms"] = got[row["id"]]
            row["pass_ms"] = passes.get(row["id"])
            if torch_ms:
                row["vs_torch"] = torch_ms / row["median_ms"]
    return rows


async def main(args) -> dict:
    torch = None if args.no_torch else load_torch()
    client = GPUClient()
    device = client.start()
    timing = TimingSettings(warmup=2, reps=3) if args.quick else TimingSettings(warmup=5, reps=9)
    began = time.perf_counter()
    report: dict = {"device": device.model_dump(), "copy_gbps": torch_copy_gbps(torch) if torch else None}
    print(f"{time.perf_counter() - began:7.1f} s  {device.name}: the worker started, copy {report['copy_gbps']} GB/s",
          flush=True)
    rows = []
    for name in args.workloads.split(","):
        size = WORKLOADS[name].size(args.size)
        report[f"{name}_torch_ms"] = torch_ms = torch_ceiling(torch, name, size) if torch is not None else None
        report[name] = await timed(client, name, size, timing, args.batches, torch_ms)
        rows += report[name]
    torch_ms = {n: report[f"{n}_torch_ms"] for n in args.workloads.split(",")}
    print(f"{time.perf_counter() - began:7.1f} s  torch and the probe done: torch ms {torch_ms}", flush=True)
    # each row is already beside its own workload's torch time (fft's cuFFT is not fft2's)
    finish(report, rows, None, began, client, args.out, "torch: each row beside its own workload's;")
    return report


if __name__ == "__main__":
    ap = probe_parser(__doc__, "fft-ablation.json")
    ap.add_argument("--workloads", default="fft2,fft")
    asyncio.run(main(ap.parse_args()))
