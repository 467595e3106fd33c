"""Session recordings: the engine's events as schema-versioned JSON lines.

A recording is written to ``<name>.partial`` and renamed into place when the
session ends, so a crash never leaves a file that looks complete. Replay reads
the same events back; screens cannot tell a replay from a live run.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import AsyncIterator, Iterable

from pydantic import ValidationError

from .. import __version__
from .events import SCHEMA_VERSION, Event, SessionStarted, parse_event

MAGIC = "vajra-session"
SECRET_ENVS = ("NEBIUS_API_KEY", "TAVILY_API_KEY", "OPENAI_API_KEY")


class RecordingError(Exception):
    """A recording that cannot be replayed; the message is one line for the user."""


def _secrets() -> list[str]:
    names = set(SECRET_ENVS) | {k for k in os.environ if k.endswith(("_API_KEY", "_TOKEN"))}
    return [v for k in names if len(v := os.environ.get(k, "")) >= 8]


def redact(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, "[redacted]")
    return text


class Recorder:
    """An event sink that appends JSON lines; call close() to publish the file."""

    def __init__(self, path: Path, label: str = "") -> None:
        self.path = Path(path)
        self.partial = self.path.with_name(self.path.name + ".partial")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._secrets = _secrets()
        self._handle = open(self.partial, "w", encoding="utf-8")
        header = {"format": MAGIC, "schema_version": SCHEMA_VERSION, "tool_version": __version__,
                  "created": time.time(), "label": label}
        self._write(json.dumps(header))

    def _write(self, line: str) -> None:
        self._handle.write(redact(line, self._secrets) + "\n")
        self._handle.flush()

    def __call__(self, event: Event) -> None:
        if not self._handle.closed:
            self._write(event.model_dump_json())

    def close(self) -> Path:
        if not self._handle.closed:
            self._handle.close()
            os.replace(self.partial, self.path)
        return self.path


def read_recording(path: Path) -> tuple[dict, list[Event]]:
    """Header and events, or RecordingError with a one-line reason."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise RecordingError(f"{path}: no such recording") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordingError(f"{path}: cannot read ({exc.__class__.__name__})") from None
    if not lines:
        raise RecordingError(f"{path}: empty file, not a Vajra recording")
    try:
        header = json.loads(lines[0])
    except ValueError:
        raise RecordingError(f"{path}: not a Vajra recording (bad header)") from None
    if not isinstance(header, dict) or header.get("format") != MAGIC:
        raise RecordingError(f"{path}: not a Vajra recording (bad header)")
    version = header.get("schema_version")
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise RecordingError(
            f"{path}: recorded with schema {version}, newer than this Vajra reads "
            f"({SCHEMA_VERSION}); upgrade vajra-tui")
    events: list[Event] = []
    for number, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        try:
            events.append(parse_event(line))
        except (ValidationError, ValueError):
            last = number == len(lines)
            what = "truncated" if last else "corrupt"
            raise RecordingError(f"{path}: {what} at line {number}") from None
    if not events or not isinstance(events[0], SessionStarted):
        raise RecordingError(f"{path}: no session in this recording")
    return header, events


async def replay(events: list[Event], speed: float = 1.0) -> AsyncIterator[Event]:
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

    def __init__(self, events: list[Event]) -> None:
        from .events import CalibrationReady, CandidateFinished, CandidateQueued, RankingReady

        start = events[0]
        assert isinstance(start, SessionStarted)
        self.device, self.workload = start.device, start.workload
        self.calibration = None
        self.results: dict = {}
        self.winner_id: str | None = None
        order: list[str] = []
        for event in events:
            if isinstance(event, CandidateQueued) and event.id not in order:
                order.append(event.id)
            elif isinstance(event, CalibrationReady):
                self.calibration = event.calibration
            elif isinstance(event, CandidateFinished):
                self.results[event.result.id] = event.result
            elif isinstance(event, RankingReady):
                self.winner_id = event.winner_id
        rank = {cid: i for i, cid in enumerate(order)}  # the order candidates were proposed in
        self.results = dict(sorted(self.results.items(), key=lambda kv: rank.get(kv[0], len(rank))))

    @property
    def winner(self):
        return self.results.get(self.winner_id) if self.winner_id else None
