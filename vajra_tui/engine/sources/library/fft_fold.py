"""The rows pass of fft2's ``fold``: the columns' first radix-R step, stored as the rows'
FFTs finish (fft2.py ``folded``; fft_gen.py emits the rest of the pass).

Why: a 4096-point column fits only two to a workgroup in 48 KB, so the column pass reads and
writes 16-byte runs, half of each 32-byte sector. Splitting each column r = r0 + (H/R)*r1
(decimation in frequency), its outputs R*k' + k1 are the (H/R)-point FFTs over r0 of
u_k1[r0] = W_H^(r0*k1) * sum_r1 x[r0 + (H/R)*r1] W_R^(r1*k1). The sum runs across R rows at
the same column, so the workgroup that transforms those rows can form it: T then holds R
images of H/R rows (image k1 at k1 * ``fold_jump``), and the column pass runs columns R times
shorter, R times as many, each into Y's rows R*k' + k1.

The workgroup holds two rows at a time (sub-FFTs c = 0 and 1 in neighbouring lanes): rows r0
and r0 + H/2. With R = 4 it transforms a second pair, r0 + H/4 and r0 + 3H/4, after the first
(kept in ``va``). Across the pair the partner's value comes by one shuffle per component:
every lane runs it, so control flow stays uniform.

The same step by decimation in time (``fold_dit``, benchmarks/experiments/fft2_cols_first.py)
is the second pass of a kernel that does the columns first: its two rows are row k of the
even rows' and of the odd rows' column transforms, and it stores rows k and k + H/2.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from vajra_tui.engine.sources.library.base import Emitter

if TYPE_CHECKING:  # fft_gen imports this module
    from vajra_tui.engine.sources.library.fft_gen import PassSpec


def fold_store(e: Emitter, spec: PassSpec, last: int, tt: int, at: Callable[[str, str], str]) -> None:
    """Output k = lane + m*TT + q*L/last of the pass's rows, folded, to T. ``at(base, k)`` is
    output k's index from the image start ``base`` (the pass's own layout, blocked or not)."""
    length, step, r = spec.length, spec.length // last, spec.fold_r
    e(f"let ft = twiddle(wid.x, {spec.fold_n}u);")  # W_H^r0
    if r == 4:  # lane c writes images c (lo) and c + 2 (hi): twiddles W^0, W^2r0 or W^r0, W^3r0
        e("let ft2 = cmul(ft, ft);", "let ftl = select(ft, vec2<f32>(1.0, 0.0), c == 0u);",
          "let fth = select(cmul(ft2, ft), ft2, c == 0u);", f"let ob2 = ob + {2 * spec.fold_jump}u;")
    for m in range(length // (last * tt)):
        for q in range(last):
            k = f"(lane + {m * tt + q * step}u)"
            name = f"f{m}_{q}"
            if r == 2:
                pair = _pair_dit if spec.fold_dit else _pair
                e(f"{spec.dst}[{at('ob', k)}] = {pair(e, f'v[{m * last + q}]', name)};")
                continue
            even = _pair(e, f"va[{m * last + q}]", name + "a", twiddled=False)  # x0 +- x2
            odd = _pair(e, f"v[{m * last + q}]", name + "b", twiddled=False)  # x1 +- x3
            e(f"let {name}e = {even};", f"let {name}o = {odd};",
              # c = 0: o; c = 1: -i * o (W_4 = -i)
              f"let {name}i = select(vec2<f32>({name}o.y, -{name}o.x), {name}o, c == 0u);",
              f"{spec.dst}[{at('ob', k)}] = cmul({name}e + {name}i, ftl);",
              f"{spec.dst}[{at('ob2', k)}] = cmul({name}e - {name}i, fth);")


def _pair(e: Emitter, val: str, name: str, twiddled: bool = True) -> str:
    """Across the pair (c = 0: a, c = 1: b, neighbouring lanes): a + b on c = 0, a - b on c = 1,
    times W_H^r0 (``ft``) when ``twiddled`` (R = 2: that is the whole step)."""
    e(f"let {name} = {val};",
      f"let {name}p = vec2<f32>(subgroupShuffleXor({name}.x, 1u), subgroupShuffleXor({name}.y, 1u));")
    diff = f"cmul({name}p - {name}, ft)" if twiddled else f"{name}p - {name}"
    return f"select({diff}, {name} + {name}p, c == 0u)"


def _pair_dit(e: Emitter, val: str, name: str) -> str:
    """Decimation in time (``fold_dit``): c = 0 holds E (the even rows' transform), c = 1 holds O.
    Output row k (c = 0) is E + W_H^k * O, row k + H/2 (c = 1) is E - W_H^k * O: one product a lane."""
    e(f"let {name} = {val};",
      f"let {name}p = vec2<f32>(subgroupShuffleXor({name}.x, 1u), subgroupShuffleXor({name}.y, 1u));",
      f"let {name}e = select({name}p, {name}, c == 0u);",
      f"let {name}t = cmul(select({name}, {name}p, c == 0u), ft);")
    return f"select({name}e - {name}t, {name}e + {name}t, c == 0u)"
