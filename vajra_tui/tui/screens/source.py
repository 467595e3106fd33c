"""The stitched WGSL of one kernel: exactly what was compiled and timed."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from vajra_tui.safe_text import plain
from vajra_tui.tui.state import CandidateView
from vajra_tui.tui.widgets.source_view import KernelSource


class SourceScreen(ModalScreen[None]):
    # a modal screen cuts the app's keys off: copying what is shown is bound here
    BINDINGS = [Binding("escape,q,s", "close", "close"), Binding("c", "app.copy", "copy")]

    def __init__(self, view: CandidateView) -> None:
        super().__init__()
        self.view = view

    def compose(self) -> ComposeResult:
        # long lines wrap under their line number: no sideways scroll that took the gutter away
        with VerticalScroll(id="source-modal", classes="modal-box"):
            yield KernelSource(id="source-text")
        yield Static("esc closes · arrows/PgUp/PgDn/Home/End scroll · long lines wrap · c copies",
                     classes="modal-hint")

    def on_mount(self) -> None:
        view = self.view
        stitched = bool(view.stitched_source)
        source = view.stitched_source or view.source
        kind = "stitched WGSL" if stitched else "kernel body (never stitched)"
        title = f"{view.label} — {kind}"
        # diagnostics are located in the candidate's own source, not the stitched one
        self.query_one(KernelSource).show(source, [] if stitched else view.diagnostics, title,
                                          wrap=True)
        box = self.query_one("#source-modal")
        box.border_title = plain(view.label, single_line=True)
        box.focus()

    def action_close(self) -> None:
        self.dismiss(None)
