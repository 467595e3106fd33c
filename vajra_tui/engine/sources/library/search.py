"""Neighbourhood search over a template's parameter space, guided by measured times.

Moves change one axis by one step (distance 1), then two axes at once (distance
2); axes a template added late (new design switches) are stepped first. The first
seeds are the measured winner and the next-best measured points; an axis whose
step in one direction was measured slower than the winner is tried last in that
direction, one whose step improved is pushed further first.

A budget larger than those neighbourhoods (sgemm's hold about 190 kernels at 4096³,
out of 2,828 usable configurations) is filled from :func:`by_distance`: the rest of
the template's space, nearest first, so ``--budget 600`` measures 600 kernels.
"""

from __future__ import annotations

from itertools import combinations, product
from typing import Any, Iterator

from vajra_tui.engine.sources.library.base import Params, Template


def steps(t: Template, p: Params, axis: str) -> list[Any]:
    values = t.axes[axis]
    i = values.index(p[axis])
    return [values[j] for j in (i + 1, i - 1) if 0 <= j < len(values)]


def neighbours(t: Template, p: Params, times: dict[str, float], best: float) -> Iterator[Params]:
    """Distance-1 moves (promising directions first), then distance-2 moves."""
    ranked: list[tuple[float, Params]] = []
    # design switches added late (t.late) first: the configurations that won before they
    # existed were tuned over every other axis already, so theirs is the untried direction
    axes = [a for a in t.axes if a in t.late] + [a for a in t.axes if a not in t.late]
    for order, axis in enumerate(axes):
        for value in steps(t, p, axis):
            q = {**p, axis: value}
            # a measured point beyond q in the same direction says which way is downhill
            seen = times.get(t.key(q))
            ranked.append((_promise(t, p, axis, value, times, best) + order * 1e-3
                           + (0.0 if seen is None else 10.0), q))
    ranked.sort(key=lambda x: x[0])
    yield from (q for _, q in ranked)
    for a, b in combinations(t.axes, 2):
        for va in steps(t, p, a):
            for vb in steps(t, p, b):
                yield {**p, a: va, b: vb}


def _promise(t: Template, p: Params, axis: str, value: Any, times: dict[str, float],
             best: float) -> float:
    """Lower is more promising: compare the measured point one step the other way."""
    values = t.axes[axis]
    i, j = values.index(p[axis]), values.index(value)
    back = 2 * i - j
    if 0 <= back < len(values):
        other = times.get(t.key({**p, axis: values[back]}))
        if other is not None and best > 0:
            # the opposite step was slower: this direction is downhill
            return -1.0 if other > best else 1.0
    return 0.0


def by_distance(t: Template, p: Params) -> Iterator[Params]:
    """Every point of ``t``'s space, nearest to ``p`` first: distance is the number of steps
    along each axis, summed; ties keep the axes' order (product order)."""
    origin = [t.axes[a].index(p[a]) for a in t.axes]
    points = product(*(range(len(values)) for values in t.axes.values()))
    ranked = sorted(points, key=lambda idx: sum(abs(i - o) for i, o in zip(idx, origin)))
    for idx in ranked:
        yield {a: t.axes[a][i] for a, i in zip(t.axes, idx)}
