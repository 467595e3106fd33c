"""The Python API: ``bench()`` and ``tune()``, the engine of the CLI without the CLI.

Kernel Tuner's idea, for WebGPU: your kernel, your parameters, your reference answer::

    import vajra_tui
    report = vajra_tui.tune("mine.py", ["tiled.wgsl"], size="ROWS=512,COLS=512",
                            source="params", budget=12)
    print(report.winner.name, report.winner.constants, report.winner.speedup)

Both run outside any event loop (from a notebook, whose loop is running, they run in a
thread of their own), start the GPU worker, and return a :class:`Report` with the same
fields as ``--json``. Nothing here prints unless ``progress=True``.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from vajra_tui.engine.errors import UsageError
from vajra_tui.engine.events import Event
from vajra_tui.engine.run.kernels import Kernels, KernelSpec
from vajra_tui.engine.run.report import Report
from vajra_tui.engine.workloads import Workload
from vajra_tui.settings import Settings, TimingSettings, cache_dir

if TYPE_CHECKING:
    from vajra_tui.engine.run.builder import RunRequest

__all__ = ["KernelSpec", "Kernels", "Report", "bench", "tune"]


def bench(workload: Workload | str | Path, kernels: Kernels = None, *, size: str | Mapping[str, int] = "seed",
          warmup: int = 5, reps: int = 9, deadline: float | None = None, timing: str = "auto",
          cache: str = "warm", seeds: tuple[int, ...] = (1, 2), adapter: str | None = None,
          record: Path | None = None, progress: bool = False,
          on_event: Callable[[Event], None] | None = None, limits: str = "portable") -> Report:
    """Compile, verify (two seeds, float64 reference) and time the baseline and ``kernels``.

    ``workload``: a :class:`Workload`, a registered name, a ``.py`` path or ``pkg.mod:ATTR``.
    ``kernels``: file paths or WGSL source strings (or a ``{name: source}`` dict).
    ``limits``: "portable" crowns only kernels inside WebGPU's default limits; "adapter", this adapter's.
    """
    request = _request(workload, kernels, size, "bench", "library", seeds, adapter, None, record,
                       _timing(warmup=warmup, reps=reps, deadline_s=deadline, method=timing, cache=cache))
    request.limits = _choice("limits", limits, ("portable", "adapter"))
    return _run_sync(lambda: _measure(request, progress, on_event))


def tune(workload: Workload | str | Path, kernels: Kernels = None, *, size: str | Mapping[str, int] = "seed",
         source: str = "library", generations: int = 2, budget: int = 6, export: Path | None = None,
         warmup: int = 5, reps: int = 9, deadline: float | None = None, timing: str = "auto",
         cache: str = "warm", seeds: tuple[int, ...] = (1, 2), adapter: str | None = None,
         record: Path | None = None, progress: bool = False, settings: Settings | None = None,
         on_event: Callable[[Event], None] | None = None, gpus: str | None = None,
         shootouts: str = "every", limits: str = "portable") -> Report:
    """The closed loop: the baseline, then candidates from ``source``, each generation ended
    by a shoot-out with the baseline (``shootouts="last"``: only the last one, as
    ``tune --shootout last``; the report's numbers come from that one either way).

    ``gpus``: "all", "N" or "i,j" runs one worker per adapter of ``adapter``'s model, as
    ``tune --gpus`` does: each batch is timed on one adapter, the shoot-outs on the first;
    ``report.lanes`` says which adapter timed what. A bad choice raises ValueError.

    ``source``: "library" (Vajra's templates, evolved ``generations`` times), "params"
    (the ``// tune:`` space of ``kernels``: exhaustive within ``budget``, else Optuna),
    "llm" (an OpenAI-compatible server from the settings) or "auto". With ``export``,
    the winner's WGSL, TypeScript module and lockfile are written into that folder.
    ``limits``: "portable" (the default) crowns only kernels inside WebGPU's default limits,
    ``report.fastest_here`` naming a faster one that is not; "adapter" crowns by this adapter's.
    """
    _choice("shootouts", shootouts, ("every", "last"))
    for name, value, least in (("generations", generations, 0), ("budget", budget, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise UsageError(f"{name}={value!r}: want an integer of at least {least}")
    request = _request(workload, kernels, size, "tune", source, seeds, adapter, gpus, record,
                       _timing(warmup=warmup, reps=reps, deadline_s=deadline, method=timing, cache=cache))
    request.generations, request.budget, request.shootouts = generations, budget, shootouts
    request.limits = _choice("limits", limits, ("portable", "adapter"))
    request.export = Path(export) if export is not None else None
    if source in ("llm", "auto"):
        from vajra_tui.settings import load_settings

        request.llm = (settings or load_settings()).llm
    return _run_sync(lambda: _measure(request, progress, on_event))


# ---- plumbing -----------------------------------------------------------------------
def _run_sync(make: Callable[[], Any]) -> Report:
    """Run the coroutine to completion here, or in a thread when this thread has a loop."""
    _refuse_inside_worker()
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(make())
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, name="vajra-api")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


def _refuse_inside_worker() -> None:
    """The GPU worker imports the script a workload was declared in: a call at import time
    would start workers without end."""
    main = sys.modules.get("__main__")
    if getattr(getattr(main, "__spec__", None), "name", "") == "vajra_tui.engine.gpu.worker":
        raise RuntimeError("vajra_tui.bench()/tune() called while Vajra's GPU worker imported your "
                           "script: put the call under `if __name__ == \"__main__\":`")


def _choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise UsageError(f"{name}={value!r}: choose {' or '.join(choices)}")
    return value


def _timing(**values: Any) -> TimingSettings:
    """The timing arguments checked as the CLI's flags are: one line for the first bad one,
    not pydantic's four-line report with its URL."""
    from pydantic import ValidationError

    try:
        return TimingSettings(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = {"deadline_s": "deadline", "method": "timing"}.get(str(first["loc"][0]), str(first["loc"][0]))
        raise UsageError(f"{field}={first.get('input')!r}: {first['msg']}") from None


def _seeds(seeds: Any) -> tuple[int, ...]:
    """Distinct non-negative integers, at least one (the first is the one a browser runs on)."""
    try:
        given = tuple(seeds)
    except TypeError:
        raise UsageError(f"seeds={seeds!r}: want a tuple of non-negative integers, such as (1, 2)") from None
    if not given or any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in given):
        raise UsageError(f"seeds={seeds!r}: want a tuple of non-negative integers, such as (1, 2)")
    if len(set(given)) != len(given):
        raise UsageError(f"seeds={seeds!r}: a seed given twice verifies on the same inputs twice")
    return given


def _request(workload: Workload | str | Path, kernels: Kernels, size: str | Mapping[str, int], mode: str,
             source: str, seeds: tuple[int, ...], adapter: str | None, gpus: str | None, record: Path | None,
             timing: TimingSettings) -> RunRequest:
    """The call's arguments as the engine's run request; kernels are read (and checked) now."""
    from vajra_tui.engine.run.builder import Placement, RunRequest
    from vajra_tui.engine.run.kernels import user_kernels

    return RunRequest(workload=workload if isinstance(workload, Workload) else str(workload), size=size,
                      kernels=user_kernels(kernels), mode=mode, source=source, seeds=_seeds(seeds), timing=timing,
                      placement=Placement(adapter=adapter, gpus=str(gpus) if gpus else None), cache=cache_dir(),
                      record=Path(record) if record is not None else None,
                      record_label=f"{mode} {getattr(workload, 'name', workload)} (Python API)", surface="api")


async def _measure(request: RunRequest, progress: bool, on_event: Callable[[Event], None] | None) -> Report:
    """Build the run (the CLI's builder), bench or tune it, and close it however it ends."""
    from vajra_tui.engine.run.builder import build_run

    sinks: list[Callable[[Event], None]] = [on_event] if on_event else []
    if progress:
        from vajra_tui.cli.render import ProgressPrinter

        sinks.append(ProgressPrinter())
    run = build_run(request, lambda event: [sink(event) for sink in sinks])
    try:
        report = await (run.bench() if request.mode == "bench" else run.tune())
    finally:
        await run.aclose()
    if report.export_error:  # raised, as before; the measured report rides on the error
        error = UsageError(report.export_error)
        error.report = report  # type: ignore[attr-defined]
        raise error
    return report
