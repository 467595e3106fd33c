"""The keys, as currently bound (settings.keys overrides included)."""

from __future__ import annotations

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

KEY_HELP = [
    ("run", "enter", "run the chosen workload (picker)"),
    ("baseline", "", "baseline screen"),
    ("variants", "", "variants screen"),
    ("graveyard", "", "failure graveyard"),
    ("report", "", "report card"),
    ("evolve", "", "evolve the winner into the next generation"),
    ("source", "", "stitched WGSL of the selected kernel"),
    ("copy", "", "copy the winner's WGSL to the clipboard (OSC 52)"),
    ("export", "", "export the winner"),
    ("help", "", "this help"),
    ("quit", "", "quit (the recording is saved)"),
]


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark,f1", "dismiss", "close")]

    def compose(self) -> ComposeResult:
        table = Table(title="Vajra keys", expand=True, show_edge=False)
        table.add_column("key", style="bold cyan", no_wrap=True)
        table.add_column("action")
        keys = getattr(self.app, "key_for", lambda action: "")
        for action, default, what in KEY_HELP:
            table.add_row(keys(action) or default, what)
        table.add_row("ctrl+p", "command palette (every action, by name)")
        table.add_row("↑ ↓ j k", "move through lists")
        table.add_row("tab", "next widget")
        with VerticalScroll(id="help-box", classes="modal-box"):
            yield Static(table)
            yield Static("escape closes", classes="modal-hint")

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)
