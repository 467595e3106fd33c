"""The one-line banner that says a screen shows a recording, not a live run."""

from __future__ import annotations

from textual.widgets import Static

from vajra_tui.safe_text import plain


class Banner(Static):
    """Hidden on live runs; on replays names the recording."""

    def on_mount(self) -> None:
        text = getattr(self.app, "banner", "")
        self.update(plain(text, single_line=True))  # it names a file: data, not markup
        self.display = bool(text)
