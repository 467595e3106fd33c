"""A footer that fits its terminal: over SSH at 80 columns the full one was cut at the end,
and the end is where ``? help`` and ``q quit`` are.

When the keys that work now are wider than the footer, the least needed are left out,
one at a time (the key to the screen already shown first, then copy, then the rarer
screens …); ``q quit`` and ``? help`` always stay, and help then says ``all keys``:
every key still works, and the help screen lists them all.
"""

from __future__ import annotations

from typing import Any, Iterable

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Footer

# Dropped first to last while the footer is too wide; anything not named is never dropped.
DROP_ORDER = ("copy", "goto('baseline')", "goto('graveyard')", "export", "source",
              "goto('variants')", "goto('report')", "back", "cancel", "evolve")
KEEP = ("quit", "help")
ALL_KEYS = "all keys"


def is_key(widget: Widget) -> bool:
    """A footer key (Textual's FooterKey, which it does not export): it has a key and an action."""
    return hasattr(widget, "key_display") and hasattr(widget, "action")


def key_width(key: Any) -> int:
    """Cells a compact footer key takes: key, space, description, then its one-cell margin."""
    shown = f"{key.key_display} {key.description}" if key.description else key.key_display
    return cell_len(shown) + 1


def fitting(keys: list[Any], width: int, current: str = "") -> list[Any]:
    """``keys`` less the least needed ones until they fit ``width`` (0: unknown, all kept).

    The key to ``current`` (the screen shown) goes first: it does nothing here.
    """
    if not width or sum(map(key_width, keys)) <= width:
        return keys
    for key in keys:
        if key.action == "help":  # some keys will be hidden: help lists every one
            key.description = ALL_KEYS
    order = [f"goto('{current}')", *DROP_ORDER] if current else list(DROP_ORDER)
    kept = list(keys)
    for action in order:
        if sum(map(key_width, kept)) <= width:
            break
        kept = [key for key in kept if key.action != action]
    return kept


class FittingFooter(Footer):
    """Textual's compact footer, its keys cut down to the terminal's width (see module doc)."""

    def __init__(self) -> None:
        super().__init__(compact=True, show_command_palette=False)
        self._width = 0

    def compose(self) -> ComposeResult:
        widgets: Iterable[Widget] = super().compose()
        made = list(widgets)
        keys = [w for w in made if is_key(w)]
        width = self.size.width or self.app.size.width
        current = getattr(self.app, "current", "")
        shown = set(map(id, fitting(keys, width, current)))
        yield from (w for w in made if not is_key(w) or id(w) in shown)

    def on_resize(self, event: events.Resize) -> None:
        """A wider or narrower terminal shows more or fewer keys."""
        if event.size.width != self._width:
            self._width = event.size.width
            self.call_after_refresh(self.recompose)
