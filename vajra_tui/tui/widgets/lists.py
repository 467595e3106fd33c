"""A row list whose keys all move the selection: j/k, arrows, PageUp/PageDown, Home/End.

Textual's DataTable scrolls sideways on Home/End in row mode, so at 80×24 the
first and last kernels could only be reached one row at a time; here Home and
End go to the first and last row, and the table keeps the cursor row in view.
"""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import DataTable


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
