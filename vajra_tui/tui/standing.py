"""What the variants list and the keys read off the engine's last ranking, in one place.

The engine ranks and batches; nothing here measures or re-ranks. It only picks out, from
the events the :class:`~vajra_tui.tui.state.RunState` folded, the same things the CLI's
table and the engine's ``Report`` use: the ranking's order and the batch whose baseline
every shown speedup divides. A speedup divides its *own* batch's baseline sample, so one
from an earlier batch beside the final batch's misleads (batch 3's D2 at 10.07x next to
batch 6's D3 at 9.55x, though D3 is twice as fast): such rows say which batch instead.
"""

from __future__ import annotations

from vajra_tui.tui.state import CandidateView, RunState


def final_batch(state: RunState) -> int | None:
    """The batch whose baseline the shown speedups divide, as the engine's report takes it:
    the last ranking's shoot-out (the baseline's own batch for recordings from before rankings
    carried one); None before any ranking, when each row has only its own batch."""
    if state.ranking is None:
        return None
    if state.ranking.batch:
        return state.ranking.batch
    base = state.baseline
    return base.result.batch if base is not None and base.result is not None else None


def other_batch(view: CandidateView, final: int | None) -> int | None:
    """The batch of ``view``'s speedup when that is not ``final`` (None: it may be shown)."""
    r = view.result
    if r is None or final is None or not r.batch or r.batch == final or r.speedup is None:
        return None
    return r.batch


def standing(state: RunState) -> list[CandidateView]:
    """Every variant in the last ranking's order (fastest first), then the rest in the order
    they appeared (failed, unranked or still running)."""
    ranked = [view for view in state.ranked if view.id != "baseline"]
    placed = {view.id for view in ranked}
    return ranked + [view for view in state.variants if view.id not in placed]


def templates_missing(state: RunState) -> str:
    """The workload's name when the library said it has no templates for it, else ''."""
    if not state.no_templates:
        return ""
    return state.workload.name if state.workload is not None else "this workload"


def cannot_evolve(state: RunState) -> str:
    """Why no later generation can propose a kernel, in one line ('' when one can).

    The library is the source (``--source library``, or ``auto`` without a model key) and it
    has no templates for this workload: e would run an empty generation. The params source
    and a model evolve without templates, so they never get this answer.
    """
    name = templates_missing(state)
    if not name or state.generations.get(state.generation, "") != "library":
        return ""
    return (f"nothing to evolve: the library has no templates for {name}; measure your kernels "
            "with --kernel FILE, or tune a kernel's // tune: lines with --source params")
