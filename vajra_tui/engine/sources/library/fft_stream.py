"""fft's and fft2's ``seq``: a workgroup of the register design transforms ``seq`` groups of
sub-FFTs in turn, and loads the next group's inputs into registers before it transforms the
current one.

Why (benchmarks/NOTES.md, 2026-12-06, the ablation): with only its loads and stores a
contiguous pass runs at 88-90% of copy, and the butterflies or the exchanges alone cost
little, but the two together add 17-23%. While a workgroup computes and waits at its
barriers it has no loads in flight, and too few others are resident to cover for it. A
group's loads issued before the previous group's transform keep memory busy through it, at
the cost of a second set of value registers (``nv``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from vajra_tui.engine.sources.library.base import Emitter

if TYPE_CHECKING:  # fft_gen imports this module
    from vajra_tui.engine.sources.library.fft_gen import PassSpec


def group(e: Emitter, spec: PassSpec, cols: int, wx: str, s: str = "") -> None:
    """The lets that place one group: ``wx``, its workgroup index (a folded rows pass's row
    r0), its first sub-FFT ``g``, and where its inputs and outputs start (``ib``, ``ob``).
    ``s``: the group's turn in a streamed workgroup (its sub-FFTs follow the earlier turns')."""
    turn = f" + {s} * {cols}u" if s else ""
    e(f"let wx = {wx};", f"let g = wid.x * {spec.const}{turn} + c;", f"let ib = {spec.ibase};",
      f"let ob = {spec.obase};")


def streamed(e: Emitter, spec: PassSpec, cols: int, seq: int, values: int,
             load: Callable[[str], None], transform: Callable[[], None]) -> None:
    """``seq`` groups in turn: the first group's inputs into ``nv``, then each turn takes them
    into ``v``, starts the next group's loads into ``nv`` and transforms and stores ``v``. The
    turn counter is uniform, so every barrier stays in uniform control flow; a barrier ends
    each turn, as the next group's first exchange writes what this one's last exchange read."""
    e(f"var nv: array<vec2<f32>, {values}>;")
    e.open("{")
    group(e, spec, cols, f"wid.x * {seq}u", "0u")
    load("nv")
    e.close()
    e.open(f"for (var s = 0u; s < {seq}u; s = s + 1u) {{")
    e("v = nv;")
    e.open(f"if (s + 1u < {seq}u) {{")
    group(e, spec, cols, f"wid.x * {seq}u + s + 1u", "(s + 1u)")
    load("nv")
    e.close()
    group(e, spec, cols, f"wid.x * {seq}u + s", "s")
    transform()
    e("workgroupBarrier();")
    e.close()


def turns(seq: int, workgroups: int) -> int:
    """The pass's own ``seq``: at most its workgroups (each takes ``seq`` groups), halved
    until it divides them."""
    s = max(1, min(seq, workgroups))
    while workgroups % s:
        s //= 2
    return s
