"""One screen per pipeline stage, plus modals; all draw from the app's RunState."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.binding import Binding
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import DataTable

if TYPE_CHECKING:
    from vajra_tui.tui.app import VajraApp
    from vajra_tui.tui.state import CandidateView, RunState


class StateScreen(Screen):
    """A screen redrawn from the RunState by the app's refresh tick (and on resume)."""

    @property
    def vapp(self) -> "VajraApp":
        return cast("VajraApp", self.app)

    ready = False  # set by each screen's on_mount once its widgets exist

    def sync(self, state: "RunState") -> None:  # pragma: no cover - overridden
        """Bring every widget up to date with state; must be cheap when nothing moved."""

    def redraw(self) -> None:
        """Sync if composed (a resume or a tick can arrive before on_mount) and still attached
        (a tick can also arrive while the screen is being taken down, its widgets gone)."""
        if not self.ready or not self.is_attached:
            return
        try:
            self.sync(self.vapp.state)
        except NoMatches:
            if self.is_attached and self.is_mounted and self.app.screen is self:
                raise

    def mounted(self) -> None:
        """Subclasses call this at the end of on_mount."""
        self.ready = True
        self.sync(self.vapp.state)

    def on_screen_resume(self) -> None:
        self.redraw()

    def selected_view(self) -> "CandidateView | None":
        """The kernel this screen has selected: what ``s`` shows and ``c`` copies."""
        return None


class ListScreen(StateScreen):
    """A screen built around one list that j/k, the arrows, PageUp/PageDown and Home/End
    move through (the list itself handles them when focused; these work when it is not)."""

    LIST_ID = ""
    BINDINGS = [Binding("j", "cursor(1)", "down", show=False),
                Binding("k", "cursor(-1)", "up", show=False),
                Binding("pagedown", "list('page_down')", "page down", show=False),
                Binding("pageup", "list('page_up')", "page up", show=False),
                Binding("home", "list('scroll_top')", "first", show=False),
                Binding("end", "list('scroll_bottom')", "last", show=False)]

    def action_cursor(self, delta: int) -> None:
        table = self.query_one(f"#{self.LIST_ID}", DataTable)
        table.move_cursor(row=max(table.cursor_row + delta, 0))

    async def action_list(self, action: str) -> None:
        await self.query_one(f"#{self.LIST_ID}", DataTable).run_action(action)

    _list: DataTable | None = None

    def list_table(self) -> DataTable | None:
        """The screen's list, found once: the footer asks every tick, and a DOM query walks
        every widget (with dozens of panels mounted that cost more than the rest of the tick)."""
        if self._list is None or not self._list.is_attached:
            found = self.query(f"#{self.LIST_ID}").results(DataTable)
            self._list = next(found, None)  # None while the screen is still being composed
        return self._list

    def selected_view(self) -> "CandidateView | None":
        table = self.list_table()
        if table is None or not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return self.vapp.state.candidates.get(str(key))
