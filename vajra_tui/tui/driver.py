"""Drivers: where events come from. Live runs the engine; replay re-reads a recording.

Both post the same :class:`EngineEvent` message to the app, so every screen
works identically on either. The live driver runs the engine on its own
asyncio loop in a background thread: the GPU already lives in a subprocess and
the LLM on async HTTP, but sanitizing, stitching and generating kernels is
pure Python that can take tens of milliseconds per candidate, and none of it
may stall the UI loop. Textual workers on the UI side just await the engine
coroutines' futures (cancelling them cancels the engine task).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from textual.message import Message

from vajra_tui.engine.events import (
    CandidateFinished, CandidateQueued, CandidateResult, Event, Notice, SessionFinished, StageChanged,
)
from vajra_tui.engine.errors import VajraError
from vajra_tui.engine.store import damage
from vajra_tui.engine.store.record import Recorder, RecordingError, replay
from vajra_tui.settings import Settings, TimingSettings, data_dir

# The UI process keeps priority over the GPU worker (and lavapipe's threads inside it).
WORKER_NICE = 10

if TYPE_CHECKING:
    from textual.app import App


class EngineEvent(Message):
    """One engine event, delivered to the app on its own loop."""

    def __init__(self, event: Event) -> None:
        super().__init__()
        self.event = event


class EngineIdle(Message):
    """A live driver's engine step ended. Posted behind that step's last event, so when the
    app handles it every event is already on screen: only then does ``busy`` clear, and a
    key pressed as the footer changes (x, r, e) sees the generation's ranking."""

    def __init__(self, driver: "LiveDriver") -> None:
        super().__init__()
        self.driver = driver


@dataclass
class RunConfig:
    """What to tune. ``extra_kernels`` (CLI ``--kernel``) are WGSL bodies under the
    kernel contract, evaluated with generation 1: the hook tests use to inject a
    deliberately broken candidate and users use to measure their own kernels."""

    workload: str
    size: str | None = None
    source: str = "auto"  # library | llm | auto (the CLI's --source names)
    adapter: str | None = None
    record: Path | None = None
    extra_kernels: list[Path] = field(default_factory=list)
    timing: TimingSettings | None = None
    gpus: str | None = None  # --gpus all|N|i,j: one worker (lane) per adapter, engine/scale/lanes.py


def default_recording(workload: str) -> Path:
    """``<stamp>-<name>.jsonl``; a workload given as a file or ``pkg.mod:ATTR`` by its last part."""
    import re

    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    name = re.sub(r"[^A-Za-z0-9_-]", "_", Path(workload.rpartition(":")[2] if ":" in workload and
                                                 not workload.endswith(".py") else workload).stem)
    return data_dir() / "recordings" / f"{stamp}-{name or 'workload'}.jsonl"


def next_recording(path: Path) -> Path:
    """``path``, or the first free ``<stem>-2<suffix>``, ``-3`` … beside it.

    ``vajra-tui --record FILE`` names one file, but Escape back to the picker starts
    another run in the same session: that run records to FILE-2.jsonl (and says so)
    instead of being refused because FILE, the first run's recording, exists.
    """
    def taken(candidate: Path) -> bool:
        partial = candidate.with_name(candidate.name + ".partial")
        return candidate.exists() or candidate.is_symlink() or partial.exists()

    if not taken(path):
        return path
    number = 2
    while taken(path.with_name(f"{path.stem}-{number}{path.suffix}")):
        number += 1
    return path.with_name(f"{path.stem}-{number}{path.suffix}")


class LiveDriver:
    """Runs calibrate → baseline → A/B/C, then one generation per ``evolve()``."""

    replay = False

    def __init__(self, app: App, config: RunConfig, settings: Settings) -> None:
        self.app, self.config, self.settings = app, config, settings
        self.record_path = Path(config.record) if config.record else default_recording(config.workload)
        self.recorder: Recorder | None = None
        self.client: Any = None
        self.lanes: list[Any] = []  # every GPU worker: [client], or one per adapter with --gpus
        self.tuner: Any = None
        self.run: Any = None  # engine/run/builder.py's Run, once built
        self.busy = False  # what the UI shows: cleared once the app has handled the step's events
        self._stepping = False  # what the engine is doing: a step (first generation, evolve) runs
        self.ready = False  # the first generation is done: evolve may run
        self.session: Any = None
        self._open: dict[str, CandidateQueued] = {}  # queued, not finished: what a cancel stops
        self._running: Any = None  # the engine coroutine's future while a step runs
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    async def _on_engine(self, coro: Any) -> Any:
        """Run a coroutine on the engine loop and await its result from the UI loop."""
        assert self._loop is not None
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        self._running = future
        return await asyncio.wrap_future(future)

    # ---- event sink ----------------------------------------------------------
    def emit(self, event: Event) -> None:
        """Record, then hand the event to the UI loop (post_message is thread-safe)."""
        if isinstance(event, CandidateQueued):
            self._open[event.id] = event
        elif isinstance(event, CandidateFinished):
            self._open.pop(event.result.id, None)
        elif isinstance(event, StageChanged) and event.stage == "verifying" and not event.detail:
            event = event.model_copy(update={"detail": self._deadline_note(event.id)})
        with self._lock:
            stopped = self._record(event)
        self.app.post_message(EngineEvent(event))
        if stopped:  # a full disk ends the recording, never the run: said once, as a notice
            self.app.post_message(EngineEvent(Notice(level="warning", message=stopped)))

    def _record(self, event: Event) -> str | None:
        """Record ``event`` (under the lock); the one line saying why recording just stopped."""
        recorder = self.recorder
        if recorder is None or recorder.stopped:
            return None
        try:
            recorder(event)  # a full disk: the recorder stops itself and says why (.stopped)
        except Exception as exc:  # noqa: BLE001 - a recording problem must not stop the run
            recorder.stopped = f"recording stopped: {exc.__class__.__name__}: {exc}".splitlines()[0]
            with contextlib.suppress(Exception):
                recorder.close()  # stopped: the file stays .partial
        if recorder.stopped:
            damage.said_elsewhere(recorder.stopped)  # shown as this Notice, not a second toast
        return recorder.stopped

    # ---- lifecycle -----------------------------------------------------------
    def start(self) -> None:
        if self.record_path.exists():
            raise FileExistsError(f"{self.record_path} exists; refusing to overwrite a recording")
        self.recorder = Recorder(self.record_path, label=self.config.workload)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="vajra-engine", daemon=True)
        self._thread.start()
        self._begin()
        self.app.run_worker(self._on_engine(self._first()), group="engine", name="tune",
                            exit_on_error=False)

    def _build(self) -> Any:
        """The run, from the engine's one builder: the same session, sources and tuner as the CLI's."""
        from vajra_tui.engine.run.builder import Placement, RunRequest, build_run
        from vajra_tui.engine.run.kernels import user_kernels

        config = self.config
        request = RunRequest(workload=config.workload, size=config.size, source=config.source,
                             kernels=user_kernels(config.extra_kernels, strict=False),
                             timing=config.timing or self.settings.timing, llm=self.settings.llm,
                             tavily=self.settings.tavily, missing_key="warn", limits=self.settings.limits,
                             budget=self.settings.budget,
                             placement=Placement(adapter=config.adapter, gpus=config.gpus, nice=WORKER_NICE))
        self.run = build_run(request, self.emit)
        self.session, self.tuner, self.lanes = self.run.session, self.run.tuner, self.run.lanes
        self.client = self.lanes[0]
        return self.run

    def _deadline_note(self, cid: str) -> str:
        """'deadline 10.0 s': each verification dispatch's deadline, so the screens count down
        ("killed in 7 s") while a kernel that may hang is running."""
        return f"deadline {self.session.deadline_for(cid):.1f} s" if self.session is not None else ""

    async def _first(self) -> None:
        try:
            self._build()
            await self.tuner.start()  # the worker(s), calibration, and each lane's baseline
            await self.tuner.first_generation()
            self.ready = True
        except asyncio.CancelledError:
            baseline = self.session.results.get("baseline") if self.session is not None else None
            self.ready = baseline is not None and baseline.status == "verified" and self.tuner is not None
            self._stopped()
        except VajraError as exc:  # a failure meant for the user: its own line
            self.emit(Notice(level="error", message=exc.user_message()))
        except Exception as exc:  # the UI must survive any engine failure
            self.emit(Notice(level="error", message=f"{exc.__class__.__name__}: {exc}".splitlines()[0]))
        finally:
            self._end()

    def _begin(self) -> None:
        self.busy = self._stepping = True

    def _end(self) -> None:
        """On the engine loop, when a step ends: the UI's ``busy`` clears behind its events."""
        self._stepping = False
        self.app.post_message(EngineIdle(self))

    def evolve(self) -> str | None:
        """Start the next generation; returns why not, or None when started."""
        if not self.ready or self.tuner is None:
            return "the first generation has not finished yet"
        if self.busy:
            return "a generation is already running"
        self._begin()
        self.app.run_worker(self._on_engine(self._evolve()), group="engine", name="evolve",
                            exit_on_error=False)
        return None

    async def _evolve(self) -> None:
        try:
            await self.tuner.evolve()
        except asyncio.CancelledError:
            self._stopped()
        except Exception as exc:
            self.emit(Notice(level="error", message=f"{exc.__class__.__name__}: {exc}".splitlines()[0]))
        finally:
            self._end()

    # ---- cancel ----------------------------------------------------------------
    def cancel(self) -> str | None:
        """Stop the running generation; returns why not, or None when it was stopped.

        The engine task is cancelled first (so nothing turns the kill into a "crashed"
        candidate), then the GPU worker under the request in flight is killed; the
        candidates in flight are marked cancelled and the run stays usable: ``e`` evolves
        again from the best kernel so far, on a fresh worker.
        """
        if not self._stepping or self._running is None:
            return "nothing is running"
        self._running.cancel()
        for lane in self.lanes:
            lane.interrupt(forget=tuple(self._open))
        return None

    def _stopped(self) -> None:
        """On the engine loop, after a cancel: what was in flight ends as "cancelled"."""
        session = self.session
        generation = self.tuner.generation if self.tuner is not None else 0
        stopped = list(self._open.values())
        for queued in stopped:
            result = session.results.get(queued.id) if session is not None else None
            if result is None:
                result = CandidateResult(id=queued.id, name=queued.name, strategy=queued.strategy,
                                         origin=queued.origin, generation=queued.generation,
                                         params=dict(queued.params))
            result.status, result.reason = "cancelled", "cancelled by the user before it was judged"
            self.emit(StageChanged(id=queued.id, stage="done", detail="cancelled"))
            self.emit(CandidateFinished(result=result))
            for each in self.tuner.sessions if self.tuner is not None else [session] if session else []:
                each.forget(queued.id)
        self._open.clear()
        what = f"generation {generation}" if generation else "the run"
        then = "e evolves again" if self.ready else "escape returns to the picker"
        self.emit(Notice(level="warning", message=f"{what} cancelled: {len(stopped)} candidate(s) "
                         f"stopped; {then}"))

    async def aclose(self) -> Path | None:
        """Publish the recording and stop the GPU worker (called once, on exit or going back)."""
        if self.recorder is None:
            return None
        if self._stepping:
            self.cancel()
            for _ in range(50):  # the cancelled marks land in the recording before it closes
                if not self._stepping:
                    break
                await asyncio.sleep(0.1)
        self.emit(SessionFinished(ok=True))
        with self._lock:
            recorder, self.recorder = self.recorder, None
            try:
                path = recorder.close()  # the .partial file when the recording stopped early
            except Exception:  # noqa: BLE001 - leaving the run never ends in a traceback
                path = recorder.partial
        if self.run is not None:  # the model's and Tavily's HTTP clients, on the loop that made them
            try:
                await asyncio.wait_for(self._on_engine(self.run.tuner.source.aclose()), 5)
            except Exception:  # noqa: BLE001 - closing on the way out never fails the exit
                pass
        for lane in self.lanes:
            await asyncio.to_thread(lane.close)
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            await asyncio.to_thread(self._thread.join, 5)
        return path


class ReplayDriver:
    """Re-posts a recording's events with their recorded pacing divided by ``speed``."""

    replay = True
    busy = False

    # Events posted but not yet handled by the app: the replay waits above this, so a long
    # recording streams from disk instead of piling up in the message queue.
    MAX_QUEUED = 256

    def __init__(self, app: App, events: Iterable[Event], speed: float = 1.0, label: str = "") -> None:
        self.app, self.events, self.speed, self.label = app, events, speed, label
        self.done = False

    def start(self) -> None:
        self.app.run_worker(self._run(), group="engine", name="replay", exit_on_error=False)

    async def _run(self) -> None:
        count = 0
        try:
            async for event in replay(self.events, self.speed):
                self.app.post_message(EngineEvent(event))
                count += 1
                if count % 64 == 0:
                    await asyncio.sleep(0)  # let the UI breathe during a fast replay
                    while self.app.message_queue_size > self.MAX_QUEUED:
                        await asyncio.sleep(0.005)
        except RecordingError as exc:  # the file changed under the replay: say so, keep what came
            self.app.post_message(EngineEvent(Notice(level="error", message=f"replay stopped: {exc}")))
        cut = getattr(self.events, "cut_note", "")
        if cut:  # a recording of an interrupted run: say where it stopped
            self.app.post_message(EngineEvent(Notice(level="warning", message=f"recording {cut}")))
        elif getattr(self.events, "interrupted_note", ""):  # no end of run: its last crown is not final
            self.app.post_message(EngineEvent(Notice(level="warning",
                                                     message=f"recording: {self.events.interrupted_note}")))
        self.done = True

    def evolve(self) -> str | None:
        return "evolve is disabled while replaying a recording"

    async def aclose(self) -> Path | None:
        return None
