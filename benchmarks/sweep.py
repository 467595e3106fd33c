"""Sweep: explicit library configurations against the torch ceiling, in one process.

    python benchmarks/sweep.py --out results/sweep.json               # large sizes (H200)
    python benchmarks/sweep.py --sizes seed --quick --no-torch ...     # end to end on lavapipe

Per workload: one Session at the size, the naive baseline and every listed
configuration admitted (compiled, verified on two seeds), then all of them timed in
one batch beside the baseline (device timestamps where the adapter has them; every
timed dispatch checked), twice, in rotated order; then the torch ceiling in the same
process. A configuration that fails, hangs (the engine's watchdog kills the worker)
or is unusable at the size is recorded with its reason and the sweep goes on. The
JSON is rewritten after every workload, so a run cut short keeps what it measured.
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

from sweep_configs import CONFIGS  # noqa: E402
from torch_ceilings import CEILING_NAMES, load_torch, torch_ceiling as torch_ms, torch_copy_gbps  # noqa: E402

from vajra_tui.engine.gpu.client import GPUClient  # noqa: E402
from vajra_tui.engine.sources.library import LibrarySource, template  # noqa: E402
from vajra_tui.engine.session import Session  # noqa: E402
from vajra_tui.engine.workloads import WORKLOADS  # noqa: E402
from vajra_tui.settings import TimingSettings  # noqa: E402

MEMORY_BOUND = {"layernorm", "gemv", "softmax", "sobel"}


# ---- the engine -----------------------------------------------------------------------
def parse_key(key: str) -> dict:
    """'sgemm/vec4 bm=128 ...' -> params dict with its template."""
    name, *pairs = key.split()
    return {"template": name, **{a: int(v) for a, v in (p.split("=") for p in pairs)}}


async def sweep_one(client: GPUClient, name: str, spec: str, args, ceilings: dict) -> dict:
    w = WORKLOADS[name]
    size = w.size(spec)
    timing = TimingSettings(warmup=2, reps=3) if args.quick else TimingSettings(warmup=5, reps=9)
    notes: list[str] = []
    s = Session(w, size, client, lambda e: notes.append(e.message) if hasattr(e, "message") else None, timing)
    began = time.perf_counter()
    await s.start(calibrate=True)
    if not await s.admit(s.baseline_candidate()):
        raise RuntimeError(f"baseline failed: {s.results['baseline'].reason}")
    lib = LibrarySource(client.device)
    rows: list[dict] = []
    admitted: list[str] = []
    for i, (key, why) in enumerate(CONFIGS[name][:args.limit or None]):
        row = {"key": key, "hypothesis": why, "status": "skipped", "verified": None}
        rows.append(row)
        if time.perf_counter() - began > args.budget_s * 0.75:
            row["reason"] = "workload time budget spent before admission"
            continue
        params = parse_key(key)
        t = template(params["template"])
        cand = lib.instantiate(params, size, cid=f"k{i}", name=f"k{i}")
        if cand is None:
            row.update(status="unusable", reason=t.check(t.complete(params), size, client.device)
                       if t else "no such template")
            continue
        row["key"] = cand.params["key"]
        ok = await s.admit(cand)
        r = s.results[cand.id]
        row.update(verified=bool(ok), status="admitted" if ok else r.status, reason=r.reason[:300])
        if ok:
            admitted.append(cand.id)
    batches: dict[str, list[float]] = {}
    passes: dict[str, list[list[float]]] = {}  # a multi-pass kernel's own pass times, per batch
    for b in range(args.batches):
        ids = admitted[b % max(1, len(admitted)):] + admitted[:b % max(1, len(admitted))]
        await s.time_batch(["baseline", *ids])
        for cid in ["baseline", *ids]:
            r = s.results[cid]
            if r.status == "verified" and r.median_ms:
                batches.setdefault(cid, []).append(float(r.median_ms))
                if r.pass_ms:
                    passes.setdefault(cid, []).append([float(v) for v in r.pass_ms])
    info = s.info
    for i, row in enumerate(rows):
        cid = f"k{i}"
        if cid not in admitted:
            continue
        r = s.results[cid]
        if cid not in batches:
            row.update(status=r.status, verified=False, reason=r.reason[:300])
            continue
        row.update(_numbers(batches[cid], info, ceilings), status="verified", verified=True)
        if cid in passes:
            row["pass_ms"] = passes[cid]
    base = statistics.median(batches["baseline"]) if "baseline" in batches else None
    entry = {"workload": name, "size": size, "size_label": spec, "baseline_ms": base,
             "timing": s.results["baseline"].timing, "configs": rows, "notices": notes[-20:]}
    if args.torch is not None:
        ms = torch_ms(args.torch, name, size)
        entry["torch"] = {"name": CEILING_NAMES[name], "ms": ms, **(_numbers([ms], info, ceilings) if ms else {})}
        args.torch.cuda.empty_cache()
        for row in rows:
            if row.get("median_ms") and ms:
                row["vs_torch"] = ms / row["median_ms"]
    entry["seconds"] = time.perf_counter() - began
    return entry


def _numbers(medians: list[float], info, ceilings: dict) -> dict:
    ms = float(statistics.median(medians))
    out = {"median_ms": ms, "batch_ms": medians, "tflops": info.flops / (ms / 1e3) / 1e12,
           "gbps": info.min_bytes / (ms / 1e3) / 1e9}
    if ceilings.get("fma_gflops"):
        out["pct_fma"] = 100.0 * out["tflops"] * 1e3 / ceilings["fma_gflops"]
    if ceilings.get("copy_gbps"):
        out["pct_copy"] = 100.0 * out["gbps"] / ceilings["copy_gbps"]
    return out


async def main(args) -> dict:
    args.torch = None if args.no_torch else load_torch()
    client = GPUClient()
    device = client.start()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    report: dict = {"device": device.model_dump(), "sizes": args.sizes, "quick": args.quick,
                    "ceilings": {}, "entries": []}
    probe = Session(WORKLOADS["sobel"], WORKLOADS["sobel"].size("H=64,W=64"), client, lambda e: None)
    await probe.start()
    cal = probe.calibration
    torch_copy = torch_copy_gbps(args.torch) if args.torch is not None else None
    report["ceilings"] = {"copy_gbps_wgsl": cal.copy_gbps, "copy_gbps_torch": torch_copy,
                          "copy_gbps": max(cal.copy_gbps, torch_copy or 0.0),
                          "fma_gflops": cal.fma_gflops, "timing": cal.method}
    for name in args.workloads.split(","):
        t0 = time.perf_counter()
        try:
            entry = await asyncio.wait_for(sweep_one(client, name, args.sizes, args, report["ceilings"]),
                                           timeout=args.budget_s * 2.5)
        except Exception as exc:  # one workload failing must not lose the others
            entry = {"workload": name, "error": repr(exc)[:500], "seconds": time.perf_counter() - t0}
        report["entries"].append(entry)
        out.write_text(json.dumps(report, indent=1, default=str))
        print(table(entry, report["ceilings"]), flush=True)
    client.close()
    print(f"\n{device.name}: copy {cal.copy_gbps:.0f} GB/s WGSL, {torch_copy or 0:.0f} GB/s torch; "
          f"fma {cal.fma_gflops / 1e3:.1f} TFLOP/s; wrote {out}")
    return report


def table(e: dict, ceilings: dict) -> str:
    if "error" in e:
        return f"== {e['workload']}: ERROR {e['error'][:300]}"
    f = lambda v, p=3: "-" if v is None else f"{v:.{p}f}"  # noqa: E731
    tq = e.get("torch") or {}
    mem = e["workload"] in MEMORY_BOUND
    lines = [f"== {e['workload']} {e['size']} baseline {f(e['baseline_ms'])} ms; {tq.get('name', 'torch')} "
             f"{f(tq.get('ms'), 4)} ms = " + (f"{f(tq.get('gbps'), 0)} GB/s" if mem else
                                               f"{f(tq.get('tflops'), 2)} TFLOP/s") + f"; {e['seconds']:.0f} s"]
    for r in sorted(e["configs"], key=lambda r: r.get("median_ms") or 1e9):
        if r.get("median_ms"):
            rate = f"{f(r['gbps'], 0):>5s} GB/s {f(r.get('pct_copy'), 1):>5s}% copy" if mem else \
                f"{f(r['tflops'], 2):>6s} TF/s {f(r.get('pct_fma'), 1):>5s}% fma"
            lines.append(f"  {f(r['median_ms'], 4):>9s} ms {rate} x{f(r.get('vs_torch'), 2)} torch  {r['key']}")
            if r.get("pass_ms"):
                lines.append("             passes " + " | ".join(" ".join(f"{v:.4f}" for v in b) for b in r["pass_ms"]))
        else:
            lines.append(f"  {r['status']:>9s}    {r['key']}: {(r.get('reason') or '')[:120]}")
    return "\n".join(lines)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="large", help="a preset (large, seed) or a size spec")
    ap.add_argument("--quick", action="store_true", help="2 warm-ups, 3 reps (software adapters)")
    ap.add_argument("--workloads", default="sgemm,conv1d,layernorm,gemv")
    ap.add_argument("--batches", type=int, default=2, help="timing batches (rotated order) per workload")
    ap.add_argument("--budget-s", type=float, default=90.0, help="per workload: no admissions after 75%%")
    ap.add_argument("--limit", type=int, default=0, help="only the first N configurations per workload")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "sweep.json"))
    asyncio.run(main(ap.parse_args()))
