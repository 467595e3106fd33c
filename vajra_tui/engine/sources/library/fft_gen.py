"""WGSL for one FFT pass: C sub-FFTs of length L per workgroup, Stockham radix-2/4/8 stages.

fft.py (1-D, four-step) and fft2.py (2-D) describe each of their passes as a ``PassSpec``:
where sub-FFT g's element i is read (``src[ibase + i * istride]``), where its output k goes,
and whether output k is multiplied by the four-step twiddle W_N^(g*k). The pass is fully
unrolled in Python: invocation t works on sub-FFT c = t % C (so neighbouring invocations
touch neighbouring columns of a strided pass: coalesced) as its lane tt = t / C, and holds
L / TT complex values in registers. The first stage reads global memory, the last writes
it; between stages the values go through workgroup memory, as vec2 (one round trip) when
C * L * 8 bytes fit, else one component at a time (two). The radix is the largest of
2, 4, 8 up to ``radix``; a length that is not a power of it ends with a smaller stage.

The ``tight`` form (fft.py's ``regs`` template) takes its stages from ``balanced``: as few
as registers allow (16-, 32- or 64-point sub-FFTs per invocation, unrolled with constant
twiddles), so a 1024-point pass is 32 x 32 with one exchange and one barrier. Its exchange
interleaves the C sub-FFTs (element i of sub-FFT c at i*C + c) and XOR-swizzles i (``sw``),
so neither the unit-stride reads nor the stride-r writes conflict on banks, in no extra
memory; the four-step twiddle takes two twiddle() calls per invocation and complex products.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from vajra_tui.engine.sources.library.base import Emitter, f32
from vajra_tui.engine.sources.library.fft_fold import fold_store

S = "0.7071067811865476"  # sqrt(1/2)


@dataclass(frozen=True)
class PassSpec:
    entry: str
    length: int  # L: points per sub-FFT
    count: int  # sub-FFTs per batch row (the grid's x, times cols)
    src: str
    dst: str
    ibase: str  # WGSL expression of g (sub-FFT index) and b (batch row)
    istride: int
    obase: str
    ostride: int
    twiddle_n: int = 0  # multiply output k by W_n^(g*k) (0: no twiddle)
    const: str = "C"  # the template value the workload's grid reads (CA, CB, CR, CC)
    iblock: int = 0  # > 0: element i at ibase + (i / iblock) * ijump + i % iblock (blocked scratch)
    ijump: int = 0
    oblock: int = 0  # the same for output k
    ojump: int = 0
    twiddle_g: str = "g"  # the WGSL factor of the four-step twiddle W_n^(factor*k)
    fold_n: int = 0  # > 0: the rows pass of fft2's ``fold``: its rows are r0 + j*n/fold_r of
    # n-point columns, and it stores the columns' first radix-fold_r step (fft_fold.py)
    fold_r: int = 2
    fold_jump: int = 0  # elements from one of T's fold_r images to the next (n/fold_r rows)
    fold_dit: bool = False  # the fold by decimation in time (radix 2): the pass's two rows are the
    # n/2-point column FFTs of the even and the odd rows, and it stores rows k and k + n/2 of the result


def address(base: str, i: str, stride: int, block: int = 0, jump: int = 0) -> str:
    """WGSL index of element ``i``: ``base + i * stride``, or in a blocked layout (``block``
    consecutive elements, then a jump to the next block) ``base + (i / block) * jump + i % block``."""
    if block > 1:
        shift = block.bit_length() - 1
        return f"{base} + ({i} >> {shift}u) * {jump}u + ({i} & {block - 1}u)"
    if block == 1:
        return f"{base} + {i} * {jump}u"
    return f"{base} + {i} * {stride}u"


def radices(length: int, radix: int) -> list[int]:
    """Stage radices, smallest first: as many ``radix`` stages as fit, then the rest."""
    out, rem = [], length
    while rem > 1:
        r = min(radix, rem)
        out.append(r)
        rem //= r
    return sorted(out)


def balanced(length: int, most: int) -> list[int]:
    """The fewest stages of radix <= ``most`` (a power of two) whose product is ``length``,
    their sizes as even as possible: fewer stages mean fewer exchanges and barriers."""
    bits, step = length.bit_length() - 1, most.bit_length() - 1
    k = max(1, -(-bits // step))
    return sorted(1 << (bits // k + (1 if i < bits % k else 0)) for i in range(k))


def lanes(spec: PassSpec, radix: int, threads: int) -> int:
    """Invocations per sub-FFT: ``threads`` at most, and no more than the widest stage has
    butterflies, so every invocation has work in every stage."""
    return max(1, min(threads, spec.length // max(radices(spec.length, radix))))


def shared_bytes(spec: PassSpec, cols: int, vec2: bool) -> int:
    return cols * spec.length * (8 if vec2 else 4)


def _rot(e: Emitter, x: str, k: int, n: int, name: str) -> str:
    """x * W_n^k for the constants a radix-8 butterfly needs (k/n in 0, 1/8, 1/4, 3/8)."""
    frac = k / n
    if frac == 0:
        return x
    if frac == 0.25:
        e(f"let {name} = vec2<f32>({x}.y, -{x}.x);")
    elif frac == 0.125:
        e(f"let {name} = vec2<f32>({x}.x + {x}.y, {x}.y - {x}.x) * {S};")
    elif frac == 0.375:
        e(f"let {name} = vec2<f32>({x}.y - {x}.x, -({x}.x + {x}.y)) * {S};")
    else:  # radix 16 and up: the constant W_n^k, known when the kernel is generated
        a = -2.0 * math.pi * k / n
        e(f"let {name} = cmul({x}, vec2<f32>({f32(math.cos(a))}, {f32(math.sin(a))}));")
    return name


def _dft(e: Emitter, xs: list[str], name: str) -> list[str]:
    """A radix-len(xs) DFT (forward sign) as radix-2 decimation in time; returns the outputs."""
    n = len(xs)
    if n == 1:
        return xs
    even = _dft(e, xs[0::2], name + "e")
    odd = _dft(e, xs[1::2], name + "o")
    out = [""] * n
    for k in range(n // 2):
        t = _rot(e, odd[k], k, n, f"{name}t{k}")
        e(f"let {name}{k} = {even[k]} + {t};", f"let {name}{k + n // 2} = {even[k]} - {t};")
        out[k], out[k + n // 2] = f"{name}{k}", f"{name}{k + n // 2}"
    return out


def _powers(e: Emitter, r: int, name: str) -> list[str]:
    """Names of w^0 .. w^(r-1) for the twiddle ``{name}1`` (powers by complex products)."""
    names = ["", f"{name}1"]
    for q in range(2, r):
        a, b = q // 2, q - q // 2
        e(f"let {name}{q} = cmul({names[a]}, {names[b]});")
        names.append(f"{name}{q}")
    return names


def _butterflies(e: Emitter, spec: PassSpec, r: int, ns: int, tt: int) -> None:
    """One Stockham stage on the registers: v[m*r + q] is x[j + q*L/r], j = lane + m*TT."""
    for m in range(spec.length // (r * tt)):
        e.open("{")
        e(f"let j = lane + {m * tt}u;")
        xs = [f"v[{m * r + q}]" for q in range(r)]
        if ns > 1:
            e(f"let w1 = twiddle(j & {ns - 1}u, {ns * r}u);")
            w = _powers(e, r, "w")
            for q in range(1, r):
                e(f"let x{q} = cmul({xs[q]}, {w[q]});")
            xs = [xs[0]] + [f"x{q}" for q in range(1, r)]
        ys = _dft(e, xs, "y")
        for q in range(r):
            e(f"v[{m * r + q}] = {ys[q]};")
        e.close()


def _exchange(e: Emitter, spec: PassSpec, r: int, ns: int, nxt: int, tt: int, vec2: bool,
              tight: int = 0, final: bool = False, buf: str = "sh") -> None:
    """Stage outputs (index (j/ns)*ns*r + j%ns + q*ns) to the next stage's owners (j' + q'*L/nxt).
    ``tight`` (the pass's C): element i of sub-FFT c at sw(i)*C + c, so neighbouring invocations
    (neighbouring c, then lanes) touch neighbouring banks, and no barrier after the ``final``
    exchange's reads (nothing writes workgroup memory after them)."""
    length = spec.length
    at = (lambda i: f"sw({i}) * {tight}u + c") if tight else (lambda i: f"sub + {i}")
    parts = [""] if vec2 else [".x", ".y"]
    for n, part in enumerate(parts):
        for m in range(length // (r * tt)):
            j = f"(lane + {m * tt}u)"
            idx = f"(({j} / {ns}u) * {ns * r}u + ({j} & {ns - 1}u))"
            for q in range(r):
                e(f"{buf}[{at(f'{idx} + {q * ns}u')}] = v[{m * r + q}]{part};")
        e("workgroupBarrier();")
        for m in range(length // (nxt * tt)):
            for q in range(nxt):
                e(f"v[{m * nxt + q}]{part} = {buf}[{at(f'lane + {m * tt + q * (length // nxt)}u')}];")
        if not (tight and final and n + 1 == len(parts)):
            e("workgroupBarrier();")


def render_pass(e: Emitter, spec: PassSpec, radix: int, threads: int, cols: int, vec2: bool,
                stages: list[int] | None = None, buf: str = "sh") -> None:
    """The entry point of one pass (module-level helpers come from ``helpers``). Given
    ``stages`` (from ``balanced``) it is the tight form: lanes = L / the widest stage. ``buf``:
    the workgroup array it exchanges through (``helpers``' ``own`` gives each pass one)."""
    tight = stages is not None
    length = spec.length
    stages = stages or radices(spec.length, radix)
    tt = length // max(stages) if tight else lanes(spec, radix, threads)
    e(f"// {spec.entry}: {cols} x {length}-point FFTs per workgroup, {tt} lanes each, radix "
      f"{'-'.join(map(str, stages))}, exchange {'vec2' if vec2 else 're/im'}"
      f"{', swizzled' if tight else ''}",
      # (a folded rows pass does its rows two at a time: fold_r of them a workgroup)
      f"// tune: {spec.const} = {spec.fold_r if spec.fold_n else cols}",
      f"const {spec.const}: u32 = {{{{{spec.const}}}}}u;",
      f"@compute @workgroup_size({tt * cols})")
    e.open(f"fn {spec.entry}(@builtin(workgroup_id) wid: vec3<u32>, "
           "@builtin(local_invocation_id) lid: vec3<u32>) {")
    e(f"let c = lid.x % {cols}u;", f"let lane = lid.x / {cols}u;", f"let g = wid.x * {spec.const} + c;",
      "let b = wid.y;", f"let sub = c * {length}u;", f"let ib = {spec.ibase};", f"let ob = {spec.obase};",
      f"var v: array<vec2<f32>, {length // tt}>;")
    _load(e, spec, stages[0], tt, "v", "ib")
    if spec.fold_r == 4:  # the second pair of rows, loaded before the first is transformed
        e(f"let ib2 = ib + {spec.fold_jump}u;", f"var v2: array<vec2<f32>, {length // tt}>;")
        _load(e, spec, stages[0], tt, "v2", "ib2")
    _stages(e, spec, stages, tt, vec2, cols if tight else 0, buf)
    if spec.fold_n:
        if spec.fold_r == 4:
            e("let va = v;", "v = v2;")
            _stages(e, spec, stages, tt, vec2, cols, buf)
        fold_store(e, spec, stages[-1], tt, lambda base, k: address(base, k, spec.ostride, spec.oblock, spec.ojump))
    else:
        _store(e, spec, stages[-1], tt, tight)
    e.close()


def _load(e: Emitter, spec: PassSpec, first: int, tt: int, into: str, base: str) -> None:
    """The first stage's inputs, element j + q*L/first of the sub-FFT starting at ``base``."""
    length = spec.length
    for m in range(length // (first * tt)):
        for q in range(first):
            at = address(base, f"(lane + {m * tt + q * (length // first)}u)", spec.istride, spec.iblock,
                         spec.ijump)
            e(f"{into}[{m * first + q}] = {spec.src}[{at}];")


def _stages(e: Emitter, spec: PassSpec, stages: list[int], tt: int, vec2: bool, tight: int, buf: str) -> None:
    """Every stage on ``v``, with the exchanges between them (a barrier after the last one's
    reads, unless ``tight`` and the pass's last: a folded pass runs this twice, and needs it)."""
    ns = 1
    for s, r in enumerate(stages):
        _butterflies(e, spec, r, ns, tt)
        if s + 1 < len(stages):
            final = s + 2 == len(stages) and spec.fold_r != 4
            _exchange(e, spec, r, ns, stages[s + 1], tt, vec2, tight, final, buf)
        ns *= r


def _store(e: Emitter, spec: PassSpec, last: int, tt: int, tight: bool) -> None:
    """Output k = lane + m*TT + q*L/last to dst, times the four-step twiddle W_n^(g*k) when the
    pass has one: per output (a twiddle() each), or ``tight``: W_n^(g*k0) once per m times powers
    of W_n^(g*L/last) (two twiddle() calls per m and complex products)."""
    length = spec.length
    step = length // last
    if spec.twiddle_n and tight:
        e(f"let ws1 = twiddle({spec.twiddle_g} * {step}u, {spec.twiddle_n}u);")
        ws = _powers(e, last, "ws")
    for m in range(length // (last * tt)):
        if spec.twiddle_n and tight:
            e(f"let wb{m} = twiddle({spec.twiddle_g} * (lane + {m * tt}u), {spec.twiddle_n}u);")
        for q in range(last):
            k = f"(lane + {m * tt + q * step}u)"
            val = f"v[{m * last + q}]"
            if spec.twiddle_n and tight:
                val = f"cmul({val}, {f'cmul(wb{m}, {ws[q]})' if q else f'wb{m}'})"
            elif spec.twiddle_n:
                val = f"cmul({val}, twiddle({spec.twiddle_g} * {k}, {spec.twiddle_n}u))"
            e(f"{spec.dst}[{address('ob', k, spec.ostride, spec.oblock, spec.ojump)}] = {val};")


def helpers(e: Emitter, shared: int, vec2: bool, tight: bool = False, own: list[int] | None = None) -> None:
    """Bindings as vec2, the workgroup exchange buffer, twiddle and complex product (and for
    the tight form the swizzle: i's low 5 bits XOR its next 5, a permutation of each
    32-element block of a sub-FFT, so a stride-32 write hits 32 different banks). The twiddle
    is the fft workload's own, exact to f32 rounding on any adapter. ``own``: one buffer per
    pass (sh0, sh1, ...) of these sizes instead of one ``sh`` of ``shared``, so a pass that
    needs less workgroup memory than another does not reserve the other's."""
    from vajra_tui.engine.workloads.fft import TWIDDLE

    e("@group(0) @binding(0) var<storage, read> X: array<vec2<f32>>;",
      "@group(0) @binding(1) var<storage, read_write> Y: array<vec2<f32>>;",
      "@group(0) @binding(2) var<storage, read_write> T: array<vec2<f32>>;",
      *[f"var<workgroup> {name}: array<{'vec2<f32>' if vec2 else 'f32'}, {max(1, n)}>;"
        for name, n in ([("sh", shared)] if own is None else [(f"sh{i}", n) for i, n in enumerate(own)])],
      *TWIDDLE.splitlines(),
      "fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {",
      "    return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);", "}")
    if tight:
        e("fn sw(i: u32) -> u32 {", "    return i ^ ((i >> 5u) & 31u);", "}")
