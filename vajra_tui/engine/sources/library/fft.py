"""1-D FFT templates: the four-step passes (``cols``, ``rows``) as register sub-FFTs (A:
``regs``, 16/32/64 points per invocation, one exchange for L <= regs^2), Stockham radix-4 (B)
and radix-8 (C) stages, several sub-FFTs per workgroup for coalescing.

A replaced radix-2 (issue #27): on the H200 each radix-4/8 pass ran at a third of copy rate,
bound by the exchanges through workgroup memory and their barriers, not by the stage count;
``regs`` does a 1024-point pass as 32 x 32 with one exchange and one barrier.

Each candidate defines both passes, so it replaces the whole program. ``cols`` is how
many neighbouring sub-FFTs one workgroup does (neighbouring columns of the strided
``cols`` pass: one 32-byte sector per row at cols=4); it is cut down per pass to what
workgroup memory holds. fft2.py builds the 2-D passes from the same generator.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.sources.library.base import (Emitter, Params, Size, Template, limit, shuffles_fit,
                                                    storage_fits, workgroup_fits)
from vajra_tui.engine.sources.library.fft_gen import (PassSpec, balanced, helpers, lanes, render_pass,
                                                       shared_bytes)
from vajra_tui.engine.workloads.base import SizeError

AXES = {"threads": (64, 128, 256), "cols": (1, 2, 4, 8)}
REGS_AXES = {"regs": (8, 16, 32, 64), "cols": (1, 2, 4, 8, 16), "ex": (2, 1), "blk": (0, 1, 2),
             "last": (0, 1, 2, 4, 8, 16)}
MAX_REGS = 32  # complex values an invocation holds


def specs(s: Size) -> list[PassSpec]:
    """The four-step passes of fft.py's baseline, at this size."""
    from vajra_tui.engine.workloads.fft import split

    n1, n2 = split(s["N"])
    return [PassSpec("cols", n2, n1, "X", "T", "b * N + g", n1, "b * N + g", n1, s["N"], "CA"),
            PassSpec("rows", n1, n2, "T", "Y", f"b * N + g * {n1}u", 1, "b * N + g", n2, 0, "CB")]


def blocked(passes: list[PassSpec], cols: list[int]) -> list[PassSpec]:
    """The scratch T in blocks of the cols pass's B columns (``blk=1``): T[(n1 / B) * B * N2 +
    k2 * B + n1 % B]. A cols workgroup then writes one contiguous block, and a rows workgroup
    reads runs of B x its own columns, where the baseline's layout makes the cols pass write
    B-column runs (32 bytes at B = 4) down the whole row."""
    first, second = passes
    b, n2 = cols[0], first.length
    return [replace(first, obase=f"b * N + (g / {b}u) * {b * n2}u + g % {b}u", ostride=b),
            replace(second, ibase=f"b * N + g * {b}u", istride=1, iblock=b, ijump=b * n2)]


def fitted(spec: PassSpec, cols: int, vec2: bool, d: DeviceInfo | None) -> int:
    """The largest power of two <= cols sub-FFTs whose exchange fits workgroup memory."""
    c = max(1, min(cols, spec.count))
    while c > 1 and storage_fits(d, shared_bytes(spec, c, vec2)) is not None:
        c //= 2
    return c


def plan(p: Params, passes: list[PassSpec], d: DeviceInfo | None) -> tuple[bool, list[int]]:
    """(vec2 exchange, sub-FFTs per workgroup of each pass): vec2 when one sub-FFT per pass fits,
    unless ``ex=1`` asks for re and im one at a time: half the memory per sub-FFT, so twice the
    neighbouring columns (on the H200 8 x 1024 points: 64-byte runs of the strided accesses,
    where vec2's 4 columns read and write 32-byte sectors at a third of the copy rate). ``last``
    > 0 gives the last pass its own count: fft's rows pass writes runs of that many outputs, and
    with ``blk=1`` reads runs of B x that many, so its count need not be the strided read's."""
    vec2 = p.get("ex", 2) == 2 and all(storage_fits(d, shared_bytes(q, 1, True)) is None for q in passes)
    # a folding pass (fft2's rows pass, or a columns-first kernel's second) holds exactly the two rows it combines
    want = [2 if q.fold_n else p["cols"] for q in passes]
    if p.get("last"):  # the last pass's own count (``last``): its outputs' runs are last x 8 bytes
        want[-1] = p["last"]
    return vec2, [fitted(q, c, vec2, d) for q, c in zip(passes, want)]


@dataclass(frozen=True)
class _Design:
    """(render, check) of one design over the passes ``passes_of`` describes: Stockham stages of
    ``radix`` (4 or 8; at most ``threads`` lanes per sub-FFT), or with ``radix=0`` the register
    design: each pass in ``balanced`` stages of at most ``regs`` points, L / widest-stage lanes."""

    passes_of: Callable[[Size], list[PassSpec]]
    radix: int
    blocked: Callable[[list[PassSpec], list[int]], list[PassSpec]] | None = None
    folded: Callable[[list[PassSpec], Size, int], list[PassSpec]] | None = None

    def _passes(self, p: Params, s: Size) -> list[PassSpec]:
        """The workload's passes at this size, folded when ``fold`` asks (fft2.py)."""
        passes = self.passes_of(s)
        return self.folded(passes, s, p["fold"]) if self.folded and p.get("fold", 1) > 1 else passes

    def _lanes(self, q: PassSpec, p: Params) -> int:
        if self.radix:
            return lanes(q, self.radix, p["threads"])
        return q.length // max(balanced(q.length, p["regs"]))

    def check(self, p: Params, s: Size, d: DeviceInfo | None) -> str | None:
        try:
            passes = self._passes(p, s)
        except SizeError as exc:
            return str(exc)
        vec2, cols = plan(p, passes, d)
        if p.get("fold", 1) > 1 and (why := _fold_problem(passes, cols, d)):
            return why
        for q, c in zip(passes, cols):
            tt = self._lanes(q, p)
            # (the register design holds one stage of at most ``regs`` points: its own bound)
            if self.radix and q.length // tt > MAX_REGS:
                return f"{q.entry}: {q.length // tt} registers of complex per invocation"
            problem = (workgroup_fits(d, tt * c) or storage_fits(d, shared_bytes(q, c, vec2)))
            if problem:
                return problem
        return None  # with ``last`` each pass has a buffer of its own, and its pipeline holds only that

    def render(self, p: Params, s: Size, d: DeviceInfo | None) -> str:
        passes = self._passes(p, s)
        vec2, cols = plan(p, passes, d)
        if p.get("blk") and self.blocked:  # blk=2: blocks twice the pass's width (longer runs written)
            passes = self.blocked(passes, [min(c * p["blk"], q.count) for c, q in zip(cols, passes)])
        order = " then ".join(q.entry for q in passes)
        e = Emitter()
        if self.radix:
            e(f"// FFT, Stockham radix-{self.radix} stages in registers, {order}.")
        else:
            e(f"// FFT, register sub-FFTs of at most {p['regs']} points, one exchange per pair of stages, {order}.")
        sizes = [q.length * c for q, c in zip(passes, cols)]
        own = sizes if p.get("last") else None  # a count of its own: a buffer of its own per pass
        helpers(e, max(sizes), vec2, tight=not self.radix, own=own)
        if p.get("fold", 1) > 1:  # the workload's cols grid reads it: FOLD x W columns of H / FOLD
            e(f"// tune: FOLD = {p['fold']}", "const FOLD: u32 = {{FOLD}}u;")
        for i, (q, c) in enumerate(zip(passes, cols)):
            e("")
            buf = "sh" if own is None else f"sh{i}"
            if self.radix:
                render_pass(e, q, self.radix, p["threads"], c, vec2, buf=buf)
            else:
                render_pass(e, q, 0, 0, c, vec2, balanced(q.length, p["regs"]), buf)
        return e.text()


def _fold_problem(passes: list[PassSpec], cols: list[int], d: DeviceInfo | None) -> str | None:
    """Why the folding pass cannot run here: its two rows' exchange, or the shuffle."""
    for q, c in zip(passes, cols):
        if q.fold_n and c != 2:
            return f"fold: the {q.entry} pass's two rows do not fit workgroup memory together"
    return shuffles_fit(d, 2)


def templates_for(workload: str, passes_of: Callable[[Size], list[PassSpec]],
                  blocked_of: Callable[[list[PassSpec], list[int]], list[PassSpec]],
                  folded_of: Callable[[list[PassSpec], Size, int], list[PassSpec]] | None = None) -> list[Template]:
    """The three designs over ``passes_of``'s passes; ``folded_of`` adds the register design's
    ``fold`` axis (fft2: the columns' first radix-2 done by the rows pass)."""
    regs = _Design(passes_of, 0, blocked_of, folded_of)
    axes = {**REGS_AXES, "fold": (1, 2, 4)} if folded_of else dict(REGS_AXES)
    late = {"ex": 2, "blk": 0, "last": 0, **({"fold": 1} if folded_of else {})}
    out = [Template(workload, "regs", "A", "register sub-FFTs (16-64 points), one exchange per pass",
                    axes, regs.render, regs.check, late=late)]
    for radix, strategy in ((4, "B"), (8, "C")):
        design = _Design(passes_of, radix)
        out.append(Template(workload, f"radix{radix}", strategy,
                            f"Stockham radix-{radix}, several sub-FFTs per workgroup", dict(AXES),
                            design.render, design.check))
    return out


def priors_for(s: Size, d: DeviceInfo | None) -> dict[str, list[Params]]:
    """Many lanes and four columns (a full sector per row) on a GPU; fewer on a CPU. The
    register design (A) is the one expected to win on a big GPU: it is listed first."""
    big = limit(d, "max-compute-invocations-per-workgroup") >= 1024 and d is not None and not d.software
    first = {"threads": 128, "cols": 4} if big else {"threads": 64, "cols": 2}
    rest = [{"threads": 256, "cols": 2}, {"threads": 64, "cols": 8}, {"threads": 64, "cols": 1}]
    # The H200's best (NOTES, #27): 32-point stages, re and im exchanged apart, 4 columns: 16 KB a
    # workgroup, so many stay resident (vec2's 32 KB, or 8 columns, ran 15-40% slower; 2 columns,
    # 16-byte runs, twice as slow), the scratch blocked by columns (5% faster). 4096-point
    # columns get 2 (16-point stages: more lanes).
    # A last pass of its own width (``last``: 2 or 8, or 4 after 8) ran 1.4-1.8x slower (NOTES): not a prior.
    regs = ([{"regs": 32, "cols": 4, "ex": 1, "blk": 1}, {"regs": 32, "cols": 4, "ex": 1},
             {"regs": 16, "cols": 4, "ex": 1}, {"regs": 32, "cols": 8, "ex": 1},
             {"regs": 32, "cols": 8, "ex": 1, "blk": 1}, {"regs": 32, "cols": 4}, {"regs": 8, "cols": 4, "ex": 1}]
            if big else
            [{"regs": 32, "cols": 2}, {"regs": 64, "cols": 1}, {"regs": 16, "cols": 4}])
    return {"A": [*regs, {"regs": 32, "cols": 1}], "B": [first, *rest], "C": [first, *rest]}


TEMPLATES = templates_for("fft", specs, blocked)
priors = priors_for
