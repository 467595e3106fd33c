"""Attention C's prefetch (``pf=1``, attention_outer.py): the next key block's K and V in registers.

Why: on the H200 one 256-lane workgroup of C fills an SM, so while its lanes load a block
from the storage buffer and wait at the barrier no other warps run. Loading the next block
right after this block's first barrier, into registers, and writing it to workgroup memory
at the top of the next trip puts that latency behind a block of FMAs (benchmarks/NOTES.md,
round 11). The layout written is ``_stage``'s: K transposed (``Kt[d][key]``), V as rows.
"""

from __future__ import annotations

from vajra_tui.engine.sources.library.base import Emitter, Params, Size


def staged_slots(p: Params, s: Size) -> tuple[int, int]:
    """(vec4 a block stages per operand, the staging loop's trips per lane)."""
    bk, d4 = p["wx"] * p["tn"], s["D"] // 4
    total = bk * d4
    return total, -(-total // (p["wx"] * p["wy"]))


def declare(e: Emitter, p: Params, s: Size, k: bool, v: bool) -> None:
    """The registers a lane carries the next block in (``pf=1``), declared before the loop."""
    _, trips = staged_slots(p, s)
    e(*[f"var pk{j} = vec4<f32>(0.0);" for j in range(trips) if k],
      *[f"var pv{j} = vec4<f32>(0.0);" for j in range(trips) if v])


def fetch(e: Emitter, p: Params, s: Size, kb: str, k: bool, v: bool) -> None:
    """The key block from ``kb`` into the prefetch registers (zeros past S); a lane's slot past
    the block (when the block does not divide over the lanes) loads a harmless clamped one."""
    total, trips = staged_slots(p, s)
    bk, d4 = p["wx"] * p["tn"], s["D"] // 4
    nt = p["wx"] * p["wy"]
    for j in range(trips):
        e.open("{")
        e(f"let i = min(li + {j * nt}u, {total - 1}u);")
        if k:
            e(f"let key = {kb} + i % {bk}u;",
              f"pk{j} = select(vec4<f32>(0.0), K[head4 + min(key, S - 1u) * {d4}u + i / {bk}u], key < S);")
        if v:
            e(f"let vkey = {kb} + i / {d4}u;",
              f"pv{j} = select(vec4<f32>(0.0), V[head4 + min(vkey, S - 1u) * {d4}u + i % {d4}u], vkey < S);")
        e.close()


def store(e: Emitter, p: Params, s: Size, k: bool, v: str | None) -> None:
    """The prefetch registers into workgroup memory, as ``_stage`` lays the block out."""
    total, trips = staged_slots(p, s)
    bk = p["wx"] * p["tn"]
    nt = p["wx"] * p["wy"]
    for j in range(trips):
        e.open("{")
        e(f"let i = li + {j * nt}u;")
        if total % nt:
            e.open(f"if (i < {total}u) {{")
        if k:
            e(f"let w = (4u * (i / {bk}u)) * {bk // 4}u + (i % {bk}u) / 4u;", "let lane = i % 4u;")
            e(*[f"Kt[w + {q * bk // 4}u][lane] = pk{j}[{q}];" for q in range(4)])
        if v:
            e(f"{v}[i] = pv{j};")
        if total % nt:
            e.close()
        e.close()
