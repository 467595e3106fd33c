"""Probe: fft2 in three passes (benchmarks/experiments/fft2_three.py) beside the built-in's best
two-pass kernel and torch, in one process: is the column pass's 16-byte runs what keeps fft2
at 0.6x cuFFT?

    python benchmarks/fft2_three_probe.py --size large --out results/fft2-three.json
    python benchmarks/fft2_three_probe.py --size seed --quick --no-torch --out /tmp/p.json   # lavapipe
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from experiments.fft2_three import kernel  # noqa: E402
from sweep import _numbers, parse_key  # noqa: E402
from torch_ceilings import load_torch, torch_ceiling  # noqa: E402

from vajra_tui.engine.candidate import Candidate  # noqa: E402
from vajra_tui.engine.gpu.client import GPUClient  # noqa: E402
from vajra_tui.engine.sources.library import LibrarySource  # noqa: E402
from vajra_tui.engine.session import Session  # noqa: E402
from vajra_tui.engine.workloads import WORKLOADS, get_workload  # noqa: E402
from vajra_tui.settings import TimingSettings  # noqa: E402

THREE = get_workload(str(ROOT / "benchmarks" / "experiments" / "fft2_three.py") + ":WORKLOAD")
# (regs, cols, ex) of the three-pass kernels, each with what it tests
THREE_CONFIGS = [
    ((32, 16, 1), "rows [16,16,16] x 2, columns [8,8] x 16: 128-byte runs"),
    ((32, 8, 1), "columns 8 a workgroup: 64-byte runs, 64 lanes"),
    ((8, 16, 1), "rows [8,8,8,8] x 2 (512 lanes each), columns [8,8] x 16"),
    ((64, 16, 1), "rows [64,64], columns one 64-point FFT per lane, 16 lanes"),
    ((32, 4, 1), "columns 4 a workgroup: 32-byte runs (the control for run length)"),
]
TWO_PASS = "fft2/regs regs=32 cols=8 ex=1 blk=0"  # the built-in's best (NOTES, #27)


async def _timed(client, workload, size, timing, cands: list[tuple[Candidate, str]], batches: int,
                 warm: bool = False, idle_s: float = 0.0) -> list[dict]:
    """Each kernel verified, then ``batches`` rotated batches beside the naive baseline; with
    ``warm`` one untimed batch first (conv1d's baseline is too short to bring the GPU's clocks up
    after the seconds of float64 verification: on a fresh H200 every kernel of the first
    batches ran 2.5-4x slow); ``idle_s``: the GPU left idle that long before every batch, to
    see whether the worker brings the clock up itself (telemetry's ``warmed_ms``)."""
    s = Session(workload, size, client, lambda e: None, timing)
    await s.start(calibrate=True)
    # the naive baseline runs first in every batch, as in sweep.py: its milliseconds bring the
    # GPU's clocks up (a batch of only sub-millisecond kernels ran at idle clocks, 5x slow)
    if not await s.admit(s.baseline_candidate()):
        raise RuntimeError(f"{workload.name} baseline: {s.results['baseline'].reason}")
    rows, ids = [], []
    for cand, why in cands:
        ok = await s.admit(cand)
        r = s.results[cand.id]
        rows.append({"key": cand.name, "hypothesis": why, "verified": bool(ok), "reason": r.reason[:300]})
        if ok:
            ids.append(cand.id)
    if warm and ids:
        await s.time_batch(["baseline", *ids])
    got: dict[str, list[float]] = {}
    passes: dict[str, list[list[float]]] = {}  # a multi-pass kernel's per-pass medians, batch by batch
    clocks: dict[str, list[float]] = {}  # the SM clock (NVML) as each kernel's batch began
    warmed: dict[str, list[float]] = {}  # ms the worker ran the batch untimed to bring the clock up
    for b in range(batches):
        order = ids[b % max(1, len(ids)):] + ids[:b % max(1, len(ids))]
        if idle_s:
            await asyncio.sleep(idle_s)
        await s.time_batch(["baseline", *order])
        for cid in order:
            if s.results[cid].median_ms:
                got.setdefault(cid, []).append(float(s.results[cid].median_ms))
            if s.results[cid].pass_ms:
                passes.setdefault(cid, []).append([float(v) for v in s.results[cid].pass_ms])
            tel = s.results[cid].telemetry
            if tel is not None and tel.first is not None and tel.first.sm_clock_mhz:
                clocks.setdefault(cid, []).append(float(tel.first.sm_clock_mhz))
                warmed.setdefault(cid, []).append(float(tel.warmed_ms))
    for (cand, _), row in zip(cands, rows):
        if cand.id in got:
            row.update(_numbers(got[cand.id], s.info, {}))
        if cand.id in passes:
            row["pass_ms"] = passes[cand.id]
        if cand.id in clocks:
            row["sm_clock_mhz"], row["warmed_ms"] = clocks[cand.id], warmed[cand.id]
    return rows


def _three(i: int, regs: int, cols: int, ex: int, size: dict) -> Candidate:
    name = f"fft2_three regs={regs} cols={cols} ex={ex}"
    return Candidate(id=f"t{i}", name=name, strategy="A", generation=1, params={}, origin="probe",
                     source=kernel({"regs": regs, "cols": cols, "ex": ex}, size))


async def main(args) -> dict:
    torch = None if args.no_torch else load_torch()
    client = GPUClient()
    device = client.start()
    timing = TimingSettings(warmup=2, reps=3) if args.quick else TimingSettings(warmup=5, reps=9)
    size = WORKLOADS["fft2"].size(args.size)
    began = time.perf_counter()
    lib = LibrarySource(client.device)
    two = lib.instantiate(parse_key(TWO_PASS), size, cid="two", name=TWO_PASS)
    report = {"device": device.model_dump(), "size": size,
              "two_pass": await _timed(client, WORKLOADS["fft2"], size, timing, [(two, "the built-in's best")],
                                       args.batches),
              "three_pass": await _timed(client, THREE, size, timing,
                                         [(_three(i, *c, size), why) for i, (c, why) in enumerate(THREE_CONFIGS)],
                                         args.batches)}
    ms = torch_ceiling(torch, "fft2", size) if torch is not None else None
    finish(report, report["two_pass"] + report["three_pass"], ms, began, client, args.out, "torch.fft.fft2")
    return report


def finish(report: dict, rows: list[dict], ms: float | None, began: float, client: GPUClient, out: str,
           label: str) -> None:
    """Put each row beside torch's ``ms``, print the rows, close the worker and write ``out``
    (shared by the probes, which differ only in what they time)."""
    report["torch_ms"] = ms
    for row in rows:
        if ms and row.get("median_ms"):
            row["vs_torch"] = ms / row["median_ms"]
        print(f"{row.get('median_ms') or 0:9.4f} ms x{row.get('vs_torch') or 0:.2f} torch  "
              f"{'ok ' if row['verified'] else 'BAD'} {row['key']} {row['reason'][:100]}", flush=True)
        if row.get("sm_clock_mhz") or row.get("batch_ms"):
            print(f"          batches {row.get('batch_ms')} at SM MHz {row.get('sm_clock_mhz')}, "
                  f"clock brought up in {row.get('warmed_ms')} ms")
        if row.get("pass_ms"):
            print("          passes " + " | ".join(" ".join(f"{v:.4f}" for v in b) for b in row["pass_ms"]))
    report["seconds"] = time.perf_counter() - began
    client.close()
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(report, indent=1, default=str))
    print(f"{report['device']['name']}: {label} {ms} ms; wrote {out}")


def probe_parser(doc: str, out_name: str, batches: int = 2) -> argparse.ArgumentParser:
    """The flags every probe takes (size, quick, no-torch, batches, out), shared by the probes."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--size", default="large")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--batches", type=int, default=batches)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / out_name))
    return ap


if __name__ == "__main__":
    ap = probe_parser(__doc__, "fft2-three.json")
    asyncio.run(main(ap.parse_args()))
