"""The configurations benchmarks/sweep.py times, each with the hypothesis it tests.

Keys are the library's configuration keys (template plus every axis); the first of
each list is the best measured before (benchmarks/NOTES.md), the rest the new ideas.
"""

from __future__ import annotations

V = "sgemm/vec4"
R = "conv1d/regs"
CONFIGS: dict[str, list[tuple[str, str]]] = {
    "sgemm": [
        (f"{V} bm=128 bn=256 bk=8 tm=16 tn=8 db=1 spec=1 lay=0", "previous best, flat layout (39.9 TF/s)"),
        (f"{V} bm=128 bn=256 bk=8 tm=16 tn=8 db=1 spec=1 lay=1", "same tile, clamps hoisted out of the FMA loop"),
        (f"{V} bm=128 bn=256 bk=16 tm=16 tn=8 db=1 spec=1 lay=1", "hoisted, half the barriers (48 KiB)"),
        (f"{V} bm=128 bn=256 bk=16 tm=16 tn=8 db=1 spec=1 lay=0", "flat, half the barriers (48 KiB)"),
        (f"{V} bm=128 bn=256 bk=8 tm=16 tn=8 db=0 spec=1 lay=1", "hoisted, single buffer"),
        (f"{V} bm=128 bn=256 bk=32 tm=16 tn=8 db=0 spec=1 lay=1", "hoisted, single buffer, 4x fewer slices"),
        (f"{V} bm=256 bn=128 bk=8 tm=16 tn=8 db=1 spec=1 lay=1", "hoisted, 16x16 threads, taller tile"),
        (f"{V} bm=256 bn=128 bk=16 tm=16 tn=8 db=1 spec=1 lay=1", "hoisted, 16x16 threads, bk=16"),
        (f"{V} bm=128 bn=256 bk=8 tm=8 tn=16 db=1 spec=1 lay=1", "hoisted, 16x16 threads, 8x16 per thread"),
        (f"{V} bm=256 bn=128 bk=8 tm=8 tn=16 db=1 spec=1 lay=1", "hoisted, 8x32 threads, 8x16 per thread"),
        (f"{V} bm=128 bn=128 bk=8 tm=8 tn=8 db=1 spec=1 lay=1", "hoisted 8x8: ~100 registers, 2 workgroups/SM"),
        (f"{V} bm=128 bn=128 bk=16 tm=8 tn=8 db=1 spec=1 lay=1", "hoisted 8x8, bk=16"),
        (f"{V} bm=128 bn=128 bk=8 tm=8 tn=8 db=1 spec=1 lay=0", "flat 8x8 (generation-1 prior)"),
        (f"{V} bm=128 bn=128 bk=8 tm=16 tn=4 db=1 spec=1 lay=1", "hoisted 16x4: broadcast A, 32-wide warps on B"),
        (f"{V} bm=64 bn=256 bk=8 tm=8 tn=8 db=1 spec=1 lay=1", "hoisted 8x8, wide tile"),
        (f"{V} bm=128 bn=256 bk=4 tm=16 tn=8 db=1 spec=1 lay=1", "hoisted, bk=4 (less shared memory)"),
        (f"{V} bm=128 bn=256 bk=8 tm=16 tn=8 db=1 spec=0 lay=1", "hoisted general kernel (bounds-checked loads)"),
    ],
    "conv1d": [  # slide > 0: conv1d_slide.py (scalar sliding windows)
        (f"{R} wg=256 groups=1 v4out=1 run=2", "best measured: runs of two vec4 (26.7 TF/s, 0.161 ms)"),
        (f"{R} wg=256 groups=2 v4out=1 run=1", "runs of one vec4, two per invocation (23.0 TF/s)"),
        (f"{R} wg=256 groups=1 v4out=1 run=3", "runs of three vec4 (23.0 TF/s)"),
        (f"{R} wg=256 groups=1 v4out=1 run=1 slide=9 wsrc=0 xsrc=0", "gen-1 prior: 9 FMAs per conflict-free read"),
        (f"{R} wg=256 groups=2 v4out=1 run=1 slide=5 wsrc=0 xsrc=0", "evolution's step from the old winner"),
        (f"{R} wg=256 groups=1 v4out=1 run=1 slide=7 wsrc=0 xsrc=0", "window of 7: fewer registers"),
        (f"{R} wg=256 groups=1 v4out=1 run=1 slide=11 wsrc=0 xsrc=0", "window of 11"),
        (f"{R} wg=256 groups=1 v4out=1 run=1 slide=15 wsrc=0 xsrc=0", "15 FMAs per read, ~30 live floats"),
        (f"{R} wg=128 groups=1 v4out=1 run=1 slide=9 wsrc=0 xsrc=0", "128 threads per workgroup"),
        (f"{R} wg=64 groups=2 v4out=1 run=1 slide=9 wsrc=0 xsrc=0", "64 threads, two windows per w read"),
        (f"{R} wg=256 groups=1 v4out=1 run=1 slide=9 wsrc=1 xsrc=0", "W[k] from storage (uniform, L1)"),
        (f"{R} wg=256 groups=1 v4out=1 run=4 slide=9 wsrc=0 xsrc=0", "4 tiles in turn: prologue amortised"),
        (f"{R} wg=256 groups=1 v4out=1 run=4 slide=9 wsrc=2 xsrc=0", "weights in 64 registers, 4 tiles"),
        (f"{R} wg=256 groups=1 v4out=1 run=8 slide=9 wsrc=2 xsrc=0", "weights in registers over 8 tiles"),
        (f"{R} wg=256 groups=1 v4out=0 run=1 slide=9 wsrc=0 xsrc=0", "scalar coalesced stores (the general kernel)"),
        (f"{R} wg=256 groups=1 v4out=1 run=1 slide=8 wsrc=0 xsrc=1", "X from global (L1), no barrier"),
        (f"{R} wg=256 groups=1 v4out=0 run=4 slide=9 wsrc=2 xsrc=1", "no workgroup memory at all"),
    ],
    "layernorm": [
        ("layernorm/regs wx=256 sg=1", "prior: row in vec4 registers, subgroup sums"),
        ("layernorm/regs wx=256 sg=0", "shared-tree sums"),
        ("layernorm/regs wx=512 sg=1", "4 vec4 per invocation"),
        ("layernorm/regs wx=1024 sg=1", "2 vec4 per invocation"),
        ("layernorm/regs wx=128 sg=1", "16 vec4 per invocation"),
        ("layernorm/regs wx=512 sg=0", "4 vec4, shared tree"),
        ("layernorm/regs wx=1024 sg=0", "2 vec4, shared tree"),
        ("layernorm/smem wx=256 sg=1", "row cached in workgroup memory"),
        ("layernorm/rows wx=256 rows=1 sg=1", "three passes over global memory"),
    ],
    "gemv": [
        ("gemv/vec4 lanes=128 rows=1 sg=1 unroll=1", "prior: 128 lanes per row, subgroup sum"),
        ("gemv/vec4 lanes=128 rows=1 sg=1 unroll=2", "two vec4 loads in flight per lane"),
        ("gemv/vec4 lanes=128 rows=1 sg=1 unroll=4", "four vec4 loads in flight per lane"),
        ("gemv/vec4 lanes=256 rows=1 sg=1 unroll=2", "256 lanes"),
        ("gemv/vec4 lanes=256 rows=1 sg=1 unroll=4", "256 lanes, 4 in flight"),
        ("gemv/vec4 lanes=64 rows=1 sg=1 unroll=4", "64 lanes, 4 in flight"),
        ("gemv/vec4 lanes=32 rows=1 sg=1 unroll=4", "one subgroup per row"),
        ("gemv/vec4 lanes=32 rows=8 sg=0 unroll=4", "8 rows per workgroup, tree sums"),
        ("gemv/vec4 lanes=64 rows=4 sg=0 unroll=2", "4 rows per workgroup"),
        ("gemv/vec4 lanes=256 rows=1 sg=0 unroll=1", "256 lanes, tree sum"),
        ("gemv/split lanes=256 rows=1 sg=1", "scalar loads"),
    ],
}
