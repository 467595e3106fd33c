"""Session recordings: the engine's events as schema-versioned JSON lines.

A recording is written to ``<name>.partial`` and renamed into place when the
session ends, so a crash never leaves a file that looks complete. Replay reads
the same events back; screens cannot tell a replay from a live run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import stat
import time
from pathlib import Path
from typing import IO, AsyncIterator, Callable, Iterable, Iterator

from pydantic import ValidationError

from vajra_tui.engine.errors import UsageError
from vajra_tui.engine.store import damage
from vajra_tui.engine.store.consistency import Audit, Inconsistent
from vajra_tui.engine.store.atomic import sync
from vajra_tui import __version__
from vajra_tui.safe_text import one_line
from vajra_tui.settings import key_env_names
from vajra_tui.engine.events import (
    SCHEMA_VERSION, Event, SessionFinished, SessionStarted, StreamDelta, parse_event,
)
from vajra_tui.engine.store.redaction import SECRET_ENVS, Streams, event_ids, redact, secret_values

__all__ = ["MAGIC", "SECRET_ENVS", "RecordedRun", "Recorder", "Recording", "RecordingError",
           "read_recording", "redact", "replay"]

MAGIC = "vajra-session"


class RecordingError(UsageError):
    """A recording that cannot be replayed; the message is one line for the user."""


class Recorder:
    """An event sink that appends JSON lines; call close() to publish the file.

    The ``.partial`` file is created exclusively: one left by an interrupted run is
    a recording too (it replays up to its cut), so it is never overwritten. A write
    that fails mid-run (a full disk) stops the recording, not the run: what was
    written stays ``.partial`` (never published as complete), :attr:`stopped` and a
    :mod:`damage` note say so in one line.
    """

    def __init__(self, path: Path, label: str = "", secret_envs: Iterable[str] = (),
                 opener: Callable[[Path], IO[str]] | None = None) -> None:
        """``secret_envs``: variables holding keys besides those ``redaction.secret_env_names`` knows;
        ``opener`` creates the ``.partial`` file (``open(path, "x")``; tests give failing ones)."""
        self.path = Path(path)
        self.partial = self.path.with_name(self.path.name + ".partial")
        self.stopped: str | None = None  # why recording stopped early, one line
        self._done = False
        shown = one_line(self.path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = (opener or (lambda p: open(p, "x", encoding="utf-8")))(self.partial)
        except FileExistsError:
            raise RecordingError(f"{one_line(self.partial)} exists (an interrupted recording?): "
                                 "replay or remove it, or choose another file") from None
        except OSError as exc:
            raise RecordingError(f"cannot record to {shown}: {damage.disk_problem(exc)}") from None
        self._secret_envs = tuple(secret_envs)
        self._known: frozenset[str] | None = None
        self._secrets: list[str] = []
        self._streams = Streams()
        header = {"format": MAGIC, "schema_version": SCHEMA_VERSION, "tool_version": __version__,
                  "created": time.time(), "label": label}
        try:
            self._write(json.dumps(header))
        except OSError as exc:  # nothing recorded yet: leave nothing behind
            self._discard()
            raise RecordingError(f"cannot record to {shown}: {damage.disk_problem(exc)}") from None

    def _current_secrets(self) -> list[str]:
        """Read again when a settings object named a new key variable after the recording began."""
        known = key_env_names()
        if known != self._known:
            self._known = known
            self._secrets = secret_values(self._secret_envs)
        return self._secrets

    def _write(self, line: str) -> None:
        self._handle.write(redact(line, self._current_secrets()) + "\n")
        self._handle.flush()

    def _discard(self) -> None:
        """Close and remove the ``.partial`` file (a recording that never began)."""
        self._done = True
        with contextlib.suppress(OSError):
            self._handle.close()
        with contextlib.suppress(OSError):
            self.partial.unlink(missing_ok=True)

    def _stop(self, exc: OSError) -> None:
        """A write failed: keep what reached the disk as ``.partial``, record nothing more."""
        self._done = True
        self.stopped = (f"recording stopped: {damage.disk_problem(exc)}; the partial recording is kept as "
                        f"{one_line(self.partial)}")
        with contextlib.suppress(OSError):  # flushing what is buffered may fail again: the same disk
            self._handle.close()
        damage.note(self.stopped)

    def __call__(self, event: Event) -> None:
        if self._done:
            return
        try:
            if isinstance(event, StreamDelta):
                ready = self._streams.feed(event, self._current_secrets())
                if ready is not None:
                    self._write(ready.model_dump_json())
                return
            for held in self._streams.flush(event_ids(event) if not isinstance(event, SessionFinished) else None):
                self._write(held.model_dump_json())
            self._write(event.model_dump_json())
        except OSError as exc:
            self._stop(exc)

    def _finish(self) -> None:
        """The last lines, on disk (fsync: a full disk some filesystems report only now)."""
        for held in self._streams.flush():
            self._write(held.model_dump_json())
        sync(self._handle)
        self._handle.close()

    def close(self) -> Path:
        """Publish the file; returns where the recording is: ``.partial`` when it stopped early."""
        if not self._done:
            self._done = True
            try:
                self._finish()
            except OSError as exc:
                self._stop(exc)
            try:
                if self.stopped is None:
                    os.replace(self.partial, self.path)
            except OSError as exc:
                self._stop(exc)
        return self.partial if self.stopped is not None else self.path


MAX_LINE_BYTES = 64 << 20  # no event comes near; a longer line is damage, not data


def _header_error(path: str, header: object) -> str | None:
    """What is wrong with a header line, or None."""
    if not isinstance(header, dict) or header.get("format") != MAGIC:
        return f"{path}: not a Vajra recording (bad header)"
    if "schema_version" not in header:
        return f"{path}: the header has no schema_version"
    version = header["schema_version"]
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        return f"{path}: the header's schema_version is {one_line(repr(version), 40)}, not a version number"
    if version > SCHEMA_VERSION:
        return (f"{path}: recorded with schema {version}, newer than this Vajra reads "
                f"({SCHEMA_VERSION}); upgrade vajra-tui")
    return None


def _event_error(exc: Exception) -> str:
    """One line saying what is wrong with an event line: the field, the problem, the value."""
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text (byte {exc.start})"
    if not isinstance(exc, ValidationError):
        return one_line(exc, 120)
    errors = exc.errors(include_url=False)
    first = errors[0]
    kind, loc = first.get("type", ""), [str(x) for x in first.get("loc", ())]
    if kind == "json_invalid":
        return "not valid JSON"
    if kind == "union_tag_not_found":
        return "an event without a type"
    if kind == "union_tag_invalid":
        tag = first.get("ctx", {}).get("tag", "")
        return f"unknown event type {one_line(repr(tag), 40)}"
    if kind in ("model_type", "model_attributes_type", "dict_type") and not loc:
        return "not an event (a JSON object is expected)"
    where = ".".join(loc[1:]) if len(loc) > 1 else ".".join(loc)
    event = loc[0] if loc else "event"
    got = "" if kind == "missing" else f" (got {one_line(repr(first.get('input')), 40)})"
    more = f"; {len(errors) - 1} more" if len(errors) > 1 else ""
    return f"{event}: {where}: {one_line(first.get('msg', ''), 80)}{got}{more}"


# When runs began to end their recordings with ``session_finished`` (2026-12-03 08:46 UTC,
# 542a94b): an older recording without one is not an interrupted one.
ENDS_RECORDED_SINCE = 1796287561.0


class Recording:
    """A recording on disk, read as a stream: memory does not grow with its length.

    The header is read when it is opened. Iterating yields its events in order,
    reading one line at a time. A damaged last line is the normal state of a run
    that was killed: iteration stops before it and :attr:`cut` says where. A
    damaged line anywhere else raises :class:`RecordingError` naming the line and
    what is wrong with it. :meth:`check` reads the whole file once (events are not
    kept) so a bad file is refused before anything is shown.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.shown = one_line(self.path)
        self.cut: int | None = None  # the line number of a cut last line
        self.events_before_cut = 0
        self.audit: Audit | None = None  # of the last complete reading: how the run ended
        self.header = self._read_header()

    def _open(self):
        try:
            handle = open(self.path, "rb")
        except FileNotFoundError:
            raise RecordingError(f"{self.shown}: no such recording") from None
        except IsADirectoryError:
            raise RecordingError(f"{self.shown}: a directory, not a recording") from None
        except OSError as exc:
            raise RecordingError(f"{self.shown}: cannot read ({one_line(exc.strerror or exc)})") from None
        try:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise RecordingError(f"{self.shown}: not a regular file")
        except BaseException:
            handle.close()
            raise
        return handle

    def _lines(self, handle) -> Iterator[tuple[int, bytes, bool]]:
        """(line number, bytes, ended with a newline) for every line."""
        number = 0
        while True:
            raw = handle.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            number += 1
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                raise RecordingError(f"{self.shown}: line {number} is longer than {MAX_LINE_BYTES} bytes")
            yield number, raw, raw.endswith(b"\n")

    def _read_header(self) -> dict:
        with self._open() as handle:
            first = next(self._lines(handle), None)
        if first is None:
            raise RecordingError(f"{self.shown}: empty file, not a Vajra recording")
        _, raw, ended = first
        try:
            header = json.loads(raw)
        except ValueError:
            if not ended:
                raise RecordingError(f"{self.shown}: cut in its header (line 1): nothing to replay") from None
            raise RecordingError(f"{self.shown}: not a Vajra recording (bad header)") from None
        problem = _header_error(self.shown, header)
        if problem:
            raise RecordingError(problem)
        return header

    def __iter__(self) -> Iterator[Event]:
        """Each event, checked against the ones before it (engine/store/consistency.py): a
        recording whose numbers disagree is refused naming the line, a damaged line too."""
        count = 0
        audit = Audit(ends_unrecorded=not self._expects_end())
        with self._open() as handle:
            lines = self._lines(handle)
            next(lines, None)  # the header, read when opened
            pending: tuple[int, bytes] | None = None
            for number, raw, _ended in lines:
                if not raw.strip():
                    continue
                if pending is not None:  # a damaged line with more after it is corruption
                    bad_number, bad_raw = pending
                    raise RecordingError(f"{self.shown}: corrupt at line {bad_number}: "
                                         f"{self._why(bad_raw)}")
                try:
                    event = parse_event(raw)
                except (ValidationError, ValueError):
                    pending = (number, raw)
                    continue
                if count == 0 and not isinstance(event, SessionStarted):
                    raise RecordingError(f"{self.shown}: no session in this recording "
                                         f"(line {number} is a {event.type} event)")
                count += 1
                self._audit(audit.see, number, event)
                yield event
            if pending is not None:  # the last line: where an interrupted run stopped writing
                self.cut, self.events_before_cut = pending[0], count
        if count == 0:
            where = f" (cut at line {self.cut})" if self.cut else ""
            raise RecordingError(f"{self.shown}: no session in this recording{where}")
        self._audit(audit.close)
        self.audit = audit

    def _audit(self, step, *args) -> None:
        try:
            step(*args)
        except Inconsistent as exc:
            raise RecordingError(f"{self.shown}: inconsistent at {exc}") from None

    def _why(self, raw: bytes) -> str:
        try:
            parse_event(raw)
        except (ValidationError, ValueError) as exc:
            return _event_error(exc)
        return "unreadable"

    def check(self) -> "Recording":
        """Read every line once (nothing kept): a bad file fails here, in one line."""
        for _ in self:
            pass
        return self

    @property
    def interrupted(self) -> bool:
        """No end of run recorded (its last complete reading): ``kill -9``, Ctrl-C, a failed run.
        Only where one would have been: a ``.partial`` file (the recorder renames it on a clean
        close), or a recording made since runs end with ``session_finished`` (the shipped ones
        are older, and were not cut: they are left as they were measured)."""
        return self.audit is not None and not self.audit.finished and self._expects_end()

    def _expects_end(self) -> bool:
        created = self.header.get("created") if isinstance(self.header, dict) else None
        newer = isinstance(created, (int, float)) and created >= ENDS_RECORDED_SINCE
        return self.path.name.endswith(".partial") or newer

    @property
    def interrupted_note(self) -> str:
        """'the run was cut off after generation 2 (...)' for an interrupted run, else ''."""
        return self.audit.interrupted_note() if self.audit is not None and self.interrupted else ""

    @property
    def cut_note(self) -> str:
        """'cut at line 41 (...)' for a cut recording, else ''."""
        if self.cut is None:
            return ""
        return (f"cut at line {self.cut}, where an interrupted run stopped writing: "
                f"replayed the {self.events_before_cut} events before it")


def read_recording(path: Path) -> tuple[dict, list[Event]]:
    """Header and every event in a list (for small recordings and tests; replay streams).

    A cut recording gives the events before its cut; ``header["cut_at_line"]`` says where, and
    ``header["interrupted"]`` marks one with no end of run (cut or not).
    """
    recording = Recording(path)
    events = list(recording)
    header = dict(recording.header)
    if recording.cut is not None:
        header["cut_at_line"] = recording.cut
    if recording.interrupted:
        header["interrupted"] = True
    return header, events


async def replay(events: Iterable[Event], speed: float = 1.0) -> AsyncIterator[Event]:
    """Re-emit events with their recorded pacing divided by ``speed`` (0: no waiting)."""
    previous = None
    for event in events:
        if previous is not None and speed > 0:
            gap = min(max(event.t - previous, 0.0), 2.0) / speed
            if gap > 0.0005:
                await asyncio.sleep(gap)
        previous = event.t
        yield event


class RecordedRun:
    """The outcome of a recorded session: what the headless commands need from it."""

    def __init__(self, events: Iterable[Event]) -> None:
        """Folds the events as they stream by: only the last result per kernel is kept."""
        from vajra_tui.engine.events import (CalibrationReady, CandidateFinished, CandidateQueued, RankingReady,
                                             VerificationFinished)

        self.device = self.workload = None
        self.calibration = None
        self.results: dict = {}
        self.winner_id: str | None = None
        self.ranking: RankingReady | None = None  # the last one: what the run's report showed
        self.seeds: list[int] = []
        self.timed_seed: int | None = None  # the inputs the timed dispatches ran on, as their checks say
        self.limits: str | None = None  # what crowned the winner
        self.finished: SessionFinished | None = None  # its ``report``: what the rankings do not say
        # id -> the order it was first proposed in; a dict, so a re-queued id costs O(1), not a
        # scan of every id before it (a list made 50k queued candidates take 13 s)
        rank: dict[str, int] = {}
        for event in events:
            if isinstance(event, SessionStarted) and self.device is None:
                self.device, self.workload, self.seeds = event.device, event.workload, list(event.seeds)
                self.limits = event.limits  # None: recorded before the choice
            elif isinstance(event, CandidateQueued):
                rank.setdefault(event.id, len(rank))
            elif isinstance(event, CalibrationReady):
                self.calibration = event.calibration
            elif isinstance(event, CandidateFinished):
                self.results[event.result.id] = event.result
            elif isinstance(event, RankingReady):
                self.winner_id, self.ranking = event.winner_id, event
            elif isinstance(event, SessionFinished):
                self.finished = event
            elif isinstance(event, VerificationFinished) and event.phase == "timed":
                self.timed_seed = event.seed
        self.results = dict(sorted(self.results.items(), key=lambda kv: rank.get(kv[0], len(rank))))

    @property
    def winner(self):
        return self.results.get(self.winner_id) if self.winner_id else None
