"""What the three attention designs (attention.py's A, attention_gen.py's B, attention_outer.py's
C) emit alike: the masked score, Q's scale, the causal query-block order, the loop over key
blocks, the vec4 bindings, the shuffle butterfly and the max of a row's scores.
"""

from __future__ import annotations

from vajra_tui.engine.sources.library.base import TILE_GUARD, Emitter

NEG = "-1.0e30"  # a masked score (and a running max's start): finite, so exp2(NEG - m) is 0, never inf - inf

# Q pre-scaled by log2(e) / sqrt(D), so the softmax's weights are exp2 of the scores
QSCALE = "let qscale = 1.4426950408889634 / sqrt(f32(D));"


def vec4_bindings(e: Emitter) -> None:
    """Q, K, V and O bound as vec4 rows."""
    for i, n in enumerate("QKV"):
        e(f"@group(0) @binding({i}) var<storage, read> {n}: array<vec4<f32>>;")
    e("@group(0) @binding(3) var<storage, read_write> O: array<vec4<f32>>;")


def heaviest_first(e: Emitter, bq: int, d4: int) -> None:
    """The tile: ``q0``, the block's first row, and ``head4``, the head's first vec4.

    Causal blocks are ordered heaviest first across every head, not within each: the GPU
    starts workgroups in the order of their linear index, so the tile at index ``i`` takes
    the ``i / H``-th heaviest query block of head ``i % H``. Reversing blocks within a head
    only (the previous order) started head 0's lightest blocks before the last heads' longest
    ones, which then ran on in a tail (benchmarks/NOTES.md, #27)."""
    e(*TILE_GUARD, "let lin = t.x + t.y * TILES_X;",
      "let qb = select(t.x, TILES_X - 1u - lin / TILES_Y, MASK == 2u);",
      "let hd = select(t.y, lin % TILES_Y, MASK == 2u);",
      f"let q0 = qb * {bq}u;", f"let head4 = hd * S * {d4}u;")


def open_key_loop(e: Emitter, bq: int, bk: int) -> None:
    """Open the loop over key blocks (``k0``): all S keys, or a causal block's up to its last row."""
    e("var kend = S;", f"if (MASK == 2u) {{ kend = min(S, q0 + {bq}u); }}")
    e.open(f"for (var k0 = 0u; k0 < kend; k0 = k0 + {bk}u) {{")


def xor_steps(wx: int) -> list[int]:
    """The lane distances of a subgroupShuffleXor butterfly over ``wx`` lanes: 1, 2, ... wx/2."""
    return [1 << i for i in range(wx.bit_length() - 1)]


def max_of(terms: list[str]) -> str:
    """A WGSL expression for the max of ``terms``: nested max() calls, left to right."""
    return "max(" * (len(terms) - 1) + terms[0] + "".join(f", {x})" for x in terms[1:])
