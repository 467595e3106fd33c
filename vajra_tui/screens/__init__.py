"""One screen per pipeline stage, plus modals; all draw from the app's RunState."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable

if TYPE_CHECKING:
    from ..app import VajraApp
    from ..state import RunState


class StateScreen(Screen):
    """A screen redrawn from the RunState by the app's refresh tick (and on resume)."""

    @property
    def vapp(self) -> "VajraApp":
        return cast("VajraApp", self.app)

    ready = False  # set by each screen's on_mount once its widgets exist

    def sync(self, state: "RunState") -> None:  # pragma: no cover - overridden
        """Bring every widget up to date with state; must be cheap when nothing moved."""

    def redraw(self) -> None:
        """Sync if composed (a resume or a tick can arrive before on_mount)."""
        if self.ready:
            self.sync(self.vapp.state)

    def mounted(self) -> None:
        """Subclasses call this at the end of on_mount."""
        self.ready = True
        self.sync(self.vapp.state)

    def on_screen_resume(self) -> None:
        self.redraw()


class ListScreen(StateScreen):
    """A screen built around one DataTable that j/k (and the arrows) move through."""

    LIST_ID = ""
    BINDINGS = [Binding("j", "cursor(1)", "down", show=False),
                Binding("k", "cursor(-1)", "up", show=False)]

    def action_cursor(self, delta: int) -> None:
        table = self.query_one(f"#{self.LIST_ID}", DataTable)
        table.move_cursor(row=max(table.cursor_row + delta, 0))
