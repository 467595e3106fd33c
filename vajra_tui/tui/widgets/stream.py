"""A variant's live panel: its streamed text (reasoning dimmed) and its stage walk.

Stream deltas arrive many per second; the panel never redraws per delta. The
app's refresh tick calls :meth:`CandidatePanel.sync` at most ~15 times a
second and the panel redraws only if the candidate's version moved, the same
coalescing Textual's Markdown streaming does.
"""

from __future__ import annotations

import hashlib
import re

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from vajra_tui.safe_text import plain
from vajra_tui.tui.state import CandidateView
from vajra_tui import fmt
from vajra_tui.tui.widgets.stages import stage_walk

TAIL_CHARS = 6000  # a panel shows the end of a long stream; the source screen has all


def stream_text(view: CandidateView) -> Text:
    """Reasoning dim and italic, then content; or the library's origin and parameters."""
    text = Text()
    if view.failovers:
        for line in view.failovers:
            text.append(f"failover: {line}\n", style="yellow")
    if view.streamed:
        reasoning = "".join(view.reasoning)[-TAIL_CHARS:]
        if reasoning:
            text.append(reasoning, style="dim italic")
            text.append("\n")
        text.append("".join(view.content)[-TAIL_CHARS:])
        return text
    text.append(view.origin or view.strategy, style="bold")
    for key, value in view.params.items():
        if key != "key":
            text.append(f"\n  {key} = {value}")
    if view.workgroup_size:
        text.append(f"\nworkgroup {fmt.dims(view.workgroup_size)}  grid {fmt.dims(view.grid)}",
                    style="dim")
    return text


def verdict_text(view: CandidateView, apart: int | None = None) -> Text:
    """Median, speedup, GFLOP/s; ``apart``: the batch whose baseline the speedup divides when
    that is not the last shoot-out's (said, so it is not read beside the others' speedups)."""
    r = view.result
    if r is None:
        if view.dispatch_ms:
            return Text(f"{len(view.dispatch_ms)} timed dispatches, last {fmt.ms(view.dispatch_ms[-1])}",
                        style="dim")
        return Text("")
    if r.status == "cancelled":
        return Text("cancelled by the user", style="yellow")
    if r.status == "verified" and apart is not None:
        return Text.assemble((fmt.ms(r.median_ms), "bold"), (f"  batch {apart}: {fmt.speedup(r.speedup)} "
                                                             "of that batch's baseline", "dim"),
                             f"  {fmt.num(r.gflops)} GFLOP/s")
    if r.status == "verified":
        return Text.assemble((fmt.ms(r.median_ms), "bold"), "  ",
                             (fmt.speedup(r.speedup), "bold green" if (r.speedup or 0) >= 1 else "bold red"),
                             f"  {fmt.num(r.gflops)} GFLOP/s")
    return Text(r.reason or r.status, style="red")  # wraps in the card; the graveyard has the evidence


def panel_id(cid: str) -> str:
    """A widget id for a candidate: ids come from file names and models, widget ids may only
    hold letters, digits, ``_`` and ``-`` (anything else is replaced, and a hash keeps them apart)."""
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", cid)[:48]
    if safe == cid:
        return f"panel-{cid}"
    return f"panel-{safe}-{hashlib.sha1(cid.encode('utf-8', 'replace')).hexdigest()[:8]}"


class CandidatePanel(Vertical):
    """Title, stage walk, stream body and verdict of one candidate."""

    def __init__(self, view: CandidateView, apart: int | None = None) -> None:
        super().__init__(id=panel_id(view.id), classes="candidate-panel")
        self.cid = view.id
        self._seen: tuple[int, int | None] = (-1, None)
        self._view, self._apart = view, apart
        self._ready = False  # children composed: a fast replay syncs a panel mounted a moment ago

    def compose(self) -> ComposeResult:
        yield Static(classes="panel-stages")
        with VerticalScroll(classes="panel-scroll", can_focus=False):  # the list keeps the keys
            yield Static(classes="panel-stream")
        yield Static(classes="panel-verdict")

    def on_mount(self) -> None:
        self._ready = True
        self.sync(self._view, self._apart)

    def on_resize(self) -> None:
        """The stage walk picks its labels by width: draw it again at the new one."""
        self._seen = (-1, None)
        self.sync(self._view, self._apart)

    def sync(self, view: CandidateView, apart: int | None = None) -> None:
        """Redraw when the candidate moved, or the batch its speedup is read against did."""
        if not self._ready:  # not composed yet: on_mount draws the latest view
            self._view, self._apart = view, apart
            return
        if (view.version, apart) == self._seen:
            return
        self._seen, self._view, self._apart = (view.version, apart), view, apart
        self.border_title = plain(view.label, single_line=True)  # a str would be parsed as markup
        self.border_subtitle = f"gen {view.generation}"
        self.set_class(view.failed, "-failed")
        self.set_class(view.result is not None and view.result.status == "verified", "-verified")
        self.query_one(".panel-stages", Static).update(stage_walk(view, self.content_size.width))
        self.query_one(".panel-stream", Static).update(stream_text(view))
        self.query_one(".panel-verdict", Static).update(verdict_text(view, apart))
        scroll = self.query_one(".panel-scroll", VerticalScroll)
        if view.result is None:  # follow the stream while it runs
            scroll.scroll_end(animate=False, immediate=False)
        else:  # finished: show it from the top (reasoning first), the same every time
            scroll.scroll_home(animate=False, immediate=False)
