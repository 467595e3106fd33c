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
from pathlib import Path

from vajra_tui.engine.events import SCHEMA_VERSION, CandidateResult, DeviceInfo

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
    """One JSONL file per device fingerprint under the user cache directory."""

    def __init__(self, folder: Path, device: DeviceInfo) -> None:
        self.fingerprint = fingerprint(device)
        digest = hashlib.sha256(self.fingerprint.encode()).hexdigest()[:16]
        self.path = folder / "results" / f"{digest}.jsonl"
        self._entries: dict[str, CandidateResult] | None = None

    def _header(self) -> dict[str, object]:
        return {"format": FORMAT, "schema_version": SCHEMA_VERSION, "fingerprint": self.fingerprint}

    def load(self) -> dict[str, CandidateResult]:
        """Every usable entry; a file from another device or schema counts as empty."""
        if self._entries is not None:
            return self._entries
        self._entries = {}
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            return self._entries
        if not lines or _json(lines[0]) != self._header():
            return self._entries
        for line in lines[1:]:
            entry = _json(line)  # a line cut by a kill is skipped, not fatal
            if isinstance(entry, dict) and isinstance(entry.get("key"), str):
                try:
                    self._entries[entry["key"]] = CandidateResult(**entry["result"])
                except (TypeError, ValueError):
                    continue
        return self._entries

    def get(self, key: str) -> CandidateResult | None:
        return self.load().get(key)

    def put(self, key: str, result: CandidateResult) -> None:
        """Append one final result; the first write (or a foreign file) starts the file anew."""
        entries = self.load()
        fresh = not entries and not self._owned()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("w" if fresh else "a", encoding="utf-8") as out:
                if fresh:
                    out.write(json.dumps(self._header()) + "\n")
                out.write(json.dumps({"key": key, "result": result.model_dump(mode="json")}) + "\n")
                out.flush()
        except OSError:
            return  # a cache that cannot be written only costs a re-measurement later
        entries[key] = result

    def _owned(self) -> bool:
        try:
            with self.path.open(encoding="utf-8") as f:
                return _json(f.readline()) == self._header()
        except (OSError, UnicodeDecodeError):
            return False


def _json(line: str) -> object:
    try:
        return json.loads(line)
    except ValueError:
        return None
