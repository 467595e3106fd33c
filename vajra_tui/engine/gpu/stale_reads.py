"""A failed verification run again to tell two mistakes apart.

An element that holds its poison after a dispatch may never have been written, or the
kernel may compute it from what the output held before (an in-place or accumulating
kernel whose workload declares a plain output: NaN poison survives arithmetic, and
Collatz maps 0xFFFFFFFF to itself). Running once more from the same poison and once from
zeros separates them: an element equal in both poisoned runs that changes with the fill
read the old contents; one left as the fill both times was never written; one that
differs between the two poisoned runs is a race, not blamed on the fill.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vajra_tui.engine.gpu.resources import Program
from vajra_tui.engine.gpu.verify import poison_word

SECOND_FILL = 0x00000000  # the second fill of a failed verification: zeros, in every dtype


def stale_reads(rt: Any, workload: Any, program: Program, seed_index: int, verdict: dict) -> dict:
    """``verdict`` with its reason rewritten when outputs were computed from their old contents."""
    outs = [b for b in workload.outputs if rt.outs.poisoned(b.name)]
    first = {b.name: _words(rt, b.name) for b in outs}
    rt.dispatch(program)
    again = {b.name: _words(rt, b.name) for b in outs}
    rt.dispatch(program, word=SECOND_FILL)
    stale = {}
    for b in outs:
        second = _words(rt, b.name)
        unwritten = (first[b.name] == poison_word(b.dtype, seed_index)) & (second == SECOND_FILL)
        changed = (first[b.name] == again[b.name]) & (first[b.name] != second) & ~unwritten
        stale[b.name] = int(np.count_nonzero(changed))
    if not any(stale.values()):
        return verdict
    which = ", ".join(f"{n} ({count} elements)" for n, count in stale.items() if count)
    return {**verdict, "reason": (
        f"reads its output's old contents: {which} changed with what the buffer held before the "
        "dispatch (the poison, then zeros), so the kernel computes from it; declare the binding "
        "'inout' (its start given by make_inputs) or fill=0 if it accumulates from zero "
        f"({verdict['reason']})")}


def _words(rt: Any, name: str) -> np.ndarray:
    return np.frombuffer(rt.queue.read_buffer(rt.buffers[name]), np.uint32).copy()
