"""The walk a candidate takes, drawn as one line: sanitize › compile › verify › time › verified."""

from __future__ import annotations

from rich.text import Text

from ..state import CandidateView

WALK = [("sanitizing", "sanitize"), ("compiling", "compile"), ("verifying", "verify"),
        ("timing", "time")]
ORDER = ["queued", "streaming", "sanitizing", "compiling", "verifying", "warmup", "timing", "done"]


def stage_walk(view: CandidateView) -> Text:
    """Done steps green, the current one bold, the rest dim; the verdict last."""
    walk = WALK[1:] if view.strategy == "baseline" else WALK
    current = "timing" if view.stage == "warmup" else view.stage
    reached = ORDER.index(current) if current in ORDER else 0
    if view.result is not None:  # a failure stops the walk where it happened
        reached = max((ORDER.index(s) for s in view.stages if s in ORDER and s != "done"), default=0)
    text = Text()
    for number, (stage, label) in enumerate(walk):
        if number:
            text.append(" › ", style="dim")
        index = ORDER.index(stage)
        if view.result is None and stage == current:
            text.append(label, style="bold yellow")
        elif index < reached or (view.result is not None and index <= reached):
            text.append(label, style="green")
        else:
            text.append(label, style="dim")
    text.append(" › ", style="dim")
    if view.result is None:
        text.append("…" if current != "queued" else "queued", style="dim")
    elif view.result.status == "verified":
        text.append("verified ✓", style="bold green")
    else:
        text.append(f"{view.result.status.replace('_', ' ')} ✗", style="bold red")
    return text
