"""The configurations benchmarks/sweep.py times, each with the hypothesis it tests.

Keys are the library's configuration keys (template plus every axis); the first of
each list is the best measured before (benchmarks/NOTES.md), the rest the new ideas.
"""

from __future__ import annotations

V = "sgemm/vec4"
R = "conv1d/regs"
A = "attention/outer wx=8"
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
    "conv1d": [  # round 14 (issue #27; round 8: h200-sweep-27-conv-8.json; the row 0.1325 ms): W as a uniform
        (f"{R} wg=128 groups=1 v4out=1 run=2 wsrc=2 seq=8 lay=0 pd=1", "the row's winner: W in 64 registers"),
        (f"{R} wg=128 groups=1 v4out=1 run=2 wsrc=2 seq=4 lay=0 pd=1", "W in registers, four tiles"),
        (f"{R} wg=128 groups=1 v4out=1 run=2 wsrc=3 seq=8 lay=0 pd=1", "W from the constant bank (var<uniform>)"),
        (f"{R} wg=128 groups=1 v4out=1 run=2 wsrc=3 seq=4 lay=0 pd=1", "uniform W, four tiles (0.1315 ms on an H100)"),
        (f"{R} wg=64 groups=1 v4out=1 run=2 wsrc=3 seq=4 lay=0 pd=1", "uniform W, 64 lanes, four tiles"),
        (f"{R} wg=128 groups=1 v4out=1 run=2 wsrc=3 seq=16 lay=0 pd=1", "uniform W, sixteen tiles"),
        (f"{R} wg=128 groups=1 v4out=1 run=3 wsrc=3 seq=4 lay=0 pd=1", "uniform W: the freed registers as outputs"),
        (f"{R} wg=128 groups=1 v4out=1 run=2 wsrc=3 seq=4 lay=0 pd=2", "uniform W: two windows in flight"),
    ],
    "attention": [  # issue #27, D=64, round 20: does a 128-lane workgroup get an SM to itself? (round 12: 4.13 ms)
        (f"{A} wy=32 tm=8 tn=4 kv=2 sg=1 un=128 gl=1 ks=1 qo=0 pf=1", "the row's kernel: 256 rows on 256 lanes, 48 KB"),
        (f"{A} wy=16 tm=8 tn=4 kv=2 sg=1 un=128 gl=1 ks=1 qo=0 pf=1", "128 rows on 128 lanes, 32 KB (round 12: 4.13 ms)"),
        (f"{A} wy=16 tm=8 tn=4 kv=1 sg=1 un=128 gl=1 ks=1 qo=0 pf=1", "128 lanes, V through K's memory: 24 KB"),
        (f"{A} wy=16 tm=8 tn=4 kv=2 sg=1 un=128 gl=2 ks=1 qo=0 pf=1", "128 lanes, V from the storage buffer: 24 KB"),
        (f"{A} wy=16 tm=8 tn=4 kv=2 sg=1 un=128 gl=2 ks=1 qo=1 pf=1", "the same, Q a row at a time (fewer registers)"),
        (f"{A} wy=8 tm=8 tn=4 kv=2 sg=1 un=128 gl=1 ks=1 qo=0 pf=1", "64 rows on 64 lanes: 24 KB"),
        (f"{A} wy=16 tm=8 tn=4 kv=2 sg=1 un=128 gl=1 ks=1 qo=0 pf=0", "128 lanes, 32 KB, no prefetch (16 registers fewer)"),
    ],
    "fft": [  # issue #27, 16 x 2^20; round 18's seq (groups streamed through a workgroup) lost and is removed
        # (NOTES; commit 90a0086 has it): the two register designs measured best (H100 and H200)
        ("fft/regs regs=32 cols=4 ex=1 blk=1 last=0", "the H200 row's kernel (0.2524 ms on the H100)"),
        ("fft/regs regs=16 cols=4 ex=1 blk=1 last=0", "16-point stages: the H100's best (0.2405)"),
    ],
    "fft2": [  # issue #27, 4096^2: round 17's best (fold=2 blk=2, 0.2810 ms on the H100) and its neighbours
        ("fft2/regs regs=16 cols=4 ex=1 blk=2 last=0 fold=2", "round 17's best: blocks of 8 columns"),
        ("fft2/regs regs=16 cols=4 ex=1 blk=1 last=0 fold=2", "blocks of 4 (0.2966)"),
        ("fft2/regs regs=16 cols=4 ex=1 blk=0 last=0 fold=2", "row-major T (0.3042)"),
        ("fft2/regs regs=16 cols=4 ex=1 blk=0 last=0 fold=1", "the H200 row's kernel, unfolded (0.4442)"),
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
