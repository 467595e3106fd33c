"""Screen 3: the variants, one live panel each, and a list of every candidate.

Panels sit in a grid: three across when the terminal is wide (>= 120
columns), stacked when narrow. Generation 1 (A, B, C and any user kernels)
fills the first row; evolved generations (D, E, …) add rows below. The list
under the panels is where arrows/j/k choose the kernel that ``s`` shows; it has
every candidate, while the panels are kept for the latest :data:`MAX_PANELS`.

Each tick redraws only the candidates that changed since the last one
(:meth:`RunState.changed_since`), so a replay of thousands stays linear.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Grid, VerticalScroll
from textual.widgets import DataTable, Header, Static
from textual.widgets.data_table import ColumnKey

from vajra_tui.safe_text import plain
from vajra_tui.tui.state import CandidateView, RunState
from vajra_tui import fmt
from vajra_tui.tui.widgets.banner import Banner
from vajra_tui.tui.widgets.footer import FittingFooter
from vajra_tui.tui.widgets.lanes import lanes_text
from vajra_tui.tui.widgets.lists import ListTable
from vajra_tui.tui.widgets.stream import CandidatePanel
from vajra_tui.tui.screens import ListScreen

COLUMNS = ("kernel", "gen", "origin", "status", "median", "speedup", "GFLOP/s")
# Live panels kept at once: a live run has a few per generation; a recording of thousands
# (a long parameter search) would mount ~5 widgets per candidate and stall the UI, keys and all.
# Beyond this, the oldest panels give way to new ones; the list still shows every candidate.
MAX_PANELS = 60


def status_cell(view: CandidateView) -> Text:
    if view.result is None:
        return Text(view.stage, style="yellow")
    ok = view.result.status == "verified"
    return Text(view.result.status.replace("_", " "), style="green" if ok else "red")


def row_cells(view: CandidateView) -> tuple[object, ...]:
    r = view.result
    verified = r is not None and r.status == "verified"
    # names and origins are data: Text cells, never markup (DataTable parses a str cell)
    return (plain(view.label, single_line=True), str(view.generation),
            plain(view.origin or view.strategy, limit=18), status_cell(view),  # whole in the card
            fmt.ms(r.median_ms) if verified and r else fmt.DASH,
            fmt.speedup(r.speedup) if verified and r else fmt.DASH,
            fmt.num(r.gflops) if verified and r else fmt.DASH)


def _wider(table: DataTable, column: str, value: object) -> bool:
    """Whether ``value`` needs its column to grow. Widths only grow, to the widest value ever
    shown: the same on a fast host (rows added early, then updated) as on a slow one (added
    finished). Only a wider value asks the table to resize: asked with a narrower one, Textual
    re-measures every cell of the column, and a replay of thousands became quadratic."""
    width = value.cell_len if isinstance(value, Text) else cell_len(str(value))
    return width > table.columns[ColumnKey(column)].content_width


def grounding_lines(state: RunState, most: int = 3) -> Text:
    """The latest Tavily searches that fed the prompts, with their top source."""
    text = Text()
    for g in state.grounding[-most:]:
        if g.error:
            text.append(f"\ngrounding: {g.query[:50]} failed ({g.error[:40]})", style="yellow")
        else:
            top = g.results[0].get("url", "") if g.results else "no results"
            cached = " (cached)" if g.cached else ""
            text.append(f"\ngrounding: {g.query[:50]} → {len(g.results)}{cached}: {top[:60]}", style="dim")
    return text


NO_TEMPLATES = "library: no templates for "  # the library source's note (engine/sources/library)


def empty_note(state: RunState, busy: bool) -> Text:
    """Why the list is empty, once a generation has nothing in it: a user workload has no
    library templates, and the screen used to show an empty table with no word of it."""
    if not state.generation or state.variants:
        return Text("")
    name = state.workload.name if state.workload is not None else "this workload"
    if any(n.message.startswith(NO_TEMPLATES) for n in state.notices):
        return Text(f"\nno library templates for {name}: bring kernels with --kernel FILE, or use the "
                    "params source (vajra-tui tune --source params) / an LLM key (Nemotron)",
                    style="bold yellow")
    if busy:
        return Text("")
    return Text(f"\ngeneration {state.generation} proposed no candidates", style="bold yellow")


class VariantsScreen(ListScreen):
    LIST_ID = "variant-list"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Banner()
        yield Static(id="variants-heading")
        with VerticalScroll(id="variants-body"):
            yield Grid(id="panels")
        # outside the scrolling panels, so it never leaves the screen; the panels follow it
        yield ListTable(id="variant-list")
        yield FittingFooter()

    def on_mount(self) -> None:
        self.title, self.sub_title = "Vajra", "variants"
        table = self.query_one("#variant-list", DataTable)
        for label in COLUMNS:
            table.add_column(label, key=label)
        self._rows: dict[str, tuple[object, ...]] = {}
        self._panels: dict[str, CandidatePanel] = {}  # oldest first
        self._seen = -1  # the state version drawn last
        # found once: a DOM query walks every panel's widgets, and sync runs every tick
        self._heading = self.query_one("#variants-heading", Static)
        self._grid = self.query_one("#panels", Grid)
        self._table = table
        table.focus()
        self.mounted()

    def sync(self, state: RunState) -> None:
        source = state.generations.get(state.generation, "")
        driver = self.vapp.driver
        can_evolve = driver is not None and not driver.replay and getattr(driver, "ready", False) \
            and not driver.busy  # while a generation runs, e has nothing to offer yet
        evolve_hint = "   e evolves the winner" if state.ranking and can_evolve else ""
        heading = Text.assemble(("Generation ", "bold"), str(state.generation or "—"),
                                f" · candidates from {source}" if source else "", (evolve_hint, "dim"))
        lanes = lanes_text(state.lanes)  # several adapters: which are in use, which is timing
        if lanes:
            heading.append("\n").append_text(lanes)
        heading.append_text(grounding_lines(state))
        heading.append_text(empty_note(state, driver is not None and driver.busy))
        variants = len(state.candidates) - ("baseline" in state.candidates)
        if variants > MAX_PANELS:
            heading.append(f"\npanels for the latest {MAX_PANELS} of {variants} candidates; "
                           "the list below has every one", style="dim")
        self._heading.update(heading)
        changed = [view for view in state.changed_since(self._seen) if view.id != "baseline"]
        self._seen = state.version
        self._sync_panels(changed)
        self._sync_rows(changed)

    def _sync_panels(self, changed: list[CandidateView]) -> None:
        """New candidates get panels (in one mount, the oldest making room); changed ones redraw."""
        fresh = [view for view in changed if view.id not in self._rows][-MAX_PANELS:]
        for view in changed:
            panel = self._panels.get(view.id)
            if panel is not None:
                panel.sync(view)
        if not fresh:
            return
        grid = self._grid
        overflow = len(self._panels) + len(fresh) - MAX_PANELS
        if overflow > 0:
            old = list(self._panels)[:overflow]
            grid.remove_children([self._panels.pop(cid) for cid in old])
        panels = [CandidatePanel(view) for view in fresh]
        self._panels.update((panel.cid, panel) for panel in panels)
        grid.mount_all(panels)

    def _sync_rows(self, changed: list[CandidateView]) -> None:
        """Every candidate has a row, added in the order it appeared; changed cells update."""
        table = self._table
        for view in changed:
            cells = row_cells(view)
            if self._rows.get(view.id) == cells:
                continue  # unchanged rows cost nothing: a tick may carry many events
            if view.id in table.rows:
                for column, value, old in zip(COLUMNS, cells, self._rows[view.id]):
                    if value != old:
                        table.update_cell(view.id, column, value, update_width=_wider(table, column, value))
            else:
                table.add_row(*cells, key=view.id)
            self._rows[view.id] = cells

    def _panel(self, cid: str) -> CandidatePanel | None:
        return self._panels.get(cid)

    @on(DataTable.RowHighlighted, "#variant-list")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self.vapp.selected_id = str(event.row_key.value)
            for panel in self._panels.values():
                panel.set_class(panel.cid == self.vapp.selected_id, "-selected")
            chosen = self._panel(self.vapp.selected_id)
            if chosen is not None:  # the selected card follows the list, at any terminal size
                self.query_one("#variants-body").scroll_to_widget(chosen, animate=False)
