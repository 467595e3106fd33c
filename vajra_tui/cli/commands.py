"""The headless subcommands. Each returns an exit status; bad input raises UsageError.

``bench`` and ``tune`` describe their run as a :class:`RunRequest` and hand it to the
engine's one builder; what is left here is reading the flags and printing the report.
Every :class:`~vajra_tui.engine.errors.VajraError` is answered once, by ``cli.main``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import textwrap
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from vajra_tui import fmt
from vajra_tui.cli.args import UsageError
from vajra_tui.cli.devices import lanes_for, print_lanes
from vajra_tui.cli.interrupts import opens_the_tui, what_ended_it
from vajra_tui.cli.options import adapter_flag, timing_for
from vajra_tui.cli.progress import progress_sink
from vajra_tui.cli.render import print_table
from vajra_tui.cli.tables import terminal_width
from vajra_tui.engine.errors import VajraError
from vajra_tui.engine.events import CandidateResult, Event
from vajra_tui.engine.run.builder import Placement, Run, RunRequest, build_run, export_into, export_result
from vajra_tui.engine.run.kernels import user_kernels
from vajra_tui.engine.run.output_paths import check_distinct, check_new_file
from vajra_tui.engine.run.report import Report, recorded_report
from vajra_tui.engine.store import damage
from vajra_tui.engine.store.record import RecordedRun, Recording
from vajra_tui.safe_text import clean, one_line
from vajra_tui.settings import Settings, cache_dir


def _placement(args: argparse.Namespace) -> Placement:
    if getattr(args, "ray", None):  # one pinned actor per adapter of the cluster (cli/fleet.py)
        from vajra_tui.cli.fleet import ray_lanes_for

        return Placement(lanes=ray_lanes_for(args))
    return Placement(adapter=args.adapter, gpus=getattr(args, "gpus", None))


def run_request(args: argparse.Namespace, settings: Settings, mode: str) -> RunRequest:
    """The flags of ``bench`` or ``tune`` as the engine's request (kernels read, checked, now)."""
    tuning = mode == "tune"
    return RunRequest(
        workload=args.workload, size=args.size, kernels=user_kernels(getattr(args, "kernel", [])), mode=mode,
        source=args.source if tuning else "library", generations=getattr(args, "generations", 0),
        budget=getattr(args, "budget", None) or settings.budget, shootouts=getattr(args, "shootout", "every"),
        timing=timing_for(args, settings), llm=settings.llm, tavily=settings.tavily,
        cache=None if getattr(args, "no_cache", False) else cache_dir(), resume=getattr(args, "resume", False),
        record=args.record, export=getattr(args, "export", None),
        limits=getattr(args, "limits", None) or settings.limits, features=tuple(getattr(args, "features", ())))


def _sinks(args: argparse.Namespace) -> tuple[Callable[[Event], None], Any]:
    """A bar on a terminal, lines in a pipe, nothing with --quiet; and what must close it."""
    progress = None if args.quiet else progress_sink()
    return (progress or (lambda event: None)), progress


def _build(args: argparse.Namespace, settings: Settings, mode: str) -> tuple[Run, Any]:
    check_csv(getattr(args, "csv", None), args.record, getattr(args, "export", None))
    request = run_request(args, settings, mode)
    emit, progress = _sinks(args)
    with adapter_flag(args):
        request.placement = _placement(args)
        return build_run(request, emit), progress


async def _close(run: Run, progress: Any) -> None:
    if progress is not None and hasattr(progress, "close"):
        progress.close()
    recorded = await run.aclose()
    if recorded is not None and recorded.suffix != ".partial":  # a stopped one is said by its warning
        print(f"recorded {one_line(recorded)}", file=sys.stderr)
    for problem in damage.take():  # a damaged cache folder: what to remove, once
        print(f"vajra-tui: warning: {problem}", file=sys.stderr)


def _finish(args: argparse.Namespace, run: Run, report: Report) -> int:
    return _print_report(args, report, list(run.session.seeds), timed_on=run.session.fresh_seed)


def _print_report(args: argparse.Namespace, report: Report, seeds: list[int], timed_on: int | None = None,
                  extra: dict[str, Any] | None = None) -> int:
    """Print the table or the JSON document (the same one the API's Report gives); a replay
    prints its recording's report the same way (``extra``: what only a replay says)."""
    unwritten = save_csv(args.csv, report) if getattr(args, "csv", None) else None
    doc = {**report.to_json(), **(extra or {})}
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        _print_tables(report, doc, seeds, timed_on)
    problem = unwritten if unwritten is not None else report.export_error or None
    if problem is not None:  # the report is out first: a full disk loses the CSV or the export, not the run
        error = UsageError(problem)
        raise mark_told(error) if args.json else error  # the report was the one JSON document
    return 0


def _print_tables(report: Report, doc: dict, seeds: list[int], timed_on: int | None = None) -> None:
    """The human form of the report: table, headline, roofline and seeds (and the run's own
    seed, whose inputs the kernels were timed on, where it is known), lanes."""
    print_table(report.device, report.workload, report.in_standing_order(),
                report.winner.id if report.winner else None, final_batch=report.final_batch)
    if report.headline:  # wrapped at the terminal's width, as the table is
        batch = f"; every speedup divides the baseline of batch {report.final_batch}" if report.final_batch else ""
        print(textwrap.fill(clean(f"{report.headline}{batch}"), terminal_width()))
    if report.calibration:
        c = report.calibration
        roofline = (f"roofline: copy {c.copy_gbps:.1f} GB/s, FMA {c.fma_gflops:.1f} GFLOP/s, "
                    f"launch floor {fmt.ms(c.launch_floor_ms)} ({c.method})")
        seeds = f"seeds {seeds}" + (f", timed on seed {timed_on} (drawn for this run)" if timed_on is not None else "")
        print(textwrap.fill(f"{roofline}; {seeds}", terminal_width()))  # at 80 columns: two lines
    if report.lanes:
        print_lanes(doc)


class _Failing:
    """What a failed command had done: the results a ``--json`` error document holds, and
    whether a document was printed already (a run cut short prints its own)."""

    def __init__(self) -> None:
        self.results: Callable[[], Iterable[CandidateResult]] = lambda: ()
        self.printed = False


@contextmanager
def json_errors(args: argparse.Namespace) -> Iterator[_Failing]:
    """``--json``: every failure meant for the user still leaves one JSON document on stdout,
    ``{"error": ..., "winner": null, "results": [...]}`` (a script parses stdout whatever
    happened), beside the one stderr line and exit status that ``cli.main`` gives it.

    Nested (``cli.main`` wraps every command in one; ``bench`` and ``tune`` add their results
    in their own), the innermost answers and the error is marked told, so stdout holds one
    document."""
    failing = _Failing()
    _INTERRUPT_TOLD.clear()  # every guard of a command opens before anything can interrupt it
    try:
        yield failing
    except VajraError as exc:
        if getattr(args, "json", False) and not failing.printed and not told_in_json(exc):
            _error_document(exc.user_message(), failing)
        if getattr(args, "json", False):
            mark_told(exc)
        raise
    except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl-C or SIGTERM (cli/interrupts.py)
        if getattr(args, "json", False) and not failing.printed and not _INTERRUPT_TOLD:
            _error_document(f"{what_ended_it()} before the command finished", failing, incomplete=what_ended_it())
            _INTERRUPT_TOLD.append(True)  # the outer guard in cli.main sees asyncio's KeyboardInterrupt
        raise


_INTERRUPT_TOLD: list[bool] = []  # an interrupted command prints one document, however deep its guards


def _error_document(message: str, failing: _Failing, **extra: str) -> None:
    """The one JSON document of a command that failed: its error and the results it had."""
    from vajra_tui.engine.run.report import result_dict

    results = [result_dict(r) for r in failing.results()]
    print(json.dumps({"error": message, "winner": None, "results": results, **extra}, indent=2), flush=True)


def mark_told(exc: VajraError) -> VajraError:
    """Mark ``exc`` as answered by a JSON document already on stdout (the report, or its error)."""
    setattr(exc, "json_told", True)
    return exc


def told_in_json(exc: BaseException) -> bool:
    return bool(getattr(exc, "json_told", False))


def _show_sources(args: argparse.Namespace, results: Iterable[CandidateResult]) -> None:
    """``--show-source``: each kernel as it ran (stitched), or as written when it never got
    that far; a rejected baseline is when its source is wanted most."""
    if not getattr(args, "show_source", False):
        return
    for r in results:
        text = r.stitched_source or r.source
        what = "" if r.stitched_source else ", as written: it was not stitched"
        print(clean(f"// ===== {r.name} (sha256 {r.source_sha256 or '-'}{what}) =====\n{text}"), file=sys.stderr)


async def bench(args: argparse.Namespace, settings: Settings) -> int:
    with json_errors(args) as failing:
        run, progress = _build(args, settings, "bench")
        failing.results = lambda: run.session.results.values()
        try:
            report = await run.bench()
        except VajraError:
            _show_sources(args, run.session.results.values())
            raise
        finally:
            await _close(run, progress)
    _show_sources(args, report.results)
    return _finish(args, run, report)


async def tune(args: argparse.Namespace, settings: Settings) -> int:
    from vajra_tui.engine.scale.lanes import LanesLost

    with json_errors(args) as failing:
        if getattr(args, "export_baseline", False) and args.export is None:  # said before any tuning
            raise UsageError("--export-baseline needs --export DIR")
        run, progress = _build(args, settings, "tune")
        failing.results = lambda: run.session.results.values()
        lost: LanesLost | None = None
        try:
            report = await run.tune()
            await _export_baseline(args, run, report)  # before close(): the --export folder is still claimed
        except LanesLost as exc:  # every lane lost: what finished is still shown, then the error
            lost = exc
        finally:
            await _close(run, progress)
        if lost is not None:
            if lost.report is not None:
                _partial(args, run, lost.report, lost.user_message())
                failing.printed = True  # its document says `incomplete`
            raise lost
    for path in report.exported:
        print(f"wrote {one_line(path)}", file=sys.stderr)
    if args.export is not None and report.winner is None and not report.exported:  # said, never silent
        print(f"vajra-tui: {report.headline or 'no winner'}: nothing exported to {one_line(args.export)} "
              "(--export-baseline exports the baseline then; vajra-tui export RECORDING --kernel NAME "
              "any verified kernel of a --record)", file=sys.stderr)
    return _finish(args, run, report)


async def _export_baseline(args: argparse.Namespace, run: Run, report: Report) -> None:
    """``--export-baseline``: when nothing beat the baseline, the baseline is what won, so it
    is what gets exported (a verified one only; the engine never exports anything else), and
    a browser judges it first, as it judges a crowned kernel."""
    if args.export is None or report.winner is not None or not getattr(args, "export_baseline", False):
        return
    at = next((i for i, r in enumerate(report.results) if r.id == "baseline" and r.status == "verified"), None)
    if at is not None:
        report.results[at] = await run.session.check_browser("baseline")  # its verdict on every surface
        export_into(report, report.results[at], args.export)  # as a crowned kernel is


def _partial(args: argparse.Namespace, run: Run, report: Report, why: str) -> None:
    """A run cut short: the finished generations' table or JSON (marked ``incomplete``)."""
    if args.json:
        print(json.dumps({**report.to_json(), "incomplete": why}, indent=2))
        return
    _finish(args, run, report)
    print(clean(f"incomplete: {why}"))


def _recorded(path: Path) -> tuple[Recording, RecordedRun]:
    """A recording and its outcome, folded as it streams (memory does not grow with its length)."""
    recording = Recording(path)  # a RecordingError is a usage error: one line, exit 2
    run = RecordedRun(recording)
    note = recording.cut_note or recording.interrupted_note  # a cut mid-line says where, in one line
    if note:
        print(f"vajra-tui: warning: {recording.shown}: {note}", file=sys.stderr)
    return recording, run


def replay(args: argparse.Namespace, settings: Settings) -> int:
    """The TUI on a terminal; headless with ``--headless``/``--json``, or when stdout is no terminal."""
    if opens_the_tui(args):
        from vajra_tui.tui.app import run_app  # a bad file fails there, in one line, before the UI starts

        return run_app(settings, replay=args.file, speed=args.speed)
    with json_errors(args):
        check_csv(args.csv)
        recording, rec = _recorded(args.file)
        if rec.device is None or rec.workload is None:
            raise UsageError(f"{recording.shown}: the recording stops before its session started")
        label = str(recording.header.get("label", "")) if isinstance(recording.header, dict) else ""
        report = recorded_report(rec, "bench" if label.startswith("bench") else "tune")
    # no end of run recorded (kill -9, Ctrl-C, a failed run): said on stderr, and in the document
    timed_on = rec.timed_seed if rec.timed_seed not in (None, *rec.seeds) else None  # older runs timed on seed 1
    return _print_report(args, report, rec.seeds, extra={"interrupted": True} if recording.interrupted else None,
                         timed_on=timed_on)


def export(args: argparse.Namespace, settings: Settings) -> int:
    _, rec = _recorded(args.recording)
    result = rec.winner
    if args.kernel:
        result = next((r for r in rec.results.values() if args.kernel in (r.id, r.name)), None)
        if result is None:
            raise UsageError(f"no kernel {one_line(args.kernel)!r} in {one_line(args.recording)}")
    if args.kernel and result is not None and result.status != "verified":
        why = f": {one_line(result.reason, 120)}" if result.reason else ""
        raise UsageError(f"{one_line(result.name)} is {result.status}{why}; only a verified kernel is exported")
    if result is None or result.status != "verified":
        raise UsageError(f"{one_line(args.recording)} has no verified winner to export")
    print(f"exporting {one_line(result.name)} to {one_line(args.out.absolute())}", file=sys.stderr)
    timed_seed = rec.timed_seed if rec.timed_seed not in (None, *rec.seeds) else None  # older runs: seed 1
    for path in export_result(result, rec.device, rec.workload, args.out, args.force, limits=rec.limits,
                              seeds=rec.seeds, timed_seed=timed_seed):
        print(f"wrote {one_line(path)}", file=sys.stderr)
    return 0


def check_csv(path: Path | None, record: Path | None = None, export: Path | None = None) -> None:
    """Before the run: a --csv file is new, never one of the user's overwritten, and not the
    run's recording or one of the files its export writes."""
    if path is None:
        return
    check_distinct([("--csv", path), ("--record", record)], ("--export", export))
    check_new_file(path, "CSV", "--csv", folder_must_exist=True)  # an OutputPathError is a usage error


def save_csv(path: Path, report: Report) -> str | None:
    """Write the --csv file (atomically: nothing half-written); the one-line reason it could
    not be written (a full disk, a folder gone), or None."""
    from vajra_tui.cli.tables import write_csv

    try:
        write_csv(path, report.results, report.device, report.workload)
    except FileExistsError:
        return f"--csv {one_line(path)}: not written: a file appeared there during the run (it is kept)"
    except OSError as exc:
        return f"--csv {one_line(path)}: not written: {exc.strerror or exc}"
    print(f"wrote {one_line(path)}", file=sys.stderr)
    return None


def lock(args: argparse.Namespace, settings: Settings) -> int:
    """``lock merge`` (cli/lock_merge.py: its output checked first, conflicts told)."""
    from vajra_tui.cli.lock_merge import lock_merge

    return lock_merge(args)


def devices(args: argparse.Namespace, settings: Settings) -> int:
    from vajra_tui.cli.devices import devices as list_devices

    with json_errors(args):
        return list_devices(args)


def tui(args: argparse.Namespace, settings: Settings) -> int:
    from vajra_tui.tui.app import run_app

    adapter = args.adapter
    if args.gpus:  # checked before the UI starts: one line, exit 2
        lanes_for(args)
    elif adapter is not None and adapter.strip():
        adapter = str(lanes_for(args)[0].adapter_index)
    return run_app(settings, workload=args.workload, size=args.size, source=args.source,
                   record=args.record, adapter=adapter, kernels=args.kernel or None, gpus=args.gpus)


def setup_node(args: argparse.Namespace, settings: Settings | None) -> int:
    """``vajra-tui setup-node``: 0 when the browser check is ready, 1 when it could not be installed."""
    from vajra_tui.engine.browser.sidecar import setup_node as install

    def say(text: str) -> None:
        print(f"setup-node: {text}", file=sys.stderr, flush=True)

    ok, message = install(args.timeout, say)
    say(message)
    return 0 if ok else 1
