"""The walk a candidate takes, drawn as one line: sanitize › compile › verify › time › verified."""

from __future__ import annotations

from rich.text import Text

from vajra_tui.tui.state import CandidateView

WALK = [("sanitizing", "sanitize"), ("compiling", "compile"), ("verifying", "verify"),
        ("timing", "time")]
ORDER = ["queued", "streaming", "sanitizing", "compiling", "verifying", "warmup", "timing", "done"]


SHORT = {"sanitize": "san", "compile": "comp", "verify": "ver", "time": "time"}


def verdict(view: CandidateView) -> Text:
    """'verified ✓', 'compile error ✗', 'cancelled', or '' while it runs."""
    if view.result is None:
        return Text("")
    status = view.result.status
    if status == "verified":
        return Text("verified ✓", style="bold green")
    if status == "cancelled":
        return Text("cancelled", style="bold yellow")
    return Text(f"{status.replace('_', ' ')} ✗", style="bold red")


def stage_walk(view: CandidateView, width: int = 0) -> Text:
    """Done steps green, the current one bold, the rest dim.

    A finished candidate shows its verdict first ("verified ✓ · sanitize › …"), so a
    narrow card that cuts the line cuts the walk, never the verdict. A step waiting on
    a deadline says when the worker will be killed ("verify: killed in 7 s"). Labels
    shorten ("san › comp › ver › time") when ``width`` (0: unknown) is too small.
    """
    walk = WALK[1:] if view.strategy == "baseline" else WALK
    current = "timing" if view.stage == "warmup" else view.stage
    reached = ORDER.index(current) if current in ORDER else 0
    if view.result is not None:  # a failure stops the walk where it happened
        reached = max((ORDER.index(s) for s in view.stages if s in ORDER and s != "done"), default=0)
    done = verdict(view)
    full = _walk(view, walk, current, reached, short=False)
    lead = len(done.plain) + 3 if done.plain else 0
    text = _walk(view, walk, current, reached, short=bool(width) and lead + len(full.plain) > width)
    if view.result is None:
        text.append(" › ", style="dim")
        text.append("…" if current != "queued" else "queued", style="dim")
    elif width and lead + len(text.plain) > width:
        text = done  # too narrow for the walk: the verdict alone
    else:
        text = Text.assemble(done, (" · ", "dim"), text)
    text.no_wrap, text.overflow = True, "ellipsis"  # one line: cut at the end, never wrapped away
    return text


def _walk(view: CandidateView, walk: list[tuple[str, str]], current: str, reached: int,
          short: bool) -> Text:
    text = Text()
    for number, (stage, label) in enumerate(walk):
        if number:
            text.append("›" if short else " › ", style="dim")
        index = ORDER.index(stage)
        shown = SHORT[label] if short else label
        if view.result is None and stage == current:
            if stage == "verifying" and view.countdown is not None:
                shown += f": killed in {view.countdown} s"
            text.append(shown, style="bold yellow")
        elif index < reached or (view.result is not None and index <= reached):
            text.append(shown, style="green" if view.result is None or view.result.status != "cancelled"
                        else "dim")
        else:
            text.append(shown, style="dim")
    return text
