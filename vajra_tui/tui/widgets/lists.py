"""A row list whose keys all move the selection: j/k, arrows, PageUp/PageDown, Home/End.

Textual's DataTable scrolls sideways on Home/End in row mode, so at 80×24 the
first and last kernels could only be reached one row at a time; here Home and
End go to the first and last row, and the table keeps the cursor row in view.
"""

from __future__ import annotations

from typing import Sequence

from rich.cells import cell_len
from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

CELL_PADDING = 2  # a DataTable cell's one cell of padding on each side


def cell_width(value: object) -> int:
    """Cells ``value`` takes in a DataTable (a Text's own length; anything else as a str)."""
    return value.cell_len if isinstance(value, Text) else cell_len(str(value))


def fit_columns(columns: Sequence[str], widths: Sequence[int], width: int,
                drop_first: Sequence[str]) -> tuple[int, ...]:
    """Indexes into ``columns`` that fit ``width`` cells whole (0: unknown, all of them).

    ``widths`` are each column's widest cell (its label included). Too narrow for every
    column (80 columns over SSH cut a table mid-word, "GFLOP/"), the columns named in
    ``drop_first`` are left out, whole and in that order, until the rest fit.
    """
    padded = [w + CELL_PADDING for w in widths]
    shown = list(range(len(columns)))
    for label in drop_first:
        if not width or sum(padded[i] for i in shown) <= width:
            break
        shown.remove(columns.index(label))
    return tuple(shown)


class ListTable(DataTable):
    """A DataTable with a row cursor that every navigation key moves."""

    BINDINGS = [
        Binding("home", "scroll_top", "first", show=False),
        Binding("end", "scroll_bottom", "last", show=False),
        Binding("j", "cursor_down", "down", show=False),
        Binding("k", "cursor_up", "up", show=False),
    ]

    def __init__(self, **kwargs: object) -> None:
        kwargs.setdefault("cursor_type", "row")
        kwargs.setdefault("zebra_stripes", True)
        super().__init__(**kwargs)  # type: ignore[arg-type]
