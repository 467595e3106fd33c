"""The stitched WGSL of one kernel: exactly what was compiled and timed."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ..state import CandidateView
from ..widgets.source_view import KernelSource


class SourceScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,s", "close", "close")]

    def __init__(self, view: CandidateView) -> None:
        super().__init__()
        self.view = view

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="source-modal", classes="modal-box"):
            yield KernelSource(id="source-text")
        yield Static("escape closes · c copies the winner", classes="modal-hint")

    def on_mount(self) -> None:
        view = self.view
        stitched = bool(view.stitched_source)
        source = view.stitched_source or view.source
        kind = "stitched WGSL" if stitched else "kernel body (never stitched)"
        title = f"{view.label} — {kind}"
        # diagnostics are located in the candidate's own source, not the stitched one
        self.query_one(KernelSource).show(source, [] if stitched else view.diagnostics, title)
        box = self.query_one("#source-modal")
        box.border_title = view.label
        box.focus()

    def action_close(self) -> None:
        self.dismiss(None)
