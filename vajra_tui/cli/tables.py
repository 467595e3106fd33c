"""CLI tables that fit the terminal, and the same results as CSV.

The results table has twelve columns; at 80 columns they cannot all stand.
Rather than let Rich squeeze every column into a few letters, whole columns are
dropped, least useful first, and the one free-text column wraps. What is
dropped is said under the table, with where to find it (``--json``, ``--csv``).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any, Sequence

from vajra_tui.cli.console import Console
from rich.table import Table
from rich.text import Text

from vajra_tui.safe_text import escaped_line

# The results table's columns, most important first; the free-text column wraps.
PRIORITY = ("kernel", "status", "median", "speedup", "origin / reason", "GFLOP/s", "roofline",
            "IQR", "GB/s", "timing", "grid", "wg")
FLEXIBLE = "origin / reason"
FLEXIBLE_MIN = 18
FLEXIBLE_ROOM = 36  # columns after ROOMY_AFTER are dropped before the free text gets narrower
ROOMY_AFTER = "roofline"


def terminal_width() -> int:
    """The real width: the terminal's, else $COLUMNS, else 80 (Rich's rules)."""
    return Console().width


def _width(cell: Any) -> int:
    text = cell.plain if isinstance(cell, Text) else str(cell)
    return max((Text(line).cell_len for line in text.splitlines() or [""]), default=0)


def fitted_table(title: Text | str, columns: Sequence[tuple[str, str]], rows: list[Sequence[Any]],
                 width: int, priority: Sequence[str] = PRIORITY,
                 flexible: str = FLEXIBLE) -> tuple[Table, list[str]]:
    """A table of the columns that fit ``width`` (in ``priority`` order); and the dropped names."""
    names = [name for name, _ in columns]
    natural = {name: max([_width(name), *(_width(row[i]) for row in rows)])
               for i, name in enumerate(names)}
    kept: list[str] = []
    used = 1  # the left border
    for name in [n for n in priority if n in names] + [n for n in names if n not in priority]:
        need = (min(natural[name], FLEXIBLE_MIN) if name == flexible else natural[name]) + 3
        if used + need <= width:
            kept.append(name)
            used += need
    if flexible in kept:  # then give the free text room to read, before the least useful columns
        room = min(natural[flexible], FLEXIBLE_ROOM)
        while kept[-1] in priority[priority.index(ROOMY_AFTER) + 1:] and \
                width - used + min(natural[flexible], FLEXIBLE_MIN) < room:
            used -= natural[kept.pop()] + 3
    order = [i for i, name in enumerate(names) if name in kept]
    table = Table(title=title, title_justify="left", caption_justify="left", width=min(width, used + (
        natural[flexible] - FLEXIBLE_MIN if flexible in kept and natural[flexible] > FLEXIBLE_MIN else 0)))
    for i in order:
        name, justify = columns[i]
        if name == flexible:
            table.add_column(name, justify=justify, overflow="fold", ratio=1)  # type: ignore[arg-type]
        else:
            table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for row in rows:
        table.add_row(*(row[i] for i in order))
    return table, [name for name in names if name not in kept]


# ---- CSV ------------------------------------------------------------------------------
CSV_FIELDS = ("name", "status", "reason", "median_ms", "iqr_ms", "p25_ms", "p75_ms", "min_ms",
              "max_ms", "timing", "gflops", "gbps", "intensity", "pct_of_roofline", "regime",
              "suspicious", "speedup", "workgroup_size", "grid", "batch", "warmup", "cache_state",
              "max_rel_error", "worst_index", "generation", "strategy", "origin", "browser",
              "source_sha256", "lane", "adapter_index", "portable", "portability")
# Lists of words, joined with "; " (a kernel's reasons); the other lists are shapes, joined with "x".
_CSV_PHRASES = ("portability",)


def _csv_text(value: object) -> str:
    """A cell a spreadsheet shows as it is: control characters written as JSON writes them
    (a recording's ESC bytes would act on the terminal that ``cat``s the file), and a leading
    ``=+-@`` quoted so that it is never run as a formula."""
    text = escaped_line(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def results_csv(results: list[Any], device: Any, workload: Any) -> str:
    """One row per kernel: the numbers of the JSON document, flat, plus device and workload."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["device", "software", "workload", "size", *CSV_FIELDS])
    size = "x".join(str(v) for v in workload.size.values())
    for r in results:
        data = r.model_dump(include=set(CSV_FIELDS))
        row = []
        for field in CSV_FIELDS:
            value = data.get(field)
            if isinstance(value, (list, tuple)):
                value = _csv_text(("; " if field in _CSV_PHRASES else "x").join(map(str, value)))
            elif isinstance(value, dict):
                value = _csv_text(json.dumps(value))
            elif isinstance(value, str):
                value = _csv_text(value)
            row.append("" if value is None else value)
        writer.writerow([_csv_text(device.name), device.software, _csv_text(workload.name),
                         _csv_text(size), *row])
    return out.getvalue()


def write_csv(path: Path, results: list[Any], device: Any, workload: Any) -> None:
    """Written whole or not at all (a temporary file renamed into place)."""
    from vajra_tui.engine.store.atomic import atomic_write

    atomic_write(Path(path), results_csv(results, device, workload), replace=False)  # checked new before the run
