"""Measured results that outlive a run, and never cross devices.

A tune that was killed (or finished) has measured kernels worth keeping:
``tune --resume`` skips every configuration already measured on this device,
and the final shoot-out re-times the finalists anyway. Results are appended,
one JSON line each, as soon as they are final, so a kill -9 loses at most the
candidate in flight. A key holds everything that changes a number: the adapter's
fingerprint (name, vendor and device ids, backend, driver), the workload and
size, the timing settings and the stitched source's sha256. A file written by
another device, driver or schema version is never read.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from vajra_tui.engine.events import SCHEMA_VERSION, CandidateResult, DeviceInfo
from vajra_tui.engine.store import damage
from vajra_tui.safe_text import one_line

FORMAT = 1


def fingerprint(device: DeviceInfo) -> str:
    """What makes two adapters the same for timing purposes."""
    return "|".join([device.name, f"{device.vendor_id:#x}", f"{device.device_id:#x}",
                     device.backend, device.driver])


def result_key(workload: str, size: dict[str, int], timing: dict[str, object], sha256: str) -> str:
    sized = ",".join(f"{k}={v}" for k, v in sorted(size.items()))
    timed = ",".join(f"{k}={v}" for k, v in sorted(timing.items()))
    return f"{workload}|{sized}|{timed}|{sha256}"


class ResultCache:
    """One JSONL file per device fingerprint under the user cache directory.

    A file this Vajra cannot own is left as it is and nothing is cached this run: one from a
    newer Vajra (a later format or schema_version in its header), a binary one (not UTF-8 text,
    or NUL bytes before its first line ends), or a named pipe or device; one line says so
    (:mod:`damage`). One from an older schema, or cut before its header was whole, starts anew.
    """

    def __init__(self, folder: Path, device: DeviceInfo) -> None:
        self.fingerprint = fingerprint(device)
        digest = hashlib.sha256(self.fingerprint.encode()).hexdigest()[:16]
        self.path = folder / "results" / f"{digest}.jsonl"
        self._entries: dict[str, CandidateResult] | None = None
        self._owned_file = False  # its header is ours: entries are appended to it
        self._left_alone = False  # not ours to rewrite: nothing is cached this run

    def _header(self) -> dict[str, object]:
        return {"format": FORMAT, "schema_version": SCHEMA_VERSION, "fingerprint": self.fingerprint}

    def load(self) -> dict[str, CandidateResult]:
        """Every usable entry; a file from another device or schema counts as empty."""
        if self._entries is not None:
            return self._entries
        self._entries = {}
        try:
            with open(damage.open_regular(self.path, os.O_RDONLY), "rb") as f:
                data = f.read()
        except damage.NotRegularFile as exc:
            if exc.kind != "a directory":  # a directory: put() says what to remove (damage.file_slot)
                self._leave_alone(exc.kind)
            return self._entries
        except OSError:
            return self._entries
        first, _, rest = data.partition(b"\n")
        if _json(first) == self._header():
            self._owned_file = True
        else:
            why = _not_ours(first, data)
            if why is not None:
                self._leave_alone(why)
            return self._entries
        for raw in rest.split(b"\n"):
            entry = _json(raw)  # a line cut by a kill (or zeroed by a crash) is skipped, not fatal
            if isinstance(entry, dict) and isinstance(entry.get("key"), str):
                try:
                    self._entries[entry["key"]] = CandidateResult(**entry["result"])
                except (TypeError, ValueError):
                    continue
        return self._entries

    def _leave_alone(self, why: str) -> None:
        self._left_alone = True
        damage.note(f"{one_line(self.path)} is {why}: left as it is, so results measured now are not "
                    "kept for tune --resume (remove it to keep them)")

    def get(self, key: str) -> CandidateResult | None:
        return self.load().get(key)

    def put(self, key: str, result: CandidateResult) -> None:
        """Append one final result; the first write (or an older or damaged file) starts the file anew."""
        self.load()
        if not self._owned_file and not self._left_alone:
            self._entries = None  # another lane (or run) may have started the file since: read it again
            self.load()
        entries = self.load()
        if self._left_alone or not damage.file_slot(self.path, "results for tune --resume"):
            self._left_alone = True
            return
        fresh = not self._owned_file
        line = json.dumps({"key": key, "result": result.model_dump(mode="json")}) + "\n"
        flags = os.O_CREAT | (os.O_WRONLY | os.O_TRUNC if fresh else os.O_RDWR | os.O_APPEND)
        try:
            with open(damage.open_regular(self.path, flags), "ab") as out:
                if fresh:
                    out.write((json.dumps(self._header()) + "\n").encode())
                elif not _ends_a_line(out):  # a kill cut the last line: never join its fragment
                    line = "\n" + line
                out.write(line.encode())
                out.flush()
        except OSError:
            return  # a cache that cannot be written only costs a re-measurement later
        self._owned_file = True
        entries[key] = result


def _ends_a_line(handle) -> bool:
    """Does the file under ``handle`` end with a newline (or hold nothing)?"""
    fd = handle.fileno()
    if os.fstat(fd).st_size == 0:
        return True
    os.lseek(fd, -1, os.SEEK_END)  # O_APPEND: the write still goes to the end
    return os.read(fd, 1) == b"\n"


def _not_ours(first: bytes, data: bytes) -> str | None:
    """Why a file whose first line is not this Vajra's header must be left as it is, or None
    when it may start anew (empty, an older schema, cut before its header was whole)."""
    if b"\0" in first:
        return "binary (it holds NUL bytes), not a results file"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "binary (not UTF-8 text), not a results file"
    header = _json(first)
    if isinstance(header, dict):
        for field, ours in (("format", FORMAT), ("schema_version", SCHEMA_VERSION)):
            theirs = header.get(field)
            if isinstance(theirs, int) and not isinstance(theirs, bool) and theirs > ours:
                return f"from a newer Vajra ({field} {theirs}, this one reads {ours})"
    return None


def _json(line: str | bytes) -> object:
    try:
        return json.loads(line)
    except ValueError:  # not JSON, not UTF-8
        return None
