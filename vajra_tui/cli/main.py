"""`vajra-tui` entry point: the TUI by default, plus headless subcommands for scripts and CI."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
from pathlib import Path

from vajra_tui import __version__
from vajra_tui.cli import interrupts
from vajra_tui.cli.args import OneLineParser, UsageError, int_at_least, positive_seconds, speed
from vajra_tui.safe_text import clean, one_line
from vajra_tui.engine.workloads import timed_import
from vajra_tui.settings import MAX_REPS, MAX_WARMUP, Settings, config_path, load_settings

EXIT_USAGE = 2
EXIT_PIPE = 141  # what a shell reports for a program its reader left (128 + SIGPIPE)
# Commands that run with a broken config: the ones a user reaches for to find and fix it.
NO_SETTINGS = {"doctor", "completion", "setup-node", "new-workload"}


def _workload_help() -> str:
    """``-w``'s help, naming every registered workload: a list written by hand left out the
    ones added since (attention, fft, fft2). Read from the registry's metadata, nothing imported."""
    from vajra_tui.engine.workloads.loader import entry_point_names

    return (f"a name ({', '.join(entry_point_names())}, or one from your workloads folder), "
            "a .py file, or package.module:ATTR")


def _timing_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workload", "-w", required=True, help=_workload_help())
    p.add_argument("--size", help="seed (default), large, or e.g. 2048 / 4096x1024 / M=64,N=32,K=16")
    p.add_argument("--warmup", type=int_at_least(0, MAX_WARMUP),
                   help=f"warm-up dispatches per kernel (default 5, at most {MAX_WARMUP})")
    p.add_argument("--reps", type=int_at_least(1, MAX_REPS),
                   help=f"timed dispatches per kernel (default 9, at most {MAX_REPS})")
    p.add_argument("--deadline", type=positive_seconds,
                   help="seconds a dispatch may run before it is killed (default: the larger of 10 s "
                        "(30 s on a software adapter) and 20x the baseline)")
    p.add_argument("--timing", choices=["auto", "wall"], help="auto: device timestamps where available")
    p.add_argument("--cache", choices=["warm", "cold"],
                   help="GPU caches between timed dispatches (default warm; cold flushes L2)")
    p.add_argument("--resume", action="store_true",
                   help="skip kernels already measured on this device with these settings")
    p.add_argument("--no-cache", dest="no_cache", action="store_true",
                   help="neither read nor write the measured-results cache")
    p.add_argument("--adapter", help="the adapter's index (see 'vajra-tui devices') or a name it alone "
                                     "contains; no match, or several, is an error")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of a table")
    p.add_argument("--record", type=Path, help="record the session's events to this JSONL file")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    p.add_argument("--csv", type=Path, help="also write the results as CSV to this new file")
    p.add_argument("--limits", choices=["portable", "adapter"],
                   help="crown only kernels inside WebGPU's default limits (portable, the default: 256 "
                        "invocations, 16 KiB workgroup storage ...), or within this adapter's own")
    p.add_argument("--feature", dest="features", action="append", default=[],
                   choices=["shader-f16", "subgroups"],
                   help="an optional WebGPU feature a portable kernel may use (repeatable)")


class _Parser(OneLineParser):
    """argparse quotes the offending argument in its errors: printed without control codes,
    in one line (OneLineParser raises UsageError instead of printing the usage block)."""

    def error(self, message: str):  # type: ignore[override]
        super().error(clean(message))


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="vajra-tui", description=__doc__)
    parser.add_argument("--version", action="version", version=f"vajra-tui {__version__}")
    parser.add_argument("--workload", "-w", help="workload to preselect in the TUI")
    parser.add_argument("--size", help="size to preselect in the TUI")
    parser.add_argument("--source", choices=["library", "llm", "auto"], default="auto")
    parser.add_argument("--record", type=Path, help="where to record the TUI session")
    parser.add_argument("--adapter", help="the adapter's index (see 'vajra-tui devices') or a name "
                                          "it alone contains")
    parser.add_argument("--kernel", "-k", action="append", default=[], type=Path,
                        help="also measure this WGSL file in generation 1 (repeatable)")
    parser.add_argument("--gpus", metavar="all|N|i,j", help="one GPU worker per adapter (see tune --gpus)")
    sub = parser.add_subparsers(dest="command")

    devices = sub.add_parser("devices", help="list the adapters wgpu sees, by index")
    devices.add_argument("--json", action="store_true")
    devices.add_argument("--probe", action="store_true",
                         help="tell which NVML GPU each NVIDIA adapter is (a busy kernel, ~1 s each)")

    bench = sub.add_parser("bench", help="compile, verify and time the baseline and your kernels")
    _timing_args(bench)
    bench.add_argument("--kernel", "-k", action="append", default=[], type=Path,
                       help="a candidate WGSL file (repeatable)")
    bench.add_argument("--show-source", action="store_true", help="print each stitched source")

    tune = sub.add_parser("tune", help="baseline, strategies A/B/C, then evolution")
    _timing_args(tune)
    tune.add_argument("--source", choices=["library", "llm", "auto", "params"], default="auto",
                      help="params: search the // tune: overrides of the --kernel files (Optuna past --budget)")
    tune.add_argument("--generations", type=int_at_least(0), default=2, help="evolution rounds after A/B/C")
    tune.add_argument("--budget", type=int_at_least(1),
                      help="candidates per offline evolution round (default 6, or budget in the config); "
                           "with --source params, configurations in all")
    tune.add_argument("--shootout", choices=["every", "last"], default="every",
                      help="re-time the finalists beside one baseline sample after every generation "
                           "(default), or only after the last: earlier generations are then ranked "
                           "by each kernel's ratio to its own batch's baseline")
    tune.add_argument("--kernel", "-k", action="append", default=[], type=Path)
    tune.add_argument("--export", type=Path, help="export the winner into this directory")
    tune.add_argument("--export-baseline", action="store_true",
                      help="with --export: when no candidate beat the baseline, export the baseline "
                           "(the verified kernel that won) instead of writing nothing")
    tune.add_argument("--gpus", metavar="all|N|i,j",
                      help="one worker per adapter: all (every adapter of the --adapter one's model), "
                           "the first N of them, or these indices (0,0: two workers on adapter 0); "
                           "each batch is timed on one adapter, the shoot-out on the first")
    from vajra_tui.cli.fleet import add_fleet_parser, add_ray_arguments
    add_ray_arguments(tune)
    add_fleet_parser(sub)

    replay = sub.add_parser("replay", help="replay a recorded session in the TUI")
    replay.add_argument("file", type=Path, nargs="?",
                        help="a recording, or the name of a shipped one (see --list)")
    replay.add_argument("--list", action="store_true", help="list the recordings shipped with Vajra")
    replay.add_argument("--speed", type=speed, default=1.0, help="playback speed (0: instant)")
    replay.add_argument("--headless", action="store_true", help="print the recorded results instead")
    replay.add_argument("--json", action="store_true")
    replay.add_argument("--csv", type=Path, help="also write the recorded results as CSV to this new file")

    export = sub.add_parser("export", help="export a recorded session's winner (WGSL, TS, lockfile)")
    export.add_argument("recording", type=Path)
    export.add_argument("--out", "-o", type=Path, default=Path("vajra-export"),
                        help="directory to write into (default: ./vajra-export)")
    export.add_argument("--kernel", help="export this kernel (name or id) instead of the winner")
    export.add_argument("--force", action="store_true", help="overwrite existing files")

    config = sub.add_parser("config", help="settings")
    config.add_argument("action", choices=["path", "show"])

    lock = sub.add_parser("lock", help="lockfiles")
    lock_sub = lock.add_subparsers(dest="lock_command", required=True)
    from vajra_tui.cli.lock_merge import add_merge_parser
    add_merge_parser(lock_sub)
    diff = lock_sub.add_parser("diff", help="two lockfiles side by side: two devices, or two runs")
    diff.add_argument("a", type=Path, help="the first lockfile (A)")
    diff.add_argument("b", type=Path, help="the second lockfile (B)")
    diff.add_argument("--json", action="store_true")

    doctor = sub.add_parser("doctor", help="what works here: adapters, timestamps, Node/Dawn, Ray, NVML, paths")
    doctor.add_argument("--json", action="store_true")
    setup_node = sub.add_parser("setup-node", help="install the browser (Tint/Dawn) check into the user cache")
    setup_node.add_argument("--timeout", type=positive_seconds, default=300.0,
                            help="give up after this many seconds (default 300)")
    scaffold = sub.add_parser("new-workload", help="write a workload file from a kernel's bindings and "
                                                   "entry points, for you to complete")
    scaffold.add_argument("kernels", nargs="+", type=Path, metavar="kernel.wgsl",
                          help="the kernel (more files: the modules of further passes)")
    scaffold.add_argument("--out", "-o", type=Path, help="the new workload file (default: beside the "
                                                         "first kernel, named after it, .py)")
    scaffold.add_argument("--name", help="the workload's name (default: the first kernel's file name)")
    completion = sub.add_parser("completion", help="print a shell completion script (shtab)")
    completion.add_argument("shell", choices=["bash", "zsh", "tcsh"])
    _file_completion(parser)
    return parser


def _file_completion(parser: argparse.ArgumentParser) -> None:
    """Path arguments complete as file names in the shells (shtab reads ``.complete``)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _file_completion(sub)
        elif action.type is Path:
            action.complete = {"bash": "_shtab_compgen_files", "zsh": "_files", "tcsh": "f"}  # type: ignore[attr-defined]
        elif "--workload" in action.option_strings:  # a name, or a workload file: both are offered
            action.complete = {"bash": "_vajra_tui_workloads_or_files", "zsh": _zsh_workloads()}  # type: ignore[attr-defined]


def _workload_names() -> list[str]:
    """Every workload name ``-w`` takes by name, read without importing any workload."""
    from vajra_tui.engine.workloads.loader import entry_point_names, folder_names

    return sorted({*entry_point_names(), *folder_names()})


def _zsh_workloads() -> str:
    """zsh: the names, and ``.py`` files (with the folders on the way to them); ``_arguments``
    splits a spec at its colons, so those of the action are escaped."""
    return (f"{{_alternative 'names\\:workload\\:({' '.join(_workload_names())})' "
            "'files\\:workload file\\:_files -g \\*.py'}")


def _completion_preamble() -> dict[str, str]:
    """The bash functions ``-w`` completes through: the workload names as words, then ``.py``
    files and folders (``-w`` takes a file too). shtab turns on bash's filename handling (a
    folder gets its ``/``) for a function whose name holds ``_files``."""
    return {"bash": f'_vajra_tui_workloads() {{ compgen -W "{" ".join(_workload_names())}" -- "$1"; }}\n'
                    '_vajra_tui_workloads_or_files() {\n'
                    '  _vajra_tui_workloads "$1"\n'
                    '  compgen -f -X \'!*.py\' -- "$1"\n'
                    '  compgen -d -- "$1"\n'
                    '}\n'}


def main(argv: list[str] | None = None) -> int:
    from vajra_tui.engine.errors import VajraError
    from vajra_tui.runtime_env import ensure_runtime_dir

    ensure_runtime_dir()  # before any driver loads: an unset one made Mesa print errors
    args: argparse.Namespace | None = None
    try:
        args = _parse(sys.argv[1:] if argv is None else list(argv))
        if args.command == "config" and args.action == "path":
            print(config_path())  # never reads the file: it is how a user finds a broken one
            # on stderr, so `$(vajra-tui config path)` stays the file: the picker's own folder
            print(f"workloads folder: {one_line(config_path().parent / 'workloads')} "
                  "(its *.py files appear in the TUI's picker)", file=sys.stderr)
            return 0
        with _json_guard(args):  # --json: a broken config, fleet, doctor, lock diff too
            settings = None if args.command in NO_SETTINGS else load_settings()
            if settings is not None:  # a workload file's import is bounded as its functions are
                timed_import.set_deadline(settings.timing.prepare_deadline_s)
            with interrupts.sigterm_as_ctrl_c(args):
                return _dispatch(args, settings)
    except VajraError as exc:  # every failure meant for the user: one line, its own exit status
        print(f"vajra-tui: {exc.prefix}{one_line(exc)}", file=sys.stderr)  # messages quote paths: data
        return exc.exit_status
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM passed on as it (cli/interrupts.py)
        kept = args is not None and args.command in ("tune", "bench") and not args.no_cache
        line, status = interrupts.interrupted_line(kept)
        print(f"vajra-tui: {line}", file=sys.stderr)
        return status
    except BrokenPipeError:  # the reader left early (`| head`): no traceback, as a shell tool
        _stdout_gone()
        return EXIT_PIPE


def _parse(argv: list[str]) -> argparse.Namespace:
    """The flags; a usage error with ``--json`` among the words leaves its JSON document too
    (a script that asked for JSON parses stdout whatever went wrong), and still exits 2."""
    try:
        return build_parser().parse_args(argv)
    except UsageError:
        with _json_guard(argparse.Namespace(json=_asks_json(argv))):
            raise


def _asks_json(argv: list[str]) -> bool:
    """Whether ``--json`` (or an abbreviation argparse takes for it) is among the flags."""
    words = argv[: argv.index("--")] if "--" in argv else argv
    return any(len(w) > 3 and "--json".startswith(w) for w in words)


def _json_guard(args: argparse.Namespace) -> contextlib.AbstractContextManager[object]:
    """``commands.json_errors`` when ``--json`` was asked for (imported only then), else nothing."""
    if not getattr(args, "json", False):
        return contextlib.nullcontext()
    from vajra_tui.cli.commands import json_errors

    return json_errors(args)


def _stdout_gone() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no file descriptor behind stdout (an embedding): nothing to flush
        pass


def _recording_path(path: Path) -> Path:
    """A recording given by path, or by the name of a shipped one (``lavapipe-sgemm``)."""
    from vajra_tui.shipped import find_shipped

    return find_shipped(path) or path if not path.exists() else path


def _dispatch(args: argparse.Namespace, settings: Settings) -> int:
    if args.command == "new-workload":  # reads WGSL only: never the GPU stack
        from vajra_tui.cli.scaffold import new_workload
        return new_workload(args)
    from vajra_tui.cli import commands

    if args.command is None:
        return commands.tui(args, settings)
    if args.command == "config":
        print(json.dumps(json.loads(settings.model_dump_json()), indent=2))
        return 0
    if args.command == "doctor":
        from vajra_tui.cli.doctor import doctor
        return doctor(args)
    if args.command == "setup-node":
        return commands.setup_node(args, settings)
    if args.command == "completion":
        import shtab
        print(shtab.complete(build_parser(), shell=args.shell, preamble=_completion_preamble()))
        return 0
    if args.command == "replay":
        from vajra_tui.shipped import shipped_recordings

        if args.list:
            for path in shipped_recordings():
                print(one_line(path))
            return 0
        if args.file is None:
            raise UsageError("replay needs a recording file (vajra-tui replay --list names the shipped ones)")
        args.file = _recording_path(args.file)
    if args.command == "export":
        args.recording = _recording_path(args.recording)
    if args.command == "fleet":
        from vajra_tui.cli.fleet import fleet
        return asyncio.run(fleet(args, settings))
    if args.command == "lock" and args.lock_command == "diff":
        from vajra_tui.cli.lock_diff import lock_diff
        return lock_diff(args)
    if args.command == "lock" and args.lock_command == "merge":
        from vajra_tui.cli.lock_merge import lock_merge
        return lock_merge(args)
    handler = getattr(commands, args.command)
    result = handler(args, settings)
    return asyncio.run(result) if asyncio.iscoroutine(result) else result


if __name__ == "__main__":
    sys.exit(main())
