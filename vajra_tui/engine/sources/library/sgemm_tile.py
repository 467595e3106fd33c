"""What SGEMM C's two layouts share: the flat one (sgemm_vec4.py, ``lay=0``) and the hoisted
one (sgemm_hoist.py, ``lay=1``) lay out and index workgroup memory differently, but have the
same tile arithmetic, prologue, register set, FMAs per K step and epilogue.
"""

from __future__ import annotations

from vajra_tui.engine.sources.library.base import TILE_GUARD, Emitter, Params, open_main


class Tile:
    """The tile arithmetic every part of both generators shares."""

    def __init__(self, p: Params) -> None:
        self.bm, self.bn, self.bk, self.tm, self.tn = p["bm"], p["bn"], p["bk"], p["tm"], p["tn"]
        self.db, self.spec = bool(p["db"]), bool(p["spec"])
        self.wx, self.wy = self.bn // self.tn, self.bm // self.tm
        self.nt = self.wx * self.wy
        self.tm4, self.tn4 = self.tm // 4, self.tn // 4
        # vec4 of one A / B K-slice: the loads per slice, and its slots in workgroup memory
        self.la, self.lb = self.bk * self.bm // 4, self.bk * self.bn // 4
        self.sa, self.sb = -(-self.la // self.nt), -(-self.lb // self.nt)  # vec4 registers per thread


def guarded(e: Emitter, sh: Tile, q: int, count: int, lines: list[str]) -> None:
    """Lines for the q-th vec4 a thread moves, inside a guard when the slice runs out first."""
    if q * sh.nt + sh.nt > count:
        e.open(f"if (li + {q * sh.nt}u < {count}u) {{")
        e(*lines)
        e.close()
    else:
        e(*lines)


def bindings(e: Emitter, sh: Tile) -> None:
    """A size-specialised kernel reads and writes its matrices as vec4."""
    if sh.spec:
        e("@group(0) @binding(0) var<storage, read> A: array<vec4<f32>>;",
          "@group(0) @binding(1) var<storage, read> B: array<vec4<f32>>;",
          "@group(0) @binding(2) var<storage, read_write> C: array<vec4<f32>>;")


def begin(e: Emitter, sh: Tile) -> None:
    """The entry point, the tile's origin (row0, col0) and the thread's (tx, ty)."""
    open_main(e, sh.wx, sh.wy)
    e(*TILE_GUARD, f"let row0 = t.y * {sh.bm}u;", f"let col0 = t.x * {sh.bn}u;",
      "let tx = lid.x;", "let ty = lid.y;")


def registers(e: Emitter, sh: Tile) -> None:
    """The tm x tn accumulators (tn/4 vec4 per row) and the prefetch registers of A and B."""
    for i in range(sh.tm):
        e(*[f"var c{i}_{g} = vec4<f32>(0.0);" for g in range(sh.tn4)])
    e(*[f"var ra{q} = vec4<f32>(0.0);" for q in range(sh.sa)])
    e(*[f"var rb{q} = vec4<f32>(0.0);" for q in range(sh.sb)])


def fmas(e: Emitter, sh: Tile, kk: int) -> None:
    """Step kk's rank-1 update: the tm rows of ``a*_{kk}`` (vec4 of four rows) times the vec4
    ``b*_{kk}``, broadcast one row at a time."""
    for i in range(sh.tm):
        a = f"vec4<f32>(a{i // 4}_{kk}.{'xyzw'[i % 4]})"
        e(*[f"c{i}_{g} = fma({a}, b{g}_{kk}, c{i}_{g});" for g in range(sh.tn4)])


def epilogue(e: Emitter, sh: Tile) -> None:
    """The accumulators out to C: vec4 stores when size-specialised, else bounds-checked scalars."""
    for h in range(sh.tm4):
        for c in range(4):
            i = h * 4 + c
            e(f"let r{i} = row0 + ({h * sh.wy}u + ty) * 4u + {c}u;")
            for g in range(sh.tn4):
                colq = f"col0 / 4u + {g * sh.wx}u + tx"
                if sh.spec:
                    e(f"C[r{i} * (N / 4u) + {colq}] = c{i}_{g};")
                else:
                    for j in range(4):
                        e(f"if (r{i} < M && ({colq}) * 4u + {j}u < N) "
                          f"{{ C[r{i} * N + ({colq}) * 4u + {j}u] = c{i}_{g}[{j}]; }}")
