"""Screen 4: every failed candidate and why, with the evidence for each kind of failure.

Compile errors show the source with the failing line highlighted and the
message at line:column; rejections their worst element; timeouts their
deadline; no-kernel replies the raw reply; sanitizer rewrites their diffs.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Container, VerticalScroll
from textual.widgets import DataTable, Header, Static

from vajra_tui.safe_text import plain
from vajra_tui.tui.state import CandidateView, RunState
from vajra_tui import fmt
from vajra_tui.tui.widgets.banner import Banner
from vajra_tui.tui.widgets.footer import FittingFooter
from vajra_tui.tui.widgets.lists import ListTable
from vajra_tui.tui.widgets.source_view import KernelSource, source_renderable
from vajra_tui.tui.screens import ListScreen


def failure_detail(view: CandidateView, dark: bool) -> RenderableType:
    """The evidence for one failure, by kind."""
    r = view.result
    assert r is not None
    parts: list[RenderableType] = [
        Text.assemble((f"{view.label}  ", "bold"), (r.status.replace("_", " "), "bold red"),
                      (f"   {view.origin}", "dim")),
    ]
    if r.status != "compile_error" or not (view.diagnostics or r.diagnostics):
        parts.append(Text(r.reason or "", style="red"))
    if r.status == "compile_error":
        parts.append(source_renderable(view.source or r.source, view.diagnostics or r.diagnostics, dark))
    elif r.status == "rejected":
        parts.append(Text.assemble(("max relative error ", "bold"), fmt.sci(r.max_rel_error),
                                   ("   worst element ", "bold"),
                                   fmt.DASH if r.worst_index is None else f"#{r.worst_index}"))
    elif r.status == "timeout":
        deadline = fmt.DASH if r.deadline_s is None else f"{r.deadline_s:.1f} s"
        parts.append(Text.assemble(("deadline ", "bold"), deadline,
                                   (" — the GPU worker was killed and restarted", "dim")))
    elif r.status == "no_kernel":
        parts.append(Text("raw reply:", style="bold"))
        parts.append(Text(r.raw_reply or "(empty reply)", style="italic"))
    diffs = [rw.diff for rw in view.rewrites if rw.diff] or [d for d in r.rewrites if d]
    for diff in diffs:
        parts.append(Text("sanitizer rewrite:", style="bold yellow"))
        parts.append(Syntax(diff.rstrip("\n"), "diff", theme="ansi_dark" if dark else "ansi_light"))
    return Group(*parts)


def no_failures(state: RunState, most: int = 6) -> str:
    """The empty graveyard's one line, true of every candidate: the ones stopped before they were
    judged (cancelled) or never run (duplicates) are not failures, and are not "verified" either."""
    judged = [v for v in state.candidates.values() if v.result is not None]
    parts = []
    for status, said in (("cancelled", "cancelled before they were judged"),
                         ("duplicate", "duplicates of an earlier kernel, not run again")):
        labels = [v.label for v in judged if v.result is not None and v.result.status == status]
        if labels:
            shown = ", ".join(labels[:most]) + (f" and {len(labels) - most} more" if len(labels) > most else "")
            parts.append(f"{len(labels)} {said} ({shown})")
    if not parts:
        return "No failures (yet): every candidate so far compiled and verified."
    return "No failures (yet): none failed to compile or verify; " + "; ".join(parts) + "."


class GraveyardScreen(ListScreen):
    LIST_ID = "graves"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Banner()
        with Container(id="graveyard-split"):
            yield ListTable(id="graves")
            with VerticalScroll(id="grave-detail"):
                yield KernelSource(id="grave-text")
        yield FittingFooter()

    def on_mount(self) -> None:
        self.title, self.sub_title = "Vajra", "failure graveyard"
        table = self.query_one("#graves", DataTable)
        for label in ("kernel", "status", "reason"):
            table.add_column(label, key=label)
        table.focus()
        self._shown: tuple[str, int | str] | None = None
        self._seen = -1  # the state version listed last: a tick looks only at what changed since
        self.mounted()

    def sync(self, state: RunState) -> None:
        table = self.query_one("#graves", DataTable)
        changed = state.changed_since(self._seen)
        self._seen = state.version
        for view in changed:
            if view.failed and view.id not in table.rows:
                reason = (view.result.reason if view.result else "").splitlines()
                table.add_row(plain(view.label, single_line=True),
                              plain(view.status.replace("_", " "), style="red"),
                              plain(reason[0] if reason else "", limit=60), key=view.id)
        self._show(state)

    def _show(self, state: RunState) -> None:
        table = self.query_one("#graves", DataTable)
        text = self.query_one("#grave-text", KernelSource)
        if not table.row_count:
            note = no_failures(state)
            if self._shown != ("", note):
                text.update(Text(note, style="dim"))
                self._shown = ("", note)
            return
        cid = str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
        view = state.candidates.get(cid)
        if view is None or self._shown == (cid, view.version):
            return
        self._shown = (cid, view.version)
        text.update(failure_detail(view, self.app.current_theme.dark))

    @on(DataTable.RowHighlighted, "#graves")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self.vapp.selected_id = str(event.row_key.value)
        self._show(self.vapp.state)
