"""Do long runs grow? RSS and open fds of both processes, per 100 candidates.

One GPU worker for the whole soak, as in a long TUI session, and sessions that run
candidates through the real pipeline (sanitize, stitch, compile, verify on two seeds,
timed in interleaved batches beside the baseline, then released). Every batch also
carries two failing kernels (one rejected after it compiled, one compile error): a
model's runs are full of them, and their pipelines must be released too.

``--mode sweep`` (default) walks the library's configurations of each workload in a
fixed, shuffled order, ``--budget`` per batch, one long session per workload: every run
compiles the same kernels, so a before/after comparison compares like with like.
``--mode evolve`` runs library tunes instead (generation after generation until the
neighbourhood is exhausted), which is closer to a real tune but follows the measured
times, so two runs compile different kernels.

After every batch it samples the resident set size (VmRSS) and the open file
descriptors of this process and of the GPU worker (whichever process that is: the client
replaces a worker that grew, see ``VAJRA_WORKER_RECYCLE_MB``). Growth per 100 candidates
is the least-squares slope over the samples of the 300 candidates after the first
``--warm`` (drivers and JIT caches fill once), and over all of them. ``--trace`` adds the
main process's top allocation sites (tracemalloc) between the warm-up and the end; its
bookkeeping and the warm-up's snapshot count in the main process's RSS (a step of ~90 MB
with evolve's sgemm kernels), so the snapshot is taken at the warm-up's last sample and
sampled again at once, and growth is measured from that second sample: the step falls
before the window. Compare traced runs with traced runs all the same.
Each sample also records what the lexer's token caches hold (wgsl/lexer.py), when the
tree has that bound.

    .venv/bin/python benchmarks/soak.py --candidates 400
    .venv/bin/python benchmarks/soak.py --candidates 400 --label before --out /tmp/soak.json
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import re
import sys
import time
import tracemalloc
from itertools import product
from pathlib import Path

from vajra_tui.engine.candidate import Candidate
from vajra_tui.engine.gpu.client import GPUClient
from vajra_tui.engine.session import Session
from vajra_tui.engine.sources.library import LibrarySource, templates
from vajra_tui.engine.tune import Tuner
from vajra_tui.engine.workloads import get_workload
from vajra_tui.settings import TimingSettings

RESULTS = Path(__file__).parent / "results"
SIZES = {"sgemm": "64", "softmax": "64x256", "conv1d": "4096x64", "sobel": "64x64"}
TIMING = TimingSettings(warmup=1, reps=3, deadline_s=120)  # no timeouts from a busy CPU: they restart the worker
WINDOW = 300  # candidates over which growth is measured, after the warm-up


def rss_mb(pid: int | str = "self") -> float:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def fds(pid: int | str = "self") -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def failing(workload: str, tag: str) -> list[Candidate]:
    """A kernel that compiles and is wrong, and one that does not compile (distinct sources)."""
    w = get_workload(workload)
    head = f"// soak {tag}\n"
    out = w.output.name
    # every output off by 2.5: it compiles, runs and is rejected by verification
    wrong = re.sub(rf"\b{out}\[([^\]]+)\]\s*=\s*", rf"{out}[\1] = 2.5 + ", head + w.baseline, count=1)
    syntax = head + "@compute @workgroup_size(64)\nfn main() { let x = ; }\n"
    return [Candidate(id=f"bad-{tag}", name=f"bad-{tag}", strategy="user", origin="soak", source=wrong),
            Candidate(id=f"syn-{tag}", name=f"syn-{tag}", strategy="user", origin="soak", source=syntax)]


def sweep(workload: str, size: dict[str, int], device) -> list[tuple]:
    """Every usable library configuration of ``workload``, in a fixed shuffled order."""
    configs = []
    for t in templates(workload):
        for values in product(*t.axes.values()):
            p = dict(zip(t.axes, values))
            if t.usable(p, size, device):
                configs.append((t, t.complete(p)))
    random.Random(11).shuffle(configs)
    return configs


def slope(points: list[tuple[int, float]]) -> float | None:
    """Least-squares growth per 100 candidates."""
    if len(points) < 2:
        return None
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if sxx == 0:
        return None
    return 100 * sum((x - mx) * (y - my) for x, y in points) / sxx


class Soak:
    def __init__(self, target: int, budget: int, warm: int, trace: bool) -> None:
        self.target, self.budget, self.warm, self.trace = target, budget, warm, trace
        self.client = GPUClient()
        self.samples: list[dict] = []
        self.count = 0
        self.began = time.perf_counter()
        self.snap0 = None
        self.begin: int | None = None  # the first sample growth is measured from

    def sample(self, where: str) -> None:
        gc.collect()
        c = self.client
        self.samples.append({
            "candidates": self.count, "seconds": round(time.perf_counter() - self.began, 1),
            "main_rss_mb": round(rss_mb(), 2), "main_fds": fds(),
            "worker_rss_mb": round(rss_mb(c.pid), 2), "worker_fds": fds(c.pid),
            "worker_restarts": c.restarts, "worker_recycles": getattr(c, "recycles", 0),
            "worker_pid": c.pid, "lexer_kept_chars": _lexer_kept_chars(), "at": where})
        print(json.dumps(self.samples[-1]), file=sys.stderr, flush=True)
        if self.begin is None and self.count >= self.warm:
            if self.trace:  # the snapshot's own memory is a step, not growth: sample after it
                self.snap0 = tracemalloc.take_snapshot()
                self.begin = len(self.samples)
                self.sample(f"{where}, after the trace snapshot")
            else:
                self.begin = len(self.samples) - 1

    async def session(self, name: str, calibrate: bool) -> Session:
        w = get_workload(name)
        session = Session(w, w.size(SIZES[name]), self.client, lambda e: None, TIMING.model_copy())
        await session.start(calibrate=calibrate)
        await session.run_baseline(time=True)
        return session

    async def run_sweep(self) -> None:
        round_ = 0
        while self.count < self.target:
            round_ += 1
            for name in SIZES:
                if self.count >= self.target:
                    return
                session = await self.session(name, calibrate=self.count == 0)
                configs = sweep(name, session.size, self.client.device)
                library = LibrarySource(self.client.device)
                for batch, start in enumerate(range(0, len(configs), self.budget)):
                    if self.count >= self.target:
                        break
                    tag = f"{round_}.{name}.{batch}"
                    cands = [library.candidate(t, p, session.size, self.client.device, f"{tag}-{i}",
                                               f"{tag}-{i}", t.strategy, 2)
                             for i, (t, p) in enumerate(configs[start:start + self.budget])]
                    cands += failing(name, tag)
                    await session.evaluate(cands, generation=2)
                    self.count += len(cands)
                    self.sample(f"{name} round {round_} batch {batch}")
                del session

    async def run_evolve(self) -> None:
        round_ = 0
        while self.count < self.target:
            round_ += 1
            for name in SIZES:
                if self.count >= self.target:
                    return
                session = await self.session(name, calibrate=self.count == 0)
                tuner = Tuner(session, LibrarySource(self.client.device), failing(name, f"{round_}.1"),
                              budget=self.budget)
                await tuner.first_generation()
                base = self.count
                while base + len(session.results) - 1 < self.target:
                    before = len(session.results)
                    if not await tuner.source.evolve(tuner.context(), "Z"):
                        break  # the neighbourhood is exhausted: next workload
                    await session.evaluate(failing(name, f"{round_}.{tuner.generation + 1}"),
                                           generation=tuner.generation + 1)
                    await tuner.evolve()
                    if len(session.results) == before:
                        break
                    self.count = base + len(session.results) - 1  # the baseline is not a candidate
                    self.sample(f"{name} round {round_} gen {tuner.generation}")
                self.count = base + len(session.results) - 1
                del session, tuner

    async def run(self, mode: str) -> dict:
        device = self.client.start()
        self.sample("start")
        try:
            await (self.run_sweep() if mode == "sweep" else self.run_evolve())
        finally:
            top = []
            if self.trace and self.snap0 is not None:
                gc.collect()
                diff = tracemalloc.take_snapshot().compare_to(self.snap0, "lineno")
                top = [{"site": str(d.traceback), "kb": round(d.size_diff / 1024, 1)} for d in diff[:12]]
            self.client.close()
        every = self.samples[self.begin:] if self.begin is not None else []
        window = [s for s in every if s["candidates"] <= every[0]["candidates"] + WINDOW]
        return {
            "adapter": device.name, "software": device.software, "mode": mode, "candidates": self.count,
            "sizes": SIZES, "budget": self.budget, "timing": TIMING.model_dump(),
            "warm_candidates": self.warm,
            "window": [every[0]["candidates"], every[0]["candidates"] + WINDOW] if every else None,
            "seconds": round(time.perf_counter() - self.began, 1),
            "per_100_candidates": _growth(window),  # over the 300 candidates after the warm-up
            "per_100_candidates_all": _growth(every),  # over everything after the warm-up
            "peak_worker_rss_mb": max(s["worker_rss_mb"] for s in self.samples),
            "peak_main_rss_mb": max(s["main_rss_mb"] for s in self.samples),
            "worker_recycles": getattr(self.client, "recycles", 0), "worker_restarts": self.client.restarts,
            "first": self.samples[0], "last": self.samples[-1], "samples": self.samples,
            "main_top_growth": top,
        }


def _lexer_kept_chars() -> int | None:
    """Characters of source whose tokens this process keeps (None: a tree before the bound)."""
    from vajra_tui.engine.wgsl import lexer

    kept_size = getattr(lexer, "kept_size", None)
    return kept_size()[1] if kept_size else None


def _growth(samples: list[dict]) -> dict:
    return {key: _round(slope([(s["candidates"], s[key]) for s in samples]))
            for key in ("worker_rss_mb", "worker_fds", "main_rss_mb", "main_fds")}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--candidates", type=int, default=400)
    parser.add_argument("--mode", choices=["sweep", "evolve"], default="sweep")
    parser.add_argument("--budget", type=int, default=8, help="library candidates per batch")
    parser.add_argument("--warm", type=int, default=60, help="candidates before the slope is measured")
    parser.add_argument("--trace", action="store_true", help="tracemalloc the main process")
    parser.add_argument("--label", default="", help="a note stored with the result (e.g. before/after)")
    parser.add_argument("--out", type=Path, help="JSON file (default benchmarks/results/soak-<adapter>.json)")
    args = parser.parse_args()
    if args.trace:
        tracemalloc.start(8)
    result = asyncio.run(Soak(args.candidates, args.budget, args.warm, args.trace).run(args.mode))
    result["label"] = args.label
    slug = re.sub(r"[^a-z0-9]+", "-", result["adapter"].lower()).strip("-")[:40]
    out = args.out or RESULTS / f"soak-{slug}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    growth = result["per_100_candidates"]
    print(f"{result['candidates']} candidates ({result['mode']}) in {result['seconds']} s on {result['adapter']}")
    print(f"per 100 candidates: worker {growth['worker_rss_mb']} MB RSS, {growth['worker_fds']} fds; "
          f"main {growth['main_rss_mb']} MB RSS, {growth['main_fds']} fds; peak worker "
          f"{result['peak_worker_rss_mb']} MB, {result['worker_recycles']} recycles")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
