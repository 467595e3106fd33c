"""One library tune on one GPU, then on every GPU of this host (``tune --gpus all``).

    python benchmarks/multi_gpu.py --budget 128 --out benchmarks/results/nvidia-h200-x2.json
    bash benchmarks/run_multi_gpu.sh --budget 128      # the same on a device, both --shootout modes
    python benchmarks/multi_gpu.py --run all  --out X.json   # one half per call, if a call
    python benchmarks/multi_gpu.py --run one  --out X.json   # must stay short; X.json merges
    python benchmarks/multi_gpu.py --size 64 --generations 1 --budget 4 --gpus 0,0 --out /tmp/x.json  # lavapipe smoke

Each run is the CLI a user types (``vajra-tui tune -w W --source library --json``), in a
child process, timed by the wall clock around it: worker start, calibration, baseline,
every generation and the shoot-outs. What keeps the two runs comparable:

* the results cache is off (``--no-cache``), and the drivers' shader disk caches are off
  (``__GL_SHADER_DISK_CACHE=0``, ``MESA_SHADER_CACHE_DISABLE=true``), so the second run
  compiles every kernel again, as the first did;
* one untimed warm-up ``bench`` fills the roofline calibration cache before either run;
* the all-GPU run goes first, so whatever the OS keeps warm favours the one-GPU run:
  the speedup is, if anything, understated;
* both runs use the same ``--shootout`` mode (default ``last``: one shoot-out, after the
  last generation; ``every`` adds one per generation, on the first lane alone).

What does not shrink with more GPUs is paid once per run (~16 s on an H200 for sgemm 4096³:
the CLI, the worker, calibration, references, the baseline, A/B/C, the final shoot-out) and
once per generation (each lane times the 88 ms baseline beside its batch; the slowest lane
sets the pace), so the ratio approaches 2x only as the budget grows (NOTES.md).

The JSON: ``gpus``, ``one_gpu_seconds``, ``all_gpus_seconds``, ``speedup``,
``same_winner``, ``baseline_spread`` (max/min of the lanes' baseline medians), each
lane's baseline and NVML identity, ``vajra-tui devices --probe``'s mapping, and both
runs' rankings. It is written after each run, so a cut run still leaves the other.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NO_DISK_CACHES = {"__GL_SHADER_DISK_CACHE": "0", "MESA_SHADER_CACHE_DISABLE": "true"}


def _cli(args: list[str], timeout: float) -> tuple[float, dict[str, Any] | list[Any] | None, str]:
    """``vajra-tui ARGS`` in a child: (wall seconds, its JSON document, its stderr's tail)."""
    env = {**os.environ, **NO_DISK_CACHES, "XDG_RUNTIME_DIR": os.environ.get("XDG_RUNTIME_DIR", "/tmp"),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "vajra_tui.cli.main", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=ROOT, stdin=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
    try:
        doc = json.loads(proc.stdout) if proc.stdout.strip() else None
    except json.JSONDecodeError:
        doc = None
    if proc.returncode != 0:
        print(f"vajra-tui {' '.join(args[:3])} ... exit {proc.returncode}:\n{tail}", file=sys.stderr)
    return seconds, doc, tail


def _tune_args(a: argparse.Namespace) -> list[str]:
    return ["tune", "-w", a.workload, "--size", a.size, "--source", "library", "--generations",
            str(a.generations), "--budget", str(a.budget), "--shootout", a.shootout, "--no-cache", "--json", "-q"]


def _summary(doc: dict[str, Any] | None, seconds: float, command: list[str]) -> dict[str, Any]:
    """What one run says: its time, winner, ties, how much it measured, on which lanes."""
    if doc is None:
        return {"seconds": round(seconds, 2), "failed": True, "command": command}
    results = doc.get("results", [])
    base = next((r for r in results if r["name"] == "baseline"), {})
    return {
        "seconds": round(seconds, 2), "command": command, "winner": doc.get("winner"),
        "ties": doc.get("ties", []), "ranking": doc.get("ranking", [])[:10],
        "candidates": sum(1 for r in results if r["name"] != "baseline"),
        "verified": sum(1 for r in results if r["status"] == "verified" and r["name"] != "baseline"),
        "generations": doc.get("generations"), "baseline_ms": base.get("median_ms"),
        "winner_ms": next((r.get("median_ms") for r in results if r["name"] == doc.get("winner")), None),
        "device": doc.get("device"), "lanes": doc.get("lanes"), "baseline_spread": doc.get("baseline_spread"),
        "final_lane": doc.get("final_lane"),
    }


def _combine(out: dict[str, Any]) -> None:
    """The headline fields, once both runs are there."""
    one, every = out["runs"].get("one"), out["runs"].get("all")
    if not one or not every or one.get("failed") or every.get("failed"):
        return
    lanes = every.get("lanes") or []
    out.update({
        "gpus": len(lanes), "one_gpu_seconds": one["seconds"], "all_gpus_seconds": every["seconds"],
        "speedup": round(one["seconds"] / every["seconds"], 3) if every["seconds"] else None,
        "same_winner": bool(one["winner"] and one["winner"] == every["winner"]),
        # a swap inside a measured tie is noise, not a different answer: say which it was
        "winner_within_ties": bool(one["winner"] and (one["winner"] == every["winner"] or
                                                      every["winner"] in one["ties"] or
                                                      one["winner"] in every["ties"])),
        "baseline_spread": every.get("baseline_spread"),
        "per_adapter_baseline_ms": [{"label": lane["label"], "adapter_index": lane["adapter_index"],
                                     "nvml_index": lane.get("nvml_index"), "baseline_median_ms":
                                     lane["baseline_median_ms"], "baseline_medians_ms": lane["baseline_medians_ms"],
                                     "timed": lane["timed"]} for lane in lanes],
        "winner": {"one": one["winner"], "all": every["winner"]},
    })


def _write(path: Path, out: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(out, indent=2) + "\n")
    tmp.replace(path)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workload", "-w", default="sgemm")
    p.add_argument("--size", default="large")
    p.add_argument("--generations", type=int, default=3, help="evolution rounds after A/B/C")
    p.add_argument("--budget", type=int, default=24, help="candidates per evolution round")
    p.add_argument("--shootout", choices=["every", "last"], default="last",
                   help="both runs: re-time the finalists after every generation, or after the last only")
    p.add_argument("--gpus", default="all", help="the lanes of the all-GPU run (0,0 on a one-adapter host)")
    p.add_argument("--run", choices=["both", "all", "one"], default="both")
    p.add_argument("--timeout", type=float, default=540.0, help="seconds one run may take")
    p.add_argument("--out", type=Path, required=True)
    a = p.parse_args(argv)
    out: dict[str, Any] = json.loads(a.out.read_text()) if a.out.exists() else {}
    out.setdefault("runs", {})
    out.update({"workload": a.workload, "size": a.size, "generations": a.generations, "budget": a.budget,
                "shootout": a.shootout, "source": "library", "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "notes": "wall time of the whole CLI run in a child process; results cache and driver "
                         "shader disk caches off; calibration cache warmed first; all-GPU run first"})
    if "devices" not in out:
        _, devices, _ = _cli(["devices", "--json", "--probe"], 300)
        out["devices"] = [{k: d.get(k) for k in ("index", "name", "backend", "driver", "software", "nvml")}
                          for d in devices or []]
    # untimed, in every call (a fresh machine has an empty cache): fills the calibration cache
    _cli(["bench", "-w", a.workload, "--size", a.size, "--reps", "1", "--warmup", "1", "-q", "--json",
          "--no-cache"], a.timeout)
    for which in (["all", "one"] if a.run == "both" else [a.run]):
        command = _tune_args(a) + (["--gpus", a.gpus] if which == "all" else [])
        if which == "one" and out["runs"].get("all", {}).get("lanes"):  # the first lane's adapter
            command += ["--adapter", str(out["runs"]["all"]["lanes"][0]["adapter_index"])]
        print(f"timing the {which}-GPU run: vajra-tui {' '.join(command)}", file=sys.stderr)
        seconds, doc, _ = _cli(command, a.timeout)
        out["runs"][which] = _summary(doc if isinstance(doc, dict) else None, seconds, command)
        print(f"  {seconds:.1f} s, winner {out['runs'][which].get('winner')}", file=sys.stderr)
        _combine(out)
        _write(a.out, out)
    keys = ("gpus", "one_gpu_seconds", "all_gpus_seconds", "speedup", "same_winner", "winner_within_ties",
            "baseline_spread")
    print(json.dumps({k: out.get(k) for k in keys}, indent=2))
    ran = ["all", "one"] if a.run == "both" else [a.run]
    return 1 if any(out["runs"].get(w, {}).get("failed") for w in ran) else 0


if __name__ == "__main__":
    sys.exit(main())
