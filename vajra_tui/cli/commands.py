"""The headless subcommands. Each returns an exit status; bad input raises UsageError."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable

from vajra_tui.cli.main import UsageError
from vajra_tui.engine.candidate import Candidate
from vajra_tui.cli.devices import lanes_for, print_lanes
from vajra_tui.engine.events import Event
from vajra_tui.engine.gpu.client import WorkerCrashed, WorkerError, WorkerTimeout
from vajra_tui.engine.store import damage
from vajra_tui.engine.run.kernel_file import KernelFileError, read_kernel_file
from vajra_tui.engine.run.output_paths import OutputPathError, check_export_folder, check_new_file
from vajra_tui.engine.store.record import Recorder, RecordedRun, Recording, RecordingError
from vajra_tui.engine.session import BaselineError, Session, WorkloadUnsupported
from vajra_tui.engine.workloads import SizeError, UnknownWorkload, WorkloadError, get_workload
from vajra_tui.cli.progress import progress_sink
from vajra_tui.cli.render import ProgressPrinter, document, print_table
from vajra_tui.safe_text import clean, one_line
from vajra_tui.settings import Settings, TimingSettings, cache_dir
from vajra_tui import fmt


def _fanout(sinks: list[Callable[[Event], None]]) -> Callable[[Event], None]:
    def emit(event: Event) -> None:
        for sink in sinks:
            sink(event)
    return emit


def _resolve(args: argparse.Namespace):
    try:
        workload = get_workload(args.workload)
        return workload, workload.size(args.size)
    except (UnknownWorkload, SizeError, WorkloadError) as exc:
        raise UsageError(str(exc)) from None


def _timing(args: argparse.Namespace, settings: Settings) -> TimingSettings:
    t = settings.timing.model_copy()
    for name, field in (("warmup", "warmup"), ("reps", "reps"), ("deadline", "deadline_s")):
        value = getattr(args, name, None)
        if value is not None:
            if value < (1 if name == "reps" else 0):
                raise UsageError(f"--{name} must be {'at least 1' if name == 'reps' else 'non-negative'}")
            setattr(t, field, value)
    if getattr(args, "timing", None):
        t.method = args.timing
    if getattr(args, "cache", None):
        t.cache = args.cache
    return t


def _user_kernels(paths: list[Path]) -> list[Candidate]:
    out, seen = [], set()
    for index, path in enumerate(paths):
        try:  # a regular UTF-8 file of at most 1 MB, BOM stripped
            text = read_kernel_file(path)
        except KernelFileError as exc:
            raise UsageError(str(exc)) from None
        name = path.stem
        while name in seen or name == "baseline":
            name += "'"
        seen.add(name)
        out.append(Candidate(id=f"user{index}", name=name, strategy="user",
                             origin=f"file: {path}", source=text))
    return out


def _recorder(path: Path | None, label: str) -> Recorder | None:
    if path is None:
        return None
    try:  # before the run: never a traceback (or a lost run) over a path that cannot be written
        check_new_file(path)
        return Recorder(path, label)
    except (OutputPathError, RecordingError) as exc:
        raise UsageError(str(exc)) from None


class _Run:
    """Shared plumbing of bench and tune: sinks, worker, recorder, clean shutdown."""

    def __init__(self, args: argparse.Namespace, settings: Settings, mode: str) -> None:
        self.workload, self.size = _resolve(args)
        self.kernels = _user_kernels(getattr(args, "kernel", []))
        if getattr(args, "export", None) is not None:  # checked now, not after an hour of tuning
            try:
                check_export_folder(args.export, [f"{self.workload.name}.wgsl", f"{self.workload.name}.ts"])
            except OutputPathError as exc:
                raise UsageError(str(exc)) from None
        check_csv(getattr(args, "csv", None))
        self.recorder = _recorder(args.record, f"{mode} {self.workload.name}")
        sinks: list[Callable[[Event], None]] = []
        self.progress = None if args.quiet else progress_sink()  # a bar on a terminal, lines in a pipe
        if self.progress is not None:
            sinks.append(self.progress)
        if self.recorder:
            sinks.append(self.recorder)
        if getattr(args, "ray", None):  # one pinned actor per adapter of the cluster (fleet_command.py)
            from vajra_tui.cli.fleet import ray_lanes_for
            self.lanes = ray_lanes_for(args)
        else:
            self.lanes = lanes_for(args)  # --adapter / --gpus resolved here: a bad choice is one line, exit 2
        self.client = self.lanes[0]
        self.session = Session(self.workload, self.size, self.client, _fanout(sinks),
                               _timing(args, settings), source_mode=mode,
                               results_cache=None if getattr(args, "no_cache", False) else cache_dir(),
                               resume=getattr(args, "resume", False))

    def close(self) -> None:
        if self.progress is not None and hasattr(self.progress, "close"):
            self.progress.close()
        for lane in self.lanes:
            lane.close()
        if self.recorder:
            path = self.recorder.close()
            print(f"recorded {one_line(path)}", file=sys.stderr)
        for problem in damage.take():  # a damaged cache folder: what to remove, once
            print(f"vajra-tui: warning: {problem}", file=sys.stderr)


def _finish(args: argparse.Namespace, run: _Run, results: list, winner: Any,
            extra: dict[str, Any] | None = None) -> int:
    """Print the table or the JSON; ``winner`` is the crowned result (None: no crown)."""
    s = run.session
    verdict = s.last_ranking
    summary = {"winner": winner.name if winner else None,
               "headline": verdict.headline if verdict else "",
               "ties": [r.name for r in verdict.ties] if verdict else [],
               "baseline_won": bool(verdict and verdict.baseline_won),
               "final_batch": s.results["baseline"].batch if "baseline" in s.results else None}
    if getattr(args, "csv", None):
        save_csv(args.csv, results, s.device, s.info)
    if args.json:
        doc = document(s.device, s.info, results, s.calibration, {**summary, **(extra or {})})
        print(json.dumps(doc, indent=2))
    else:
        print_table(s.device, s.info, ranked_first(results), winner.id if winner else None)
        if verdict:
            print(clean(f"{verdict.headline}; every speedup divides the baseline of batch "
                        f"{summary['final_batch']}"))
        if s.calibration:
            c = s.calibration
            print(f"roofline: copy {c.copy_gbps:.1f} GB/s, FMA {c.fma_gflops:.1f} GFLOP/s, "
                  f"launch floor {fmt.ms(c.launch_floor_ms)} ({c.method}); seeds {list(s.seeds)}")
        if extra and "lanes" in extra:
            print_lanes(extra)
    return 0


def ranked_first(results: list) -> list:
    """For reading: verified kernels fastest first with the baseline in its place, then the rest."""
    from vajra_tui.engine.timing.ranking import rank

    order = rank(results).ranked
    return order + [r for r in results if r not in order]


async def bench(args: argparse.Namespace, settings: Settings) -> int:
    run = _Run(args, settings, "bench")
    try:
        await run.session.start()
        await run.session.run_baseline(time=False)
        await run.session.evaluate(run.kernels)
        verdict = run.session.standings(1)
        best = next((r for r in verdict.ranked if r.id != "baseline"), None)
        if best is not None:  # the user's fastest kernel gets its badge, crowned or not
            await run.session.check_browser(best.id)
    except RUN_ERRORS as exc:
        return _run_failed(exc)
    except WorkloadError as exc:  # what the workload's own functions returned: its file, one line
        raise UsageError(str(exc)) from None
    finally:
        run.close()
    s = run.session
    results = [s.results["baseline"], *[s.results[k.id] for k in run.kernels]]
    if args.show_source:
        for r in results:
            print(clean(f"// ===== {r.name} (sha256 {r.source_sha256}) =====\n{r.stitched_source}"),
                  file=sys.stderr)
    return _finish(args, run, results, verdict.winner)


async def tune(args: argparse.Namespace, settings: Settings) -> int:
    from vajra_tui.engine.sources.llm.grounding import Grounding
    from vajra_tui.engine.sources.library import LibrarySource
    from vajra_tui.engine.sources.llm.client import NemotronSource
    from vajra_tui.engine.tune import Tuner

    run = _Run(args, settings, args.source)
    llm = None
    params = _params(run, args) if args.source == "params" else None
    if args.source in ("llm", "auto"):
        llm = NemotronSource(settings.llm, run.session.emit)
        if not llm.configured:
            if args.source == "llm":
                run.close()
                raise UsageError(f"--source llm needs an API key in ${settings.llm.api_key_env}")
            llm = None
    grounding = Grounding(settings.tavily, run.session.emit, cache_dir())
    run.session.source_mode = "nemotron" if llm else ("params" if params else "library")
    run.session.grounding = grounding.enabled and llm is not None
    if args.gpus or getattr(args, "ray", None):  # whole batches per lane; the shoot-out on the first
        from vajra_tui.engine.scale.lanes import LaneTuner
        tuner = LaneTuner(run.session, run.lanes, params or LibrarySource(), llm=llm, grounding=grounding,
                          budget=args.budget, shootouts=args.shootout)
    else:
        tuner = Tuner(run.session, params or LibrarySource(), llm=llm, grounding=grounding, budget=args.budget,
                      shootouts=args.shootout)
    tuner.extra = [] if params else run.kernels  # params: the kernels are the search spaces
    generations = params.planned_rounds - 1 if params else max(args.generations, 0)
    try:
        ranked = await tuner.run(generations)
    except RUN_ERRORS as exc:
        return _run_failed(exc)
    except WorkloadError as exc:
        raise UsageError(str(exc)) from None
    finally:
        if llm is not None:
            await llm.aclose()
        await grounding.aclose()
        run.close()
    run.session = tuner.session  # the lane the shoot-out ran on (another if the first was lost)
    results = list(run.session.results.values())
    winner = ranked[0] if ranked else None
    if args.export and winner is not None:
        _export(winner, run.session.device, run.session.info, args.export, force=False)
    extra: dict[str, Any] = {"generations": tuner.generation, "ranking": [r.name for r in ranked]}
    if params is not None:
        extra["params"] = params.summary()
    note = getattr(tuner.library, "note", "")
    if note:
        extra["library"] = note
    board = getattr(tuner, "board", None)
    if board is not None:
        extra.update(board.summary())
    return _finish(args, run, results, winner, extra)


def _params(run: _Run, args: argparse.Namespace):  # -> ParamsSource
    """--source params: the search spaces of the --kernel files, read before the GPU starts."""
    from vajra_tui.engine.sources.params import ParamsError, ParamsSource, read_space

    try:
        if not run.kernels:
            raise UsageError("--source params needs --kernel FILE: a kernel whose `override`s have "
                             "// tune: lines")
        spaces = [read_space(k.name, k.source, run.workload.dims) for k in run.kernels]
    except (ParamsError, UsageError) as exc:
        run.close()
        raise UsageError(str(exc)) from None
    return ParamsSource(run.workload, run.size, spaces, args.budget, run.session.emit)


RUN_ERRORS = (BaselineError, WorkerError, WorkerCrashed, WorkerTimeout, WorkloadUnsupported)


def _run_failed(exc: Exception) -> int:
    """A run that cannot go on (failing baseline, unusable GPU): one line, exit status 1."""
    what = "" if isinstance(exc, (BaselineError, WorkloadUnsupported)) else "GPU worker failed: "
    print(f"vajra-tui: {what}{one_line(exc)}", file=sys.stderr)
    return 1


def _export(result, device, workload, out: Path, force: bool) -> None:
    from vajra_tui.engine.export.winner import export_winner

    try:
        paths = export_winner(result, device, workload, out, overwrite=force)
    except FileExistsError as exc:
        raise UsageError(f"{one_line(exc)}; pass --force to overwrite") from None
    except (OSError, ValueError, RuntimeError, KeyError) as exc:  # one line, never a traceback
        raise UsageError(f"export failed: {_one_line_error(exc)}") from None
    for path in paths:
        print(f"wrote {one_line(path)}", file=sys.stderr)


def _one_line_error(exc: BaseException) -> str:
    """An OSError as 'reason (path)', anything else as its message, on one clean line."""
    if isinstance(exc, OSError) and exc.strerror:
        where = f" ({one_line(exc.filename)})" if exc.filename else ""
        return f"{one_line(exc.strerror)}{where}"
    return one_line(exc)


def _recorded(path: Path) -> RecordedRun:
    """The outcome of a recording, folded as it streams (memory does not grow with its length)."""
    try:
        recording = Recording(path)
        run = RecordedRun(recording)
    except RecordingError as exc:
        raise UsageError(str(exc)) from None
    if recording.cut_note:
        print(f"vajra-tui: warning: {recording.shown}: {recording.cut_note}", file=sys.stderr)
    return run


def replay(args: argparse.Namespace, settings: Settings) -> int:
    if not args.headless and not args.json:
        from vajra_tui.tui.app import run_app  # a bad file fails there, in one line, before the UI starts

        return run_app(settings, replay=args.file, speed=args.speed)
    check_csv(args.csv)
    rec = _recorded(args.file)
    results = list(rec.results.values())
    if args.csv:
        save_csv(args.csv, results, rec.device, rec.workload)
    if args.json:
        print(json.dumps(document(rec.device, rec.workload, results, rec.calibration,
                                  {"winner": rec.winner_id}), indent=2))
    else:
        print_table(rec.device, rec.workload, results, rec.winner_id)
    return 0


def export(args: argparse.Namespace, settings: Settings) -> int:
    rec = _recorded(args.recording)
    result = rec.winner
    if args.kernel:
        result = next((r for r in rec.results.values() if args.kernel in (r.id, r.name)), None)
        if result is None:
            raise UsageError(f"no kernel {one_line(args.kernel)!r} in {one_line(args.recording)}")
    if result is None or result.status != "verified":
        raise UsageError(f"{one_line(args.recording)} has no verified winner to export")
    print(f"exporting {one_line(result.name)} to {one_line(args.out.absolute())}", file=sys.stderr)
    _export(result, rec.device, rec.workload, args.out, args.force)
    return 0


def check_csv(path: Path | None) -> None:
    """Before the run: a --csv file is new, never one of the user's overwritten."""
    if path is None:
        return
    try:
        check_new_file(path, "CSV", "--csv")
    except OutputPathError as exc:
        raise UsageError(str(exc)) from None


def save_csv(path: Path, results: list, device: Any, workload: Any) -> None:
    from vajra_tui.cli.tables import write_csv

    write_csv(path, results, device, workload)
    print(f"wrote {one_line(path)}", file=sys.stderr)


def lock(args: argparse.Namespace, settings: Settings) -> int:
    from vajra_tui.engine.store.atomic import atomic_write
    from vajra_tui.engine.export.winner import merge_locks

    if args.out.exists() and not args.force:
        raise UsageError(f"{args.out} exists; pass --force to overwrite")
    try:
        merged = merge_locks(args.files)
    except (ValueError, OSError) as exc:
        raise UsageError(str(exc)) from None
    atomic_write(args.out, json.dumps(merged, indent=2) + "\n")
    print(f"wrote {one_line(args.out)}", file=sys.stderr)
    return 0


def devices(args: argparse.Namespace, settings: Settings) -> int:
    from vajra_tui.cli.devices import devices as list_devices

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
