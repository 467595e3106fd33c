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
    ("back", "", "back to the picker (asks first while a generation runs)"),
    ("baseline", "", "baseline screen"),
    ("variants", "", "variants screen"),
    ("graveyard", "", "failure graveyard"),
    ("report", "", "report card"),
    ("evolve", "", "evolve the winner into the next generation"),
    ("cancel", "", "cancel the running generation (the run stays usable)"),
    ("source", "", "stitched WGSL of the kernel selected on this screen"),
    ("copy", "", "copy the selected kernel's WGSL to the clipboard (OSC 52)"),
    ("export", "", "export the winner"),
    ("help", "", "this help"),
    ("quit", "", "quit (the recording is saved; its path is printed)"),
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
        table.add_row("↑ ↓ j k", "move through lists (the selected card follows)")
        table.add_row("PgUp PgDn Home End", "a page at a time; the first and last row")
        table.add_row("tab", "next widget")
        with VerticalScroll(id="help-box", classes="modal-box"):
            yield Static(table)
            yield Static("escape closes", classes="modal-hint")

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)
