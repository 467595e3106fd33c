"""A yes/no question before something that cannot be undone (leaving a running generation)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from vajra_tui.safe_text import plain


class ConfirmScreen(ModalScreen[bool]):
    """Dismisses with True on y / Enter on "Yes", False on n / Escape / "No"."""

    BINDINGS = [Binding("y", "answer(True)", "yes"), Binding("n,escape", "answer(False)", "no")]

    def __init__(self, question: str, yes: str = "Yes", no: str = "No") -> None:
        super().__init__()
        self.question, self.yes, self.no = question, yes, no

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box", classes="modal-box"):
            yield Static(plain(self.question), id="confirm-question")
            with Horizontal(id="confirm-buttons"):
                yield Button(f"{self.yes} (y)", id="confirm-yes", variant="warning")
                yield Button(f"{self.no} (n)", id="confirm-no", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#confirm-no", Button).focus()  # Enter keeps the run going
        # Toasts wait while the question is up (styles.tcss hides them under "-asking"): at
        # 80x24 a stack of them covered the question and its buttons. They show again after,
        # those whose time has not run out.
        self.app.add_class("-asking")

    def on_unmount(self) -> None:
        self.app.remove_class("-asking")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)
