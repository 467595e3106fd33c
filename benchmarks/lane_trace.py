"""Where one ``vajra-tui tune`` spends its wall time: every worker request on a timeline.

    python benchmarks/lane_trace.py --out trace.json -- tune -w sgemm --size large \\
        --source library --generations 3 --budget 24 --no-cache --gpus all

Runs the CLI in this process with every worker request (``GPUClient.call``), worker start
and adapter listing timed from the parent, each generation's start and verdict stamped,
and the event loop's own thread profiled (cProfile sees only that thread, which is what
stays serial however many lanes there are). Prints a per-phase table; the JSON keeps
the whole timeline. Used to find what stayed serial in issue #14's two-GPU run.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from vajra_tui.engine.gpu import adapters as adapters_module
from vajra_tui.engine.gpu import client as client_module
from vajra_tui.engine.gpu.protocol import Compiled
from vajra_tui.engine.scale import local as local_module
from vajra_tui.engine.session import Session

T0 = time.perf_counter()
SPANS: list[dict[str, Any]] = []
MARKS: list[dict[str, Any]] = []
LOCK = threading.Lock()


def _now() -> float:
    return round(time.perf_counter() - T0, 4)


def _span(kind: str, label: str, began: float, **extra: Any) -> None:
    with LOCK:
        SPANS.append({"kind": kind, "label": label, "t0": began, "t1": _now(), **extra})


def _instrument() -> None:
    call, start = client_module.GPUClient.request_blocking, client_module.GPUClient.start
    listing = adapters_module.list_adapters

    def timed_call(self: Any, request: Any, timeout: float) -> Any:
        began, reply = _now(), None
        try:
            reply = call(self, request, timeout)
            return reply
        finally:
            n = len(getattr(request, "items", None) or getattr(request, "cids", None) or []) or None
            built = reply.built if isinstance(reply, Compiled) else None
            _span(request.op, getattr(self, "label", "") or "lane", began, n=n, built=built)

    def timed_start(self: Any) -> Any:
        began = _now()
        try:
            return start(self)
        finally:
            _span("worker_start", getattr(self, "label", "") or "lane", began)

    def timed_list(*args: Any, **kwargs: Any) -> Any:
        began = _now()
        try:
            return listing(*args, **kwargs)
        finally:
            _span("list_adapters" + ("+probe" if (kwargs.get("probe") or (args and args[0])) else ""),
                  "main", began)

    client_module.GPUClient.request_blocking = timed_call  # type: ignore[method-assign]
    client_module.GPUClient.start = timed_start  # type: ignore[method-assign]
    adapters_module.list_adapters = timed_list  # type: ignore[assignment]
    local_module.list_adapters = timed_list  # type: ignore[attr-defined]
    emit = Session.emit

    def marked_emit(self: Session, event: Any) -> None:
        kind = type(event).__name__
        if kind in ("SessionStarted", "GenerationStarted", "RankingReady", "CalibrationReady"):
            MARKS.append({"event": kind, "t": _now(), "generation": getattr(event, "generation", None),
                          "label": getattr(self.client, "label", "")})
        emit(self, event)

    Session.emit = marked_emit  # type: ignore[method-assign]


def _phases(wall: float) -> list[tuple[str, float, float]]:
    """(what, start, end) for the run's top-level phases, from the marks."""
    gens = [m for m in MARKS if m["event"] == "GenerationStarted"]
    ranks = [m for m in MARKS if m["event"] == "RankingReady"]
    first = next((m["t"] for m in MARKS if m["event"] == "SessionStarted"), wall)
    rows = [("before the session (CLI, adapters, workers)", 0.0, first)]
    rows.append(("calibration, prepare, baseline", first, gens[0]["t"] if gens else wall))
    for g in gens:
        end = next((r["t"] for r in ranks if r["generation"] == g["generation"] and r["t"] >= g["t"]), wall)
        rows.append((f"generation {g['generation']}", g["t"], end))
    return rows


def _summary(wall: float) -> dict[str, Any]:
    ops: dict[str, dict[str, float]] = defaultdict(lambda: {"count": 0, "seconds": 0.0})
    for s in SPANS:
        key = f"{s['label']}:{s['kind']}"
        ops[key]["count"] += 1
        ops[key]["seconds"] = round(ops[key]["seconds"] + s["t1"] - s["t0"], 4)
        if s.get("built"):  # a compile whose pipeline had to be built (not found kept or prebuilt-known)
            ops[key]["built"] = ops[key].get("built", 0) + 1
    return {"wall_s": round(wall, 3), "phases": [{"what": w, "t0": a, "t1": b} for w, a, b in _phases(wall)],
            "ops": dict(sorted(ops.items())), "marks": MARKS, "spans": SPANS}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--top", type=int, default=30, help="functions of the main thread's profile to keep")
    p.add_argument("cli", nargs=argparse.REMAINDER, help="-- then the vajra-tui arguments")
    a = p.parse_args(argv)
    cli_args = a.cli[1:] if a.cli[:1] == ["--"] else a.cli
    _instrument()
    from vajra_tui.cli.main import main as cli_main

    profile = cProfile.Profile()
    began = time.perf_counter()
    profile.enable()
    try:
        code = cli_main(cli_args)
    finally:
        profile.disable()
    wall = time.perf_counter() - began
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(a.top)
    out = _summary(wall)
    out.update({"argv": cli_args, "exit": code, "main_thread_profile": text.getvalue()})
    a.out.write_text(json.dumps(out, indent=1) + "\n")
    for what, t0, t1 in _phases(wall):
        print(f"{what:<48}{t0:8.2f} {t1:8.2f} {t1 - t0:8.2f} s", file=sys.stderr)
    for key, op in out["ops"].items():
        print(f"  {key:<36}{op['count']:6d} {op['seconds']:9.2f} s", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
