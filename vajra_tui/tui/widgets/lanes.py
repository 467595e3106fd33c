"""One line that says which adapters a run uses and which of them is timing now.

With several GPUs (``tune --gpus``, ``--ray``) every batch is timed on one lane; the
line names each lane with its adapter index, marks the ones timing (▶) and lost (✗), and
ends with the baseline spread between lanes. A single-adapter run has no lanes: the
device line already says everything, so this stays empty.
"""

from __future__ import annotations

from rich.text import Text

from vajra_tui.engine.events import LanesUpdated

MARKS = {"timing": ("▶", "bold yellow"), "admitting": ("·", "cyan"), "idle": ("·", "dim"),
         "starting": ("…", "dim"), "lost": ("✗", "bold red")}


def lanes_text(lanes: LanesUpdated | None) -> Text:
    """``Lanes ▶gpu0#0 ·gpu1#1  spread 1.02x`` (empty Text without lanes)."""
    text = Text()
    if lanes is None or not lanes.lanes:
        return text
    text.append("Lanes ", style="bold")
    for n, lane in enumerate(lanes.lanes):
        mark, style = MARKS.get(lane.state, ("·", "dim"))
        index = f"#{lane.adapter_index}" if lane.adapter_index is not None else ""
        text.append(("" if n == 0 else " ") + f"{mark}{lane.label}{index}", style=style)
    if lanes.spread is not None:
        text.append(f"  spread {lanes.spread:.2f}x", style="dim")
    return text
