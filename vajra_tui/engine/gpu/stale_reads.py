"""A failed verification run again to tell two mistakes apart.

An element that is wrong after a dispatch may never have been written, or the kernel may
compute it from what the output held before (an in-place or accumulating kernel whose
workload declares a plain output: NaN poison survives arithmetic, ``max``/``min`` return
the other operand, and Collatz maps 0xFFFFFFFF to itself). Running twice from the same
poison, once from zeros and once from the extremes (verify.other_fill: each element at one
end of its type's range) separates them: an element equal in both poisoned runs that
changes with the fill read the old contents (zeros catch ``y += v``, which the extremes
absorb; the extremes catch ``max``/``min``, which zeros may not); one left as its fill every
time was never written; one that differs between the two poisoned runs is a race, not
blamed on the fill.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vajra_tui.engine.gpu.resources import Program
from vajra_tui.engine.gpu.verify import other_fill, poison_word


def stale_reads(rt: Any, workload: Any, program: Program, seed_index: int, verdict: dict,
                counts: dict[str, int]) -> dict:
    """``verdict`` with its reason rewritten when outputs were computed from their old contents.

    ``counts``: each output's elements (the reference's size): the padding of an f16 buffer
    to whole words is never written and must not count as read."""
    outs = [b for b in workload.outputs if rt.outs.poisoned(b.name)]
    rt.dispatch(program)
    first = _elements(rt, outs, counts)
    rt.dispatch(program)
    again = _elements(rt, outs, counts)
    fills = ("zeros", "extremes")
    others = {kind: _run_from(rt, program, kind, outs, counts) for kind in fills}
    stale: dict[str, np.ndarray] = {}
    unwritten: dict[str, np.ndarray] = {}
    for b in outs:
        was, words = first[b.name], {kind: others[kind][b.name] for kind in fills}
        held = was == _as_elements(np.array([poison_word(b.dtype, seed_index)] * 2, np.uint32), b.dtype, was.size)
        changed = np.zeros(was.shape, bool)
        for kind in fills:
            held &= words[kind] == _as_elements(np.array(other_fill(b.dtype, kind), np.uint32), b.dtype, was.size)
            changed |= was != words[kind]
        stale[b.name] = (was == again[b.name]) & changed & ~held
        unwritten[b.name] = held
    if not any(m.any() for m in stale.values()):
        return verdict
    return {**verdict, "reason": (
        f"reads its output's old contents: {_counts(stale, outs)} changed with what the buffer held "
        "before the dispatch (the poison, zeros, the ends of its range), so the kernel computes from it; declare "
        "the binding 'inout' (its start given by make_inputs) or fill=0 if it accumulates from zero"
        + (f"; never written: {_counts(unwritten, outs)}" if any(m.any() for m in unwritten.values()) else ""))}


def _counts(masks: dict[str, np.ndarray], outs: list) -> str:
    """"Y (720 elements, first at element 0)" for each output with any element in its mask."""
    return ", ".join(f"{b.name} ({int(np.count_nonzero(masks[b.name]))} elements, first at element "
                     f"{int(np.argmax(masks[b.name]))})" for b in outs if masks[b.name].any())


def _run_from(rt: Any, program: Program, kind: str, outs: list, counts: dict[str, int]) -> dict[str, np.ndarray]:
    """Each output's elements after one run started from the ``kind`` fill."""
    rt.dispatch(program, fill=kind)
    return _elements(rt, outs, counts)


def _as_elements(words: np.ndarray, dtype: str, count: int) -> np.ndarray:
    """``words`` repeated over ``count`` elements of ``dtype``, as unsigned bits (two per word
    for f16): what a fill of those words leaves in the buffer, element by element."""
    per = 2 if dtype == "f16" else 1
    tiled = np.resize(words, -(-count // per) + 1).astype(np.uint32)
    return (tiled.view(np.uint16) if per == 2 else tiled)[:count]


def _elements(rt: Any, outs: list, counts: dict[str, int]) -> dict[str, np.ndarray]:
    """Each output's first ``counts`` elements as unsigned bits (f16 as 16-bit)."""
    got = {}
    for b in outs:
        raw = np.frombuffer(rt.queue.read_buffer(rt.buffers[b.name]), np.uint32)
        got[b.name] = _as_elements(raw, b.dtype, counts[b.name]).copy()
    return got
