"""``vajra-tui lock diff A B``: two lockfiles side by side.

Two machines' lockfiles answer "how does the same kernel do on the other
device?"; two runs' lockfiles on one machine answer "what changed?". Rows are
matched by workload, size and the kernel's sha256 (its identity), so a kernel
that only one side measured still shows, with a dash on the other side.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path
from typing import Any

from vajra_tui.cli.console import Console
from rich.table import Table
from rich.text import Text

from vajra_tui.cli.args import UsageError
from vajra_tui.engine.export.lockfile import load_lock, size_label
from vajra_tui.safe_text import one_line
from vajra_tui import fmt


@dataclass
class Row:
    workload: str
    size: str
    sha256: str
    name: str
    a: dict[str, Any] | None
    b: dict[str, Any] | None

    @staticmethod
    def median(entry: dict[str, Any] | None) -> float | None:
        value = entry["timing"].get("median_ms") if entry else None
        return float(value) if isinstance(value, (int, float)) else None

    @property
    def change(self) -> float | None:
        """B's time relative to A's: -0.25 is 25% faster on B, +0.5 is 50% slower."""
        a, b = self.median(self.a), self.median(self.b)
        return None if not a or b is None else b / a - 1.0


def diff_rows(a: dict[str, Any], b: dict[str, Any]) -> list[Row]:
    """One row per kernel (and per device when a lockfile holds several)."""
    def by_key(lock: dict[str, Any]) -> dict[tuple[str, str, str], list[dict[str, Any]]]:
        out: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        for e in lock["entries"]:
            key = (e["workload"]["name"], size_label(e["workload"]["size"]), e["kernel"]["sha256"])
            out.setdefault(key, []).append(e)
        return out

    left, right = by_key(a), by_key(b)
    rows: list[Row] = []
    for key in sorted(set(left) | set(right)):
        ours, theirs = _by_device(left.get(key, [])), _by_device(right.get(key, []))
        shared = sorted(set(ours) & set(theirs))
        pairs: list[tuple[dict[str, Any] | None, dict[str, Any] | None]] = []
        for device in shared:  # runs on one device, paired in order: linear in the entries
            pairs += zip_longest(ours[device], theirs[device])
        pairs += zip_longest([x for d in sorted(ours) if d not in shared for x in ours[d]],
                             [y for d in sorted(theirs) if d not in shared for y in theirs[d]])
        for x, y in pairs:
            name = ((x or y) or {}).get("kernel", {}).get("name", "")
            rows.append(Row(key[0], key[1], key[2], name, x, y))
    return rows


def _by_device(entries: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Entries grouped by their device's key, each group in file order."""
    out: dict[str, list[dict[str, Any]]] = {}
    for e in entries:
        out.setdefault(str(e["device"].get("key", "")), []).append(e)
    return out


def _devices(lock: dict[str, Any]) -> str:
    names = sorted({one_line(e["device"].get("name", "?")) + (" (software)" if e["device"].get("software") else "")
                    for e in lock["entries"]})
    return ", ".join(names) or "no entries"


def _cell(entry: dict[str, Any] | None) -> str:
    return fmt.ms(Row.median(entry)) if entry else fmt.DASH


def diff_table(rows: list[Row], width: int) -> Table:
    table = Table(box=None, pad_edge=False, show_edge=False, expand=False)
    table.add_column("workload", no_wrap=True)
    if width >= 100:
        table.add_column("size", no_wrap=True)
    table.add_column("kernel", overflow="ellipsis", no_wrap=True, max_width=max(12, width - 58))
    table.add_column("A", justify="right", no_wrap=True)
    table.add_column("B", justify="right", no_wrap=True)
    table.add_column("B vs A", justify="right", no_wrap=True)
    for row in rows:
        change = row.change
        shown = Text(fmt.DASH) if change is None else Text(
            f"{change * 100:+.0f}%", style="green" if change < 0 else "red" if change > 0 else "")
        cells: list[Any] = [Text(one_line(row.workload))]
        if width >= 100:
            cells.append(Text(one_line(row.size)))  # size keys are the lockfile's text: data
        cells += [Text(f"{one_line(row.name)} {one_line(row.sha256[:8])}"), _cell(row.a), _cell(row.b), shown]
        table.add_row(*cells)
    return table


def lock_diff(args: argparse.Namespace) -> int:
    try:
        a, b = load_lock(args.a), load_lock(args.b)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    rows = diff_rows(a, b)
    if args.json:
        print(json.dumps({"a": str(args.a), "b": str(args.b), "rows": [
            {"workload": r.workload, "size": r.size, "sha256": r.sha256, "name": r.name,
             "a_median_ms": Row.median(r.a), "b_median_ms": Row.median(r.b),
             "a_device": r.a["device"].get("name") if r.a else None,
             "b_device": r.b["device"].get("name") if r.b else None,
             "change": r.change} for r in rows]}, indent=2))
        return 0
    console = Console(highlight=False)
    for side, path, lock in (("A", args.a, a), ("B", args.b, b)):
        console.print(Text.assemble((f"{side}  ", "bold"), one_line(Path(path))))
        console.print(Text(f"   on {_devices(lock)}"))
    if not rows:
        console.print("no entries on either side")
        return 0
    console.print(diff_table(rows, console.width))
    console.print(Text("median times; B vs A: negative is faster on B. Rows match by kernel sha256.",
                       style="dim"))
    return 0
