"""Lockfiles from several machines merged into one (``vajra-tui lock merge``).

Split from :mod:`lockfile`, which writes and reads one lockfile: a merge chooses, slot by slot,
which of two measurements of one kernel on one device it keeps, and says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vajra_tui.engine.export.lockfile import build_lock, entry_key, load_lock, shown_key
from vajra_tui.safe_text import one_line

MERGE_RULES = ("newest", "fastest", "refuse")


@dataclass(frozen=True)
class MergeConflict:
    """One measurement slot two lockfiles timed differently, and which of them the merge kept."""

    key: str  # the slot, as :func:`shown_key` writes it
    kept: str  # the file whose entry was kept
    kept_ms: float | None
    dropped: str  # the file whose entry was left out
    dropped_ms: float | None
    rule: str  # "newest" or "fastest"

    def message(self) -> str:
        """One line: ``lock merge: <slot>: kept a.json (1.2 ms), not b.json (1.5 ms): the newest``."""
        why = ("the newest export" if self.rule == "newest" else "the fastest median")
        return one_line(f"{self.key} measured differently: kept {self.kept} ({_ms(self.kept_ms)}), "
                        f"not {self.dropped} ({_ms(self.dropped_ms)}): {why}")


def _ms(value: float | None) -> str:
    return "no median" if value is None else f"{value:.4g} ms"


def _median(entry: dict[str, Any]) -> float | None:
    value = entry["timing"].get("median_ms")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _wins(new: dict[str, Any], old: dict[str, Any], rule: str) -> bool:
    """Whether ``new`` (from a later file) takes the slot from ``old`` under ``rule``."""
    newer = str(new.get("exported_at", "")) >= str(old.get("exported_at", ""))  # a tie: the later file
    if rule == "fastest":
        a, b = _median(new), _median(old)
        if a is not None and (b is None or a < b):
            return True
        if b is not None and (a is None or b < a):
            return False
    return newer


def merge_locks(paths: list[Path], on_conflict: str = "newest",
                conflicts: list[MergeConflict] | None = None) -> dict[str, Any]:
    """Combine lockfiles from several machines into one.

    Entries with the same (device, workload, size, sha256) are one measurement slot. When
    two files time one slot differently, ``on_conflict`` says which is kept: "newest" (the most
    recently exported; on a tie, the later file), "fastest" (the lower median), or "refuse"
    (a one-line ValueError naming the slot and both files, and nothing is merged). Each
    such choice is appended to ``conflicts`` when it is given, for the caller to tell the
    user. Entries that agree (the same file named twice) are one entry, and no conflict.
    The same kernel measured on different devices keeps one entry per device; ``kernels``
    lists, per sha256, every device that measured it and the fastest.
    """
    if on_conflict not in MERGE_RULES:
        raise ValueError(f"on_conflict must be one of {', '.join(MERGE_RULES)} (got {one_line(repr(on_conflict), 60)})")
    chosen: dict[str, tuple[dict[str, Any], str]] = {}
    for path in paths:
        shown = one_line(Path(path), 120)
        for entry in load_lock(Path(path))["entries"]:
            key = entry_key(entry)
            old = chosen.get(key)
            if old is None:
                chosen[key] = (entry, shown)
                continue
            old_entry, old_path = old
            if old_entry["timing"] == entry["timing"]:  # the same measurement: nothing to choose
                if _wins(entry, old_entry, "newest"):
                    chosen[key] = (entry, shown)
                continue
            if on_conflict == "refuse":
                raise ValueError(one_line(
                    f"{shown_key(entry)} is measured differently in {old_path} "
                    f"({_ms(_median(old_entry))}) and {shown} ({_ms(_median(entry))}); "
                    "pass --on-conflict newest or --on-conflict fastest to choose which is kept"))
            if _wins(entry, old_entry, on_conflict):
                kept, dropped = (entry, shown), (old_entry, old_path)
            else:
                kept, dropped = (old_entry, old_path), (entry, shown)
            chosen[key] = kept
            if conflicts is not None:
                conflicts.append(MergeConflict(shown_key(entry), kept[1], _median(kept[0]),
                                               dropped[1], _median(dropped[0]), on_conflict))
    return build_lock([entry for entry, _ in chosen.values()])
