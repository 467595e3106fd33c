"""`vajra-tui` entry point: the TUI by default, plus headless subcommands for scripts and CI."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from . import __version__
from .settings import Settings, config_path, load_settings

EXIT_USAGE = 2


class UsageError(Exception):
    """Bad input from the user: one line on stderr, exit status 2."""


def _timing_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workload", "-w", required=True, help="sgemm | softmax | conv1d | sobel")
    p.add_argument("--size", help="seed (default), large, or e.g. 2048 / 4096x1024 / M=64,N=32,K=16")
    p.add_argument("--warmup", type=int, help="warm-up dispatches per kernel (default 5)")
    p.add_argument("--reps", type=int, help="timed dispatches per kernel (default 9)")
    p.add_argument("--deadline", type=float, help="seconds a dispatch may run before it is killed")
    p.add_argument("--timing", choices=["auto", "wall"], help="auto: device timestamps where available")
    p.add_argument("--cache", choices=["warm", "cold"],
                   help="GPU caches between timed dispatches (default warm; cold flushes L2)")
    p.add_argument("--resume", action="store_true",
                   help="skip kernels already measured on this device with these settings")
    p.add_argument("--no-cache", dest="no_cache", action="store_true",
                   help="neither read nor write the measured-results cache")
    p.add_argument("--adapter", help="use the adapter whose name contains this text")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of a table")
    p.add_argument("--record", type=Path, help="record the session's events to this JSONL file")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vajra-tui", description=__doc__)
    parser.add_argument("--version", action="version", version=f"vajra-tui {__version__}")
    parser.add_argument("--workload", "-w", help="workload to preselect in the TUI")
    parser.add_argument("--size", help="size to preselect in the TUI")
    parser.add_argument("--source", choices=["library", "llm", "auto"], default="auto")
    parser.add_argument("--record", type=Path, help="where to record the TUI session")
    parser.add_argument("--adapter", help="use the adapter whose name contains this text")
    parser.add_argument("--kernel", "-k", action="append", default=[], type=Path,
                        help="also measure this WGSL file in generation 1 (repeatable)")
    sub = parser.add_subparsers(dest="command")

    sub.add_parser("devices", help="list the adapters wgpu sees").add_argument("--json", action="store_true")

    bench = sub.add_parser("bench", help="compile, verify and time the baseline and your kernels")
    _timing_args(bench)
    bench.add_argument("--kernel", "-k", action="append", default=[], type=Path,
                       help="a candidate WGSL file (repeatable)")
    bench.add_argument("--show-source", action="store_true", help="print each stitched source")

    tune = sub.add_parser("tune", help="baseline, strategies A/B/C, then evolution")
    _timing_args(tune)
    tune.add_argument("--source", choices=["library", "llm", "auto"], default="auto")
    tune.add_argument("--generations", type=int, default=2, help="evolution rounds after A/B/C")
    tune.add_argument("--budget", type=int, default=6, help="candidates per offline evolution round")
    tune.add_argument("--kernel", "-k", action="append", default=[], type=Path)
    tune.add_argument("--export", type=Path, help="export the winner into this directory")

    replay = sub.add_parser("replay", help="replay a recorded session in the TUI")
    replay.add_argument("file", type=Path)
    replay.add_argument("--speed", type=float, default=1.0, help="playback speed (0: instant)")
    replay.add_argument("--headless", action="store_true", help="print the recorded results instead")
    replay.add_argument("--json", action="store_true")

    export = sub.add_parser("export", help="export a recorded session's winner (WGSL, TS, lockfile)")
    export.add_argument("recording", type=Path)
    export.add_argument("--out", "-o", type=Path, default=Path("vajra-export"))
    export.add_argument("--kernel", help="export this kernel (name or id) instead of the winner")
    export.add_argument("--force", action="store_true", help="overwrite existing files")

    config = sub.add_parser("config", help="settings")
    config.add_argument("action", choices=["path", "show"])

    lock = sub.add_parser("lock", help="lockfiles")
    lock_sub = lock.add_subparsers(dest="lock_command", required=True)
    merge = lock_sub.add_parser("merge", help="merge lockfiles from several machines")
    merge.add_argument("files", nargs="+", type=Path)
    merge.add_argument("--out", "-o", type=Path, default=Path("vajra.lock.json"))
    merge.add_argument("--force", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    settings = load_settings()
    try:
        return _dispatch(args, settings)
    except UsageError as exc:
        print(f"vajra-tui: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


def _dispatch(args: argparse.Namespace, settings: Settings) -> int:
    from . import commands

    if args.command is None:
        return commands.tui(args, settings)
    if args.command == "config":
        if args.action == "path":
            print(config_path())
        else:
            print(json.dumps(json.loads(settings.model_dump_json()), indent=2))
        return 0
    handler = getattr(commands, args.command)
    result = handler(args, settings)
    return asyncio.run(result) if asyncio.iscoroutine(result) else result


if __name__ == "__main__":
    sys.exit(main())
