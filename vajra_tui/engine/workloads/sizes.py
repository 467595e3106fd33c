"""``--size`` read against a workload's dims: 'seed', 'large', '2048', '4096x1024', 'M=64,N=32'.

What :meth:`Workload.size <vajra_tui.engine.workloads.base.Workload.size>` and
``size_hint`` do, split from ``base.py`` so that the type reads as its fields and what
follows from them. Every dim of the result is a positive integer no larger than 2^30;
anything else is one :class:`SizeError` line naming the dim.
"""

from __future__ import annotations

import numbers
import re
from typing import TYPE_CHECKING, Mapping

from vajra_tui.engine.workloads.bindings import Size
from vajra_tui.engine.workloads.errors import SizeError

if TYPE_CHECKING:
    from vajra_tui.engine.workloads.base import Workload


def resolve(w: Workload, spec: str | Mapping[str, int] | None = None) -> Size:
    """Resolve 'seed', 'large', '2048', '4096x1024' or 'M=64,N=32,K=16'."""
    if spec is None or spec == "":
        return dict(w.presets["seed"])
    if isinstance(spec, Mapping):
        return _checked(w, {**w.presets["seed"], **w.defaults, **_given(w, spec)})
    text = spec.strip()
    if text.lower() in w.presets:
        return dict(w.presets[text.lower()])
    if "=" in text:
        return _checked(w, _named(w, text))
    parts = re.split(r"[xX×,]", text)
    try:
        values = [int(p.replace("_", "")) for p in parts]
    except ValueError:
        raise SizeError(f"bad size {spec!r} for {w.name}: expected {hint(w)}") from None
    if len(values) > len(w.dims):
        raise SizeError(f"bad size {spec!r}: {w.name} has {len(w.dims)} dims")
    out = {**w.presets["seed"], **w.defaults}
    if len(values) == 1 and w.broadcast:
        out.update({d: values[0] for d in w.broadcast})
    else:
        out.update(dict(zip(w.dims, values)))
    return _checked(w, out)


def hint(w: Workload) -> str:
    """What ``--size`` takes, with the seed size as the example: ``seed | large | 512x512x512 (MxNxK)``."""
    seed = "x".join(str(w.presets["seed"][d]) for d in w.dims)
    return f"seed | large | {seed} ({'x'.join(w.dims)})"


def _given(w: Workload, spec: Mapping) -> Size:
    """A size from Python (``size={"ROWS": 64}``), held to what ``--size ROWS=64`` is: known dims
    (any case), each a positive integer; ``{"M": 64}`` for softmax ran at the seed size unsaid."""
    by_upper = {d.upper(): d for d in w.dims}
    out: dict[str, int] = {}
    for key, value in spec.items():
        dim = key if key in w.dims else by_upper.get(str(key).upper())
        if dim is None:
            raise SizeError(f"unknown dimension {key!r} for {w.name}: {', '.join(w.dims)}")
        if dim in out:
            raise SizeError(f"{dim} is given twice in {dict(spec)!r}")
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise SizeError(f"bad value for {dim}: {value!r} (want a positive integer)")
        out[dim] = int(value)
    return out


def _named(w: Workload, text: str) -> Size:
    out = {**w.presets["seed"], **w.defaults}  # a dim not named: as a shorter plain size leaves it
    by_upper = {d.upper(): d for d in w.dims}
    given: set[str] = set()
    for item in text.split(","):
        key, _, value = item.partition("=")
        dim = key.strip() if key.strip() in w.dims else by_upper.get(key.strip().upper())
        if dim is None:
            raise SizeError(f"unknown dimension {key.strip()!r} for {w.name}: {', '.join(w.dims)}")
        if dim in given:  # "M=64,M=32": which one was meant cannot be guessed
            raise SizeError(f"{dim} is given twice in {text!r}")
        given.add(dim)
        try:
            out[dim] = int(value)
        except ValueError:
            raise SizeError(f"bad value for {dim}: {value!r}") from None
    return out


def _checked(w: Workload, size: Mapping[str, int]) -> Size:
    for dim in w.dims:
        if size.get(dim, 0) < 1:
            raise SizeError(f"{w.name}: {dim} must be a positive integer")
        if size[dim] > 1 << 30:
            raise SizeError(f"{w.name}: {dim}={size[dim]} is too large")
    return {d: int(size[d]) for d in w.dims}
