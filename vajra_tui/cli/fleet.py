"""``tune --ray`` and ``vajra-tui fleet``: the adapters of a Ray cluster from the command line.

Ray is optional: without it both say ``pip install 'ray>=2.60'`` (or ``pipx inject``) in one line (exit 2),
as does a cluster that cannot be reached. The engine side is ``engine/scale/`` (actors,
discovery, the fleet's tunes); this module only parses, prints and writes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable

from vajra_tui.cli.args import UsageError, int_at_least, positive_seconds
from vajra_tui.safe_text import clean, one_line
from vajra_tui.settings import MAX_REPS, MAX_WARMUP

RAY_HELP = ("a Ray cluster: auto (the running one), HOST:PORT, ray://HOST:PORT, or local (start one "
            "here); one worker per adapter of every node, each pinned to its node")
BACKENDS_HELP = ("which wgpu backends count as devices, e.g. vulkan,gl (default: each node's native "
                 "hardware backend; software-only nodes use their first Vulkan adapter)")


# ---- arguments ---------------------------------------------------------------------------
def add_ray_arguments(p: argparse.ArgumentParser, default: str | None = None) -> None:
    p.add_argument("--ray", metavar="auto|ADDRESS", default=default, help=RAY_HELP)
    p.add_argument("--backends", metavar="LIST", help=BACKENDS_HELP)


def add_fleet_parser(sub: Any) -> None:
    """``fleet``: the tune of ``tune --ray``, once per device model, one merged lockfile."""
    p = sub.add_parser("fleet", help="the same tune on each device model of a Ray cluster; "
                                     "one merged lockfile and a side-by-side table")
    p.add_argument("--workload", "-w", required=True, help="as for tune")
    p.add_argument("--size", help="as for tune (default: seed)")
    p.add_argument("--warmup", type=int_at_least(0, MAX_WARMUP),
                   help=f"warm-up dispatches per kernel (at most {MAX_WARMUP})")
    p.add_argument("--reps", type=int_at_least(1, MAX_REPS), help=f"timed dispatches per kernel (at most {MAX_REPS})")
    p.add_argument("--deadline", type=positive_seconds, help="seconds a dispatch may run before it is killed")
    p.add_argument("--source", choices=["library", "llm", "auto"], default="library")
    p.add_argument("--generations", type=int_at_least(0), default=2, help="evolution rounds after A/B/C")
    p.add_argument("--budget", type=int_at_least(1),
                   help="candidates per evolution round (default 6, or budget in the config)")
    p.add_argument("--out", "-o", type=Path, default=Path("vajra.lock.json"),
                   help="the merged lockfile (default ./vajra.lock.json)")
    p.add_argument("--force", action="store_true", help="overwrite --out")
    p.add_argument("--json", action="store_true", help="print the comparison as one JSON document")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    add_ray_arguments(p, default="auto")


# ---- Ray lanes for tune --ray ----------------------------------------------------------------
def _connected(address: str) -> Any:
    from vajra_tui.engine.scale.ray_cluster import RayUnavailable, connect

    try:
        ray, _ = connect(address)  # Ray's own atexit hook disconnects
    except RayUnavailable as exc:
        raise UsageError(str(exc)) from None
    return ray


def _discovered(args: argparse.Namespace) -> tuple[Any, dict[str, list[Any]]]:
    """The cluster's adapters by device model; nodes that could not list theirs said on stderr."""
    from vajra_tui.engine.scale.ray_cluster import backends_from, by_model, discover

    ray = _connected(args.ray)
    adapters, problems = discover(ray, backends_from(getattr(args, "backends", None)))
    for line in problems:
        print(f"vajra-tui: warning: {one_line(line)}", file=sys.stderr)
    if not adapters:
        raise UsageError(f"--ray {args.ray}: no adapter found on any node of the cluster")
    return ray, by_model(adapters)


def ray_lanes_for(args: argparse.Namespace) -> list[Any]:
    """``tune --ray``: one lane per adapter of one device model (the largest group, or the
    one ``--adapter NAME`` names); other models are said, and left to ``fleet``."""
    from vajra_tui.engine.scale.ray_cluster import build_lanes, labels

    if getattr(args, "gpus", None):
        raise UsageError("--gpus and --ray: choose one (--ray uses every adapter of the cluster)")
    ray, groups = _discovered(args)
    if args.adapter:
        groups = {m: g for m, g in groups.items() if args.adapter.lower() in m.lower()}
        if not groups:
            raise UsageError(f"--adapter {args.adapter!r}: no device model of the cluster matches")
    model, chosen = next(iter(groups.items()))
    names = labels(chosen)
    print(clean(f"ray: {len(chosen)} lane(s) on {model}: {', '.join(names)}"), file=sys.stderr)
    for other, group in list(groups.items())[1:]:
        print(clean(f"ray: left out {len(group)} adapter(s) of {other} (vajra-tui fleet tunes each model)"),
              file=sys.stderr)
    return build_lanes(ray, chosen, names)


# ---- fleet -------------------------------------------------------------------------------------
def _progress(quiet: bool) -> Callable[[str], Callable[[Any], None]]:
    """Per model, the progress printer's lines prefixed with the model (the tunes interleave)."""
    from vajra_tui.cli.render import ProgressPrinter

    class Prefixed(ProgressPrinter):
        def __init__(self, prefix: str) -> None:
            super().__init__(sys.stderr)
            self.prefix = prefix

        def _say(self, text: str) -> None:
            super()._say(f"[{self.prefix}] {text}")

    return (lambda model: (lambda event: None)) if quiet else (lambda model: Prefixed(model))


def _check_out(args: argparse.Namespace) -> None:
    from vajra_tui.engine.run.output_paths import OutputPathError, check_new_file, check_writable_folder

    try:
        if args.force and args.out.is_file():
            check_writable_folder(args.out.parent, "lockfile")
        else:
            check_new_file(args.out, "lockfile", "--out")
    except OutputPathError as exc:
        raise UsageError(f"{exc}{'' if args.force else '; pass --force to overwrite'}") from None


async def fleet(args: argparse.Namespace, settings: Any) -> int:
    """Tune each device model of the cluster, write the merged lockfile, print the comparison."""
    from vajra_tui.cli.options import timing_for
    from vajra_tui.engine.export.lockfile import dump_lock
    from vajra_tui.engine.run.builder import RunRequest
    from vajra_tui.engine.scale.fleet import comparison, fleet_lock, run_fleet
    from vajra_tui.engine.scale.ray_cluster import build_lanes, labels
    from vajra_tui.engine.store.atomic import atomic_write
    from vajra_tui.engine.workloads import get_workload
    from vajra_tui.settings import cache_dir

    workload = get_workload(args.workload)
    size = workload.size(args.size)  # a bad size is a usage error before the cluster is asked
    request = RunRequest(workload=workload, size=size, source=args.source, generations=args.generations,
                         budget=args.budget or settings.budget, timing=timing_for(args, settings), llm=settings.llm,
                         cache=cache_dir())
    if request.source == "llm" and settings.llm.api_key() is None:
        raise UsageError(f"--source llm needs an API key in ${settings.llm.api_key_env}")
    _check_out(args)
    ray, groups = _discovered(args)
    lanes = {model: build_lanes(ray, group, labels(group)) for model, group in groups.items()}
    try:
        outcomes = await run_fleet(lanes, request, _progress(args.quiet))
    finally:
        for group in lanes.values():
            for lane in group:
                lane.close()
    lock = fleet_lock(outcomes)
    atomic_write(args.out, dump_lock(lock))
    print(f"wrote {one_line(args.out)} ({len(lock['entries'])} device(s))", file=sys.stderr)
    doc = {**comparison(outcomes), "lockfile": str(args.out), "workload": workload.name,
           "size": dict(size)}
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        print_comparison(doc)
    return 0 if lock["entries"] else 1


def print_comparison(doc: dict[str, Any]) -> None:
    """Devices side by side: one column per device model, one row per measure."""
    from vajra_tui.cli.console import Console
    from rich.table import Table
    from rich.text import Text

    from vajra_tui import fmt

    rows = doc["devices"]
    table = Table(title=Text(clean(f"{doc['workload']} {'x'.join(str(v) for v in doc['size'].values())} "
                                   "across the fleet")))
    table.add_column("")
    for r in rows:
        table.add_column(Text(clean(r["model"])), justify="right")

    def line(name: str, cell: Callable[[dict[str, Any]], str]) -> None:
        table.add_row(name, *(Text(clean(cell(r))) for r in rows))

    line("lanes", lambda r: ", ".join(r["lanes"]))
    line("baseline", lambda r: fmt.ms(r["baseline_ms"]) if r["baseline_ms"] else "-")
    line("winner", lambda r: r["winner"] or ("(baseline)" if r["baseline_ms"] else "-"))
    line("winner median", lambda r: fmt.ms(r["winner_ms"]) if r["winner_ms"] else "-")
    line("speedup", lambda r: f"{r['speedup']:.2f}x" if r["speedup"] else "-")
    line("GFLOP/s", lambda r: f"{r['gflops']:.1f}" if r["gflops"] else "-")
    line("roofline", lambda r: f"{r['pct_of_roofline']:.0f}%" if r["pct_of_roofline"] else "-")
    line("lane spread", lambda r: f"{r['baseline_spread']:.3f}x" if r["baseline_spread"] else "-")
    line("kernel", lambda r: (r["kernel_sha256"] or "-")[:12])
    line("error", lambda r: one_line(r["error"] or "-", 60))
    Console(highlight=False).print(table)
    fastest = doc["fastest_device"]
    print(clean(f"fastest: {fastest or '-'}; {doc['distinct_winners']} distinct kernel(s) ship across "
                f"{len(rows)} device model(s); lockfile {doc['lockfile']}"))
