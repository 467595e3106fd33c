"""A small modal asking where to export the winner (default ./vajra-export)."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Static

from vajra_tui.safe_text import plain


class ExportScreen(ModalScreen[list[Path] | None]):
    """Calls the app's ``export_to``; stays open showing the error when it fails
    (e.g. files exist: tick overwrite), dismisses with the written paths on success."""

    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self, winner: str, default: str = "./vajra-export") -> None:
        super().__init__()
        self.winner, self.default = winner, default

    def compose(self) -> ComposeResult:
        with Vertical(id="export-box", classes="modal-box"):
            yield Label(plain(f"Export the winner ({self.winner}) to directory:", single_line=True))
            yield Input(self.default, id="export-dir")
            yield Static(self._where(self.default), id="export-where")  # said before anything is written
            yield Checkbox("overwrite existing files", id="export-overwrite")
            yield Static("", id="export-error")
            with Horizontal(id="export-buttons"):
                yield Button("Export", id="export-ok", variant="primary")
                yield Button("Cancel", id="export-cancel")

    def on_mount(self) -> None:
        self.query_one("#export-box").border_title = "export"
        field = self.query_one("#export-dir", Input)
        field.cursor_blink = not self.app.is_headless  # steady cursor for snapshots
        field.focus()

    def _where(self, text: str) -> Text:
        """The folder the files will go to, in full: relative paths start where Vajra was started."""
        folder = Path(text.strip() or self.default).expanduser().absolute()
        return Text.assemble(("→ ", "bold"), plain(str(folder), single_line=True),
                             (" (.wgsl, .ts and vajra.lock.json)", "dim"))

    @on(Input.Changed, "#export-dir")
    def _changed(self, event: Input.Changed) -> None:
        self.query_one("#export-where", Static).update(self._where(event.value))
        self.query_one("#export-error", Static).update("")

    def show_error(self, message: str) -> None:
        self.query_one("#export-error", Static).update(plain(message, style="bold red"))

    @on(Input.Submitted, "#export-dir")
    @on(Button.Pressed, "#export-ok")
    def _ok(self) -> None:
        text = self.query_one("#export-dir", Input).value.strip() or self.default
        overwrite = self.query_one("#export-overwrite", Checkbox).value
        written, error = self.app.export_to(Path(text).expanduser(), overwrite)  # type: ignore[attr-defined]
        if error:
            self.show_error(error)
        else:
            self.dismiss(written)

    @on(Button.Pressed, "#export-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
