"""The one-line banner that says a screen shows a recording, not a live run."""

from __future__ import annotations

from textual.widgets import Static


class Banner(Static):
    """Hidden on live runs; on replays names the recording."""

    def on_mount(self) -> None:
        text = getattr(self.app, "banner", "")
        self.update(text)
        self.display = bool(text)
