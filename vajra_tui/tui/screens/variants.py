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

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Grid, VerticalScroll
from textual.widgets import DataTable, Header, Static

from vajra_tui.tui.standing import other_batch, templates_missing
from vajra_tui.tui.state import CandidateView, RunState
from vajra_tui.tui.widgets.banner import Banner
from vajra_tui.tui.widgets.footer import FittingFooter
from vajra_tui.tui.widgets.lanes import lanes_text
from vajra_tui.tui.widgets.stream import CandidatePanel
from vajra_tui.tui.widgets.variant_list import VariantList
from vajra_tui.tui.screens import ListScreen

# Live panels kept at once: a live run has a few per generation; a recording of thousands
# (a long parameter search) would mount ~5 widgets per candidate and stall the UI, keys and all.
# Beyond this, the oldest panels give way to new ones; the list still shows every candidate.
MAX_PANELS = 60
# refreshes the selected card may take to be laid out and scrolled into view (see _follow)
FOLLOW_TRIES = 8


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


def empty_note(state: RunState, busy: bool) -> Text:
    """Why the list is empty, or why it holds only the user's kernels: a user workload has no
    library templates, and the screen used to show the table with no word of it (``--source
    auto`` without a model key still measured the user's kernels, in silence about the rest)."""
    if not state.generation:
        return Text("")
    name = templates_missing(state)
    if name and state.variants:
        return Text(f"\nthe library has no templates for {name}: it measured your kernels and the "
                    "baseline only (--source params tunes a kernel's // tune: lines)", style="yellow")
    if state.variants:
        return Text("")
    if name:
        return Text(f"\nno library templates for {name}: bring kernels with --kernel FILE, or use the "
                    "params source (vajra-tui tune --source params) / an LLM key (Nemotron)",
                    style="bold yellow")
    if busy:
        return Text("")
    return Text(f"\ngeneration {state.generation} proposed no candidates", style="bold yellow")


def batch_note(final: int | None, apart: int) -> Text:
    """What a '-' speedup means, once some row's speedup divides an earlier batch's baseline."""
    if final is None or not apart:
        return Text("")
    return Text(f"\nspeedup: vs batch {final}'s baseline (the last shoot-out) · '-': timed in an "
                "earlier batch, its own speedup under batch", style="dim")


class VariantsScreen(ListScreen):
    LIST_ID = "variant-list"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Banner()
        yield Static(id="variants-heading")
        # never focused (nor the cards' streams): Tab would take the keys the list moves with
        # (arrows, PageUp/PageDown, Home/End) to a scroll that follows the list anyway
        with VerticalScroll(id="variants-body", can_focus=False):
            yield Grid(id="panels")
        # outside the scrolling panels, so it never leaves the screen; the panels follow it
        yield VariantList(id="variant-list")
        yield FittingFooter()

    def on_mount(self) -> None:
        self.title, self.sub_title = "Vajra", "variants"
        table = self.query_one("#variant-list", VariantList)
        self._panels: dict[str, CandidatePanel] = {}  # oldest first
        self._seen = -1  # the state version drawn last
        self._known: set[str] = set()  # every candidate given a panel once (old ones give way)
        self._final: int | None = None  # the batch the panels' speedups were drawn against
        # found once: a DOM query walks every panel's widgets, and sync runs every tick
        self._heading = self.query_one("#variants-heading", Static)
        self._grid = self.query_one("#panels", Grid)
        self._table = table
        table.focus()
        self.mounted()

    def on_resize(self) -> None:
        """Another width may fit more (or fewer) of the list's columns."""
        if self.ready:
            self._table.refit()
            self.redraw()

    def sync(self, state: RunState) -> None:
        source = state.generations.get(state.generation, "")
        driver = self.vapp.driver
        # the footer's rule: not in a replay, during a generation, or when nothing can evolve
        evolve_hint = "   e evolves the winner" if state.ranking and self.vapp.evolve_offered() else ""
        heading = Text.assemble(("Generation ", "bold"), str(state.generation or "—"),
                                f" · candidates from {source}" if source else "", (evolve_hint, "dim"))
        lanes = lanes_text(state.lanes)  # several adapters: which are in use, which is timing
        if lanes:
            heading.append("\n").append_text(lanes)
        heading.append_text(grounding_lines(state))
        heading.append_text(empty_note(state, driver is not None and driver.busy))
        changed = [view for view in state.changed_since(self._seen) if view.id != "baseline"]
        self._seen = state.version
        width = (self.size.width or self.app.size.width) - 2 - 1  # its margins, a scrollbar
        final = self._table.sync(state, changed, width)
        heading.append_text(batch_note(final, len(self._table.apart)))
        variants = len(state.candidates) - ("baseline" in state.candidates)
        if variants > MAX_PANELS:
            heading.append(f"\npanels for the latest {MAX_PANELS} of {variants} candidates; "
                           "the list below has every one", style="dim")
        self._heading.update(heading)
        self._sync_panels(state, changed, final)

    def _sync_panels(self, state: RunState, changed: list[CandidateView], final: int | None) -> None:
        """New candidates get panels (in one mount, the oldest making room); changed ones redraw,
        and every one when the final batch moved (a speedup shown against another batch's)."""
        fresh = [view for view in changed if view.id not in self._known][-MAX_PANELS:]
        self._known.update(view.id for view in changed)
        redraw = changed if final == self._final else [state.candidates[cid] for cid in self._panels]
        self._final = final
        for view in redraw:
            panel = self._panels.get(view.id)
            if panel is not None:
                panel.sync(view, other_batch(view, final))
        if not fresh:
            return
        grid = self._grid
        overflow = len(self._panels) + len(fresh) - MAX_PANELS
        if overflow > 0:
            old = list(self._panels)[:overflow]
            grid.remove_children([self._panels.pop(cid) for cid in old])
        panels = [CandidatePanel(view, other_batch(view, final)) for view in fresh]
        self._panels.update((panel.cid, panel) for panel in panels)
        grid.mount_all(panels)

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
                # after the next layout: a card mounted in this tick has no place to scroll to yet
                self.call_after_refresh(self._follow, chosen)

    def _follow(self, panel: CandidatePanel, tries: int = FOLLOW_TRIES) -> None:
        """Scroll the selected card into view, and look again after the next refresh: a card
        mounted in the same tick as its row was highlighted may not be laid out yet, and a
        scroll computed then lands at the top of the panel (seen in a loaded CI run)."""
        if panel.cid != self.vapp.selected_id or self._panels.get(panel.cid) is not panel:
            return  # another card was chosen, or this one gave way
        if panel.is_attached:
            self.query_one("#variants-body").scroll_to_widget(panel, animate=False)
        if tries > 0:
            self.call_after_refresh(self._check_follow, panel, tries - 1)

    def _check_follow(self, panel: CandidatePanel, tries: int) -> None:
        """Follow again unless the selected card is on view (whole, when the panel can hold it)."""
        body = self.query_one("#variants-body")
        shown = panel.is_attached and (body.region.contains_region(panel.region)
                                       if panel.region.height <= body.region.height
                                       else body.region.overlaps(panel.region))
        if not shown:
            self._follow(panel, tries)
