"""Split-K for attention C ("outer"): the keys of a query block split over ``KS`` workgroups.

Why: with few heads and a long S, one workgroup per query block leaves most of a big GPU
idle (B=1, H=1, S=8192 in 128-row blocks is 64 workgroups), and the blocks of a causal
head differ in length, so the longest run on alone. Splitting each block's keys gives
``KS`` times the workgroups, each with a ``KS``-th of the keys; a second pass merges them.

The main pass is C as it is, with three changes:

- its tile is ``bq*D/KS x 1``, so the grid has ``ceil(S*KS/bq)`` tiles along x, one per
  (query block, split) pair: ``qb = pair / KS``, ``sp = pair % KS``. When S is not a
  multiple of ``bq`` the last block gets fewer pairs (``kss = min(KS, TILES_X - qb*KS)``);
  causal pairs start heaviest first across every head, as C's blocks do;
- split ``sp`` runs the blocks of keys ``[sp*chunk, (sp+1)*chunk)`` of the block's keys
  (all S, or a causal block's up to its last row), ``chunk`` a whole number of key blocks;
- it writes the split's normalised output and its (max, sum) into ``Partial``: a slot of
  ``D/4 + 1`` vec4 per (head, row, split), at ``((head*S + row)*KS + sp) * (D/4 + 1)``.

``combine`` (the workload's optional pass, ``CR`` rows per workgroup of ``D/4 x CR`` lanes)
reads a row's ``kss`` slots: with ``M`` the largest max, each split weighs
``sum * exp2(max - M)``, and O is the weighted mean of the splits' outputs. A split with no
visible key has sum 0 (or max -1e30 with the weight exp2(-1e30 - M) = 0), so it adds nothing.

``KS`` is an ``override`` (a pipeline constant): ``--source params`` tunes it on the
exported kernel without a new module, within the ``// require:`` that the slots fit.
"""

from __future__ import annotations

from vajra_tui.engine.sources.library.attention_parts import NEG
from vajra_tui.engine.sources.library.base import TILE_GUARD, Emitter

KS_VALUES = (2, 4, 8, 16)  # the // tune: line of KS
COMBINE_ROWS = 16  # CR: query rows per combine workgroup


def declarations(e: Emitter, ks: int) -> None:
    """The split count (an override the params search tunes) and the scratch, as vec4 slots."""
    e(f"override KS: u32 = {ks}u;",
      "// tune: KS = " + ", ".join(str(k) for k in KS_VALUES),
      "// require: KS * B * H * S * (D + 4) <= 33554432",
      "@group(0) @binding(4) var<storage, read_write> Partial: array<vec4<f32>>;")


def tile(e: Emitter, bq: int, d4: int) -> None:
    """``q0``, ``head4``, ``hd``, the split ``sp`` and the block's split count ``kss``."""
    e(*TILE_GUARD, "let lin = t.x + t.y * TILES_X;",
      "let pair = select(t.x, TILES_X - 1u - lin / TILES_Y, MASK == 2u);",
      "let hd = select(t.y, lin % TILES_Y, MASK == 2u);",
      "let qb = pair / KS;", "let sp = pair % KS;", "let kss = min(KS, TILES_X - qb * KS);",
      f"let q0 = qb * {bq}u;", f"let head4 = hd * S * {d4}u;")


def open_key_loop(e: Emitter, bq: int, bk: int) -> None:
    """Open the loop over this split's key blocks (``k0``)."""
    e("var kend = S;", f"if (MASK == 2u) {{ kend = min(S, q0 + {bq}u); }}",
      f"let chunk = ((kend + kss - 1u) / kss + {bk - 1}u) / {bk}u * {bk}u;",
      "let klo = sp * chunk;", "let khi = min(kend, klo + chunk);")
    e.open(f"for (var k0 = klo; k0 < khi; k0 = k0 + {bk}u) {{")


def write_partial(e: Emitter, a: int, row: str, d4: int, outs: list[tuple[str, str]]) -> None:
    """Row ``a``'s (``row``, its absolute index) split result: ``outs`` as (vec4 offset within
    the row, value) pairs, normalised by the lane's sum; lane 0 of the row adds (max, sum)."""
    e.open(f"if ({row} < S) {{")
    e(f"let slot{a} = ((hd * S + {row}) * KS + sp) * {d4 + 1}u;",
      f"let inv{a} = select(0.0, 1.0 / l{a}, l{a} > 0.0);")
    e(*[f"Partial[slot{a} + {off}] = {value} * inv{a};" for off, value in outs])
    e(f"if (tx == 0u) {{ Partial[slot{a} + {d4}u] = vec4<f32>(m{a}, l{a}, 0.0, 0.0); }}")
    e.close()


def combine(e: Emitter, bq: int, d4: int) -> None:
    """The optional pass: each row's splits merged into O."""
    stride = d4 + 1
    e("", f"// tune: CR = {COMBINE_ROWS}", "const CR: u32 = {{CR}}u;",
      "// Pass 2: a row's splits, weighted by sum * exp2(max - the largest max), into O.",
      f"@compute @workgroup_size({d4}, CR)")
    e.open("fn combine(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {")
    e("let row = wid.x * CR + lid.y;")
    e.open("if (row < S) {")
    e(f"let kss = min(KS, TILES_X - row / {bq}u * KS);", f"let base = (wid.y * S + row) * KS * {stride}u;",
      f"var mx = {NEG};")
    e(f"for (var u = 0u; u < kss; u = u + 1u) {{ mx = max(mx, Partial[base + u * {stride}u + {d4}u].x); }}")
    e("var den = 0.0;", "var acc = vec4<f32>(0.0);")
    e.open("for (var u = 0u; u < kss; u = u + 1u) {")
    e(f"let ml = Partial[base + u * {stride}u + {d4}u];", "let w = ml.y * exp2(ml.x - mx);",
      "den = den + w;", f"acc = acc + w * Partial[base + u * {stride}u + lid.x];")
    e.close()
    e(f"O[(wid.y * S + row) * {d4}u + lid.x] = acc / den;")
    e.close()
    e.close()
