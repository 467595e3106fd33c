"""Checks between "it compiled" and "it is timed": duplicates and over-dispatch.

Both are mistakes that verification alone cannot see. Two slots that hold the
same kernel would be timed twice and ranked as rivals. A kernel whose tile
header is missing or misspelt still verifies when each workgroup computes a
larger block than the header says, but it is dispatched many times over and
its timing is that many times worse; the model and the user need to hear why.
"""

from __future__ import annotations

import weakref
from typing import Awaitable, Callable, NamedTuple

from vajra_tui.engine.admission.contract import Stitched
from vajra_tui.engine.events import CandidateResult
from vajra_tui.engine.wgsl.tokens import IDENT, tokenize

MAX_PROBE_FACTOR = 64

# Runs the kernel once on the given dispatch grid and says whether every output verified.
CoversWith = Callable[[tuple[int, int, int]], Awaitable[bool]]


def duplicate_of(sha256: str, cid: str, stitched: dict[str, Stitched],
                 results: dict[str, CandidateResult]) -> CandidateResult | None:
    """The earlier candidate of this session with byte-identical stitched source, if any.

    Every admission asks this of all the session's kernels, and ``Stitched.sha256`` hashes
    its whole source (library kernels run to 140 KB): asked afresh, a long run's hashing
    grew with the square of its candidates. Each kernel is hashed once (:func:`identity`);
    what remains per call is a pass over the dict that compares references.
    """
    for other, st in stitched.items():
        if other == cid or identity(st) != sha256:
            continue
        earlier = results.get(other)
        # A result still in flight reads "crashed" with no reason; one that really crashed
        # (a lost worker) never had a fair run, so a copy of it deserves one.
        if earlier is not None and not (earlier.status == "crashed" and earlier.reason):
            return earlier
    return None


class _Known(NamedTuple):
    """A kernel's sha256 and what it was computed from (a Stitched is mutable)."""

    source: str
    constants: dict
    sha256: str


# id of a live Stitched -> its identity; an entry leaves with its kernel (a weak reference's
# callback), so this holds no kernel longer than the session does.
_KNOWN: dict[int, tuple[weakref.ref, _Known]] = {}


def identity(st: Stitched) -> str:
    """``st.sha256``, hashed once per kernel while its source and constants stay the same."""
    key = id(st)
    entry = _KNOWN.get(key)
    if entry is not None and entry[0]() is st:
        known = entry[1]
        if known.source is st.source and known.constants == st.constants:
            return known.sha256
    sha = st.sha256
    _KNOWN[key] = (weakref.ref(st, lambda _ref, key=key: _forget(key, _ref)),
                   _Known(st.source, dict(st.constants), sha))
    return sha


def _forget(key: int, ref: weakref.ref) -> None:
    entry = _KNOWN.get(key)
    if entry is not None and entry[0] is ref:  # not a later kernel's entry at a reused id
        del _KNOWN[key]


def known_count() -> int:
    """How many kernels' identities are remembered (tests: it follows the live kernels)."""
    return len(_KNOWN)


def probe_applies(st: Stitched, source: str) -> bool:
    """Only a grid the kernel cannot see is probed.

    A folded grid maps workgroups through ``vajra_tile`` and a kernel that reads
    ``num_workgroups`` strides over whatever grid it gets, so shrinking either
    says nothing about its tile.
    """
    if st.dispatch[:2] != st.tiles or st.tiles == (1, 1):
        return False
    return not any(t.kind == IDENT and t.text == "num_workgroups" for t in tokenize(source))


async def over_dispatch(st: Stitched, covers: CoversWith) -> tuple[int, int]:
    """Per axis, by how many times (a power of two) the planned grid can shrink and still verify.

    A correct kernel fails at the first halving of each axis, so this costs one or
    two dispatches. ceil(ceil(g/t)/f) == ceil(g/(t*f)), so a factor found here is
    exactly the tile the kernel should have declared.
    """
    factors = [1, 1]
    for axis in (0, 1):
        factor = 1
        while factor * 2 <= min(st.tiles[axis], MAX_PROBE_FACTOR):
            trial = factors.copy()
            trial[axis] = factor * 2
            grid = (-(-st.tiles[0] // trial[0]), -(-st.tiles[1] // trial[1]), 1)
            if not await covers(grid):
                break
            factor *= 2
            factors[axis] = factor
    return factors[0], factors[1]
