"""Scaled dot-product attention, O = softmax(Q·Kᵀ/√D)·V per head, in f32.

A built-in, declared exactly as a user's workload file is (see the README). Q, K, V
and O are B×H×S×D, row-major (head ``b*H + h`` is S rows of D). The mask is a size
constant so that one workload covers both forms and a kernel folds it away:
``MASK=1`` attends to every key, ``MASK=2`` is causal (query i sees keys 0..i).
It is 1 and 2, not 0 and 1, because every size constant is a positive integer.
``--size 1x16x4096x64`` leaves MASK at 1; ``--size 1x16x4096x64x2`` is causal.

A kernel may split the keys (split-K, for few heads of a long S): its ``main`` writes each
split's partial result into the scratch ``Partial`` and its own ``combine`` merges them into
O. ``combine`` is an optional pass: it runs only for a kernel that defines it, on a grid of
ceil(S / CR) x B*H workgroups (``CR``, query rows per workgroup, is the kernel's template
value, 1 when it has none). ``Partial`` holds ``splits_max(size)`` slots of D + 4 floats per
query row (up to 16, as many as fit in 128 MiB); how a kernel lays them out is its own affair.

Like softmax, the inputs are a trap for a kernel that skips the max subtraction: a
quarter of the query rows are scaled so that their largest score (over the keys they
may see) is 100, past exp's f32 overflow at ~88.7, another quarter by 10, and a quarter
run cold, every score at or below -100 (every key's last component is in [0.5, 1], and a
cold row's is large and negative), so no constant stands in for the row max either.
"""

from __future__ import annotations

import numpy as np

from vajra_tui import Binding, Pass, Workload

HOT = 100.0  # the largest score of a hot row: exp(100) overflows f32
CHUNK = 512  # query rows per float64 block: 512×4096 scores are 16 MB, not a head's 128 MB
SPLITS = 16  # the most key splits ``Partial`` holds a slot for
PARTIAL_WORDS = 1 << 25  # 128 MiB of f32: the portable maxStorageBufferBindingSize


def splits_max(s: dict[str, int]) -> int:
    """Key splits ``Partial`` has room for: D + 4 floats per split of every query row (the
    output and a vec4 for its max and sum), up to 16 and within 128 MiB, at least one."""
    row = s["B"] * s["H"] * s["S"] * (s["D"] + 4)
    return max(1, min(SPLITS, PARTIAL_WORDS // row))


def _mask_of(s: dict[str, int]) -> bool:
    """True for causal; a MASK other than 1 or 2 is a user's typo, said in one line."""
    if s["MASK"] not in (1, 2):
        raise ValueError(f"MASK={s['MASK']}: use 1 (every key) or 2 (causal)")
    return s["MASK"] == 2


def _heads(s: dict[str, int], x: dict[str, np.ndarray], name: str) -> np.ndarray:
    return x[name].astype(np.float64).reshape(s["B"] * s["H"], s["S"], s["D"])


def _scores(q: np.ndarray, k: np.ndarray, r0: int, causal: bool) -> np.ndarray:
    """Scores of query rows r0.. against every key, masked keys at -inf (float64)."""
    sc = (q @ k.T) / np.sqrt(k.shape[1])
    if causal:
        rows = np.arange(r0, r0 + q.shape[0])[:, None]
        sc[np.arange(k.shape[0])[None, :] > rows] = -np.inf
    return sc


def make_inputs(s: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    causal, heads, n, d = _mask_of(s), s["B"] * s["H"], s["S"], s["D"]
    q = rng.uniform(-1.0, 1.0, (heads, n, d))
    k = rng.uniform(-1.0, 1.0, (heads, n, d))
    if d > 1:  # every key leans the same way in its last dimension: what lets a row run cold
        k[..., -1] = rng.uniform(0.5, 1.0, (heads, n))
    k = k.astype(np.float32).astype(np.float64)
    v = rng.uniform(-1.0, 1.0, (heads, n, d)).astype(np.float32)
    kind = rng.integers(0, 4 if d > 1 else 3, (heads, n))  # 0: as drawn, 1: scaled by 10, 2: hot, 3: cold
    q[kind == 1] *= 10.0
    for h in range(heads):
        for r0 in range(0, n, CHUNK):
            rows = kind[h, r0:r0 + CHUNK]
            hot = np.flatnonzero(rows == 2)
            if hot.size:
                top = _scores(q[h, r0:r0 + CHUNK], k[h], r0, causal).max(axis=1)[hot]
                # scaled so the row's largest score is HOT; at most 400x (a row whose
                # keys all score near or below zero stays below HOT)
                q[h, r0 + hot] *= np.minimum(HOT / np.maximum(top, 1e-9), 400.0)[:, None]
            _cool(q[h], k[h], r0 + np.flatnonzero(rows == 3), causal)
    return {"Q": q.astype(np.float32).ravel(), "K": k.astype(np.float32).ravel(), "V": v.ravel()}


def _cool(q: np.ndarray, k: np.ndarray, cold: np.ndarray, causal: bool) -> None:
    """Give the ``cold`` query rows a last component that puts every score they may see at
    or below -HOT: exp(score - c) then underflows for any constant c that keeps a hot row's
    exp(100 - c) finite. A kernel subtracting a constant instead of the row max (with scores
    within +-100, exp(s - 50) served every row) was verified and crowned (a held-out check)."""
    if not cold.size:
        return
    q[cold, -1] = 0.0
    drawn = q[cold] @ k.T  # the scores' other dimensions, unscaled
    lean = np.broadcast_to(k[:, -1], drawn.shape).copy()
    if causal:
        hidden = np.arange(k.shape[0])[None, :] > cold[:, None]
        drawn[hidden], lean[hidden] = -np.inf, np.inf
    need = (drawn.max(axis=1) + HOT * np.sqrt(k.shape[1])) / lean.min(axis=1)
    q[cold, -1] = -np.maximum(need, 0.0)


def reference(s: dict[str, int], x: dict[str, np.ndarray]) -> np.ndarray:
    causal = _mask_of(s)
    q, k, v = _heads(s, x, "Q"), _heads(s, x, "K"), _heads(s, x, "V")
    out = np.empty_like(q)
    for h in range(q.shape[0]):
        for r0 in range(0, s["S"], CHUNK):
            sc = _scores(q[h, r0:r0 + CHUNK], k[h], r0, causal)
            e = np.exp(sc - sc.max(axis=1, keepdims=True))
            out[h, r0:r0 + CHUNK] = (e @ v[h]) / e.sum(axis=1, keepdims=True)
    return out.ravel()


def tolerance(s: dict[str, int]) -> float:
    """Absolute, since O is a convex combination of V's rows (|O| <= 1). The error is set
    by the hot rows: a score near 100 is known to a few of its f32 ulps (7.6e-6 each) after
    D roundings, and when two keys tie for the top weight that relative error moves O by
    up to 2x as much. An f32 emulation measured 1.7e-5 (D=64) and 3.4e-5 (D=128) worst
    over a million elements; this allows ~3.5x that, growing as sqrt(D) like the score's
    rounding, plus the sums over S keys (~sqrt(S) ulps). A key left out of a
    near-uniform row still costs ~0.5/S (1.2e-4 at S=4096), above this bound."""
    return 6e-5 * float(np.sqrt(s["D"] / 64.0)) + 1e-7 * float(np.sqrt(s["S"]))


BASELINE = """\
// Naive attention: one invocation per query row. Two walks over the keys: the row's
// largest score, then exp(score - max) summed and V's rows accumulated by that weight.
// Each walk over D takes 32 components a step: Mesa's llvmpipe ends an invocation after
// 65,535 loop steps in all and unrolls the fixed inner loop (S up to ~3800 at D=128 there).
// tile: 64*D x 1
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = vajra_tile(wid);
    let i = t.x * 64u + lid.x;
    if (t.y >= TILES_Y || i >= S) {
        return;
    }
    let head = t.y * S * D;
    let qrow = head + i * D;
    let scale = 1.0 / sqrt(f32(D));
    var keys = S;
    if (MASK == 2u) {
        keys = i + 1u;
    }
    var m = -3.0e38;
    for (var j = 0u; j < keys; j = j + 1u) {
        var dot = 0.0;
        for (var c = 0u; c < D; c = c + 32u) {
            for (var u = 0u; u < 32u; u = u + 1u) {
                if (c + u < D) {
                    dot = dot + Q[qrow + c + u] * K[head + j * D + c + u];
                }
            }
        }
        m = max(m, dot * scale);
    }
    var acc: array<f32, D>;
    var sum = 0.0;
    for (var j = 0u; j < keys; j = j + 1u) {
        var dot = 0.0;
        for (var c = 0u; c < D; c = c + 32u) {
            for (var u = 0u; u < 32u; u = u + 1u) {
                if (c + u < D) {
                    dot = dot + Q[qrow + c + u] * K[head + j * D + c + u];
                }
            }
        }
        let p = exp(dot * scale - m);
        sum = sum + p;
        for (var c = 0u; c < D; c = c + 32u) {
            for (var u = 0u; u < 32u; u = u + 1u) {
                if (c + u < D) {
                    acc[c + u] = acc[c + u] + p * V[head + j * D + c + u];
                }
            }
        }
    }
    for (var c = 0u; c < D; c = c + 32u) {
        for (var u = 0u; u < 32u; u = u + 1u) {
            if (c + u < D) {
                O[qrow + c + u] = acc[c + u] / sum;
            }
        }
    }
}
"""


def _elements(s: dict[str, int]) -> int:
    return s["B"] * s["H"] * s["S"] * s["D"]


def buffer_len(s: dict[str, int]) -> dict[str, int]:
    return {**{n: _elements(s) for n in ("Q", "K", "V", "O")},
            "Partial": s["B"] * s["H"] * s["S"] * (s["D"] + 4) * splits_max(s)}


def grid_combine(s: dict[str, int], p: dict) -> tuple[int, int, int]:
    """A split-K kernel's combine: ``CR`` query rows per workgroup, a head per row of the grid."""
    rows = int(p.get("CR", 1))
    return -(-s["S"] // rows), s["B"] * s["H"], 1


WORKLOAD = Workload(
    name="attention",
    summary="O = softmax(Q·Kᵀ/√D)·V per head, B×H×S×D f32; MASK=1 full, MASK=2 causal",
    dims=("B", "H", "S", "D", "MASK"),
    presets={"seed": {"B": 1, "H": 2, "S": 256, "D": 64, "MASK": 1},
             "large": {"B": 1, "H": 16, "S": 4096, "D": 64, "MASK": 1}},
    defaults={"MASK": 1},
    broadcast=("S",),
    bindings=(Binding(0, "Q", "read"), Binding(1, "K", "read"), Binding(2, "V", "read"),
              Binding(3, "O", "read_write"), Binding(4, "Partial", "scratch")),
    atol=tolerance,
    buffer_len=buffer_len,
    make_inputs=make_inputs,
    reference=reference,
    # Q·Kᵀ and P·V, 2·S²·D each per head; causal skips (about) half the keys
    flops=lambda s: 4.0 * s["B"] * s["H"] * s["S"] ** 2 * s["D"] / (2.0 if s["MASK"] == 2 else 1.0),
    # element (x, y) is O[y * S * D + x]: a head per row, so a tile never straddles two heads
    output_grid=lambda s: (s["S"] * s["D"], s["B"] * s["H"]),
    # main is planned from the output grid and the kernel's // tile:, as a single-pass kernel
    passes=(Pass("main", grid=None), Pass("combine", grid=grid_combine, optional=True)),
    baseline=BASELINE,
)
