"""2-D FFT templates: the row pass and the column pass as register sub-FFTs (A), Stockham
radix-4 (B) and radix-8 (C) stages, from fft.py's generator (several columns per workgroup coalesce the
strided column pass)."""

from __future__ import annotations

from dataclasses import replace

from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.sources.library.base import Params, Size, big_gpu, subgroups
from vajra_tui.engine.sources.library.fft import priors_for, templates_for
from vajra_tui.engine.sources.library.fft_gen import PassSpec
from vajra_tui.engine.workloads.base import SizeError


def specs(s: Size) -> list[PassSpec]:
    """fft2.py's passes at this size: rows (contiguous), then columns (stride W)."""
    from vajra_tui.engine.workloads.fft2 import defines

    defines(s)  # refuses a side the passes cannot do
    h, w = s["H"], s["W"]
    return [PassSpec("rows", w, h, "X", "T", f"g * {w}u", 1, f"g * {w}u", 1, 0, "CR"),
            PassSpec("cols", h, w, "T", "Y", "g", w, "g", w, 0, "CC")]


def blocked(passes: list[PassSpec], cols: list[int]) -> list[PassSpec]:
    """The scratch T in blocks of the cols pass's B columns (``blk=1``): T[(k / B) * B * H +
    row * B + k % B]. A cols workgroup then reads one contiguous block instead of B-column
    runs (16 bytes at B = 2) down the image; a rows workgroup of R rows writes runs of R x B.
    Folded (``fold=2``), each half image is blocked: row r0 of half c starts at c * H/2 * W."""
    rows, columns = passes
    b, h = cols[1], columns.length
    start = f"c * {h * rows.length}u + wid.x * {b}u" if rows.fold_n else f"g * {b}u"
    return [replace(rows, obase=start, ostride=1, oblock=b, ojump=b * h),
            replace(columns, ibase=f"(g / {b}u) * {b * h}u + g % {b}u", istride=b)]


def folded(passes: list[PassSpec], s: Size, fold: int) -> list[PassSpec]:
    """``fold=2``: the rows pass does rows r0 and r0 + H/2 together (the grid's H / 2 workgroups)
    and, as it stores, the columns' first radix-2 across them (a shuffle), so T holds two
    half-height images, k1 = 0 and 1: T[(k1 * H/2 + r0) * W + c]. The cols pass then runs
    H/2-point columns, twice as many, each into Y's rows 2k + k1. Where 4096-point columns
    fit two a workgroup (16-byte runs), 2048-point ones fit four: full 32-byte sectors.
    ``blk=1`` lays each half image out in blocks of the cols pass's B columns, as ``blocked``."""
    if fold != 2:
        raise SizeError(f"fold={fold}: only the first radix-2 of the columns is folded (fold=2)")
    rows, _ = passes
    h, w = s["H"], s["W"]
    if h < 4:
        raise SizeError(f"fold=2 needs H >= 4 (H={h})")
    half = h // 2
    return [replace(rows, ibase=f"(wid.x + c * {half}u) * {w}u", obase=f"(c * {half}u + wid.x) * {w}u",
                    fold_n=h),
            # 2W columns, but at most W a workgroup: a workgroup (or a block) within one half
            PassSpec("cols", half, w, "T", "Y", f"(g / {w}u) * {half * w}u + g % {w}u", w,
                     "g", 2 * w, 0, "CC")]


TEMPLATES = templates_for("fft2", specs, blocked, folded)


def priors(s: Size, d: DeviceInfo | None) -> dict[str, list[Params]]:
    """fft.py's priors, after the folded register design on a big GPU with subgroups: 4096-point
    columns fit two a workgroup (16-byte runs), folded 2048-point ones four (NOTES, round 15)."""
    out = priors_for(s, d)
    if big_gpu(d) and subgroups(d):
        fold = {"regs": 16, "cols": 4, "ex": 1, "fold": 2}
        out["A"] = [fold, {**fold, "blk": 1}, *out["A"]]
    return out
