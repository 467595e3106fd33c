"""2-D FFT templates: the row pass and the column pass as register sub-FFTs (A), Stockham
radix-4 (B) and radix-8 (C) stages, from fft.py's generator (several columns per workgroup coalesce the
strided column pass). ``fold`` moves the columns' first radix-2 (or 4) step into the rows
pass, so the column pass holds columns half as long (a quarter, folded by 4), and more of them fit a workgroup."""

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
    Folded (``fold``), each image is blocked: row r0 of image c starts at c * H/R * W.
    ``blk=2`` makes B twice the cols pass's count (within W): the rows pass writes runs twice
    as long, and a cols workgroup reads half of each block's row."""
    rows, columns = passes
    b, h = cols[1], columns.length
    start = f"c * {h * rows.length}u + wid.x * {b}u" if rows.fold_n else f"g * {b}u"
    return [replace(rows, obase=start, ostride=1, oblock=b, ojump=b * h),
            replace(columns, ibase=f"(g / {b}u) * {b * h}u + g % {b}u", istride=b)]


def folded(passes: list[PassSpec], s: Size, fold: int) -> list[PassSpec]:
    """``fold=R`` (2 or 4): the rows pass does rows r0 + j*H/R, j < R (the grid's H / R
    workgroups, two rows at a time) and stores the columns' first radix-R step across them
    (fft_fold.py), so T holds R images of H/R rows: T[(k1 * H/R + r0) * W + c]. The cols pass
    then runs H/R-point columns, R times as many, each into Y's rows R*k + k1. Where
    4096-point columns fit two a workgroup (16-byte runs), 2048-point ones fit four: full
    32-byte sectors; at R = 4, 1024-point ones four in 16 KB, or eight.
    ``blk=1`` lays each image out in blocks of the cols pass's B columns, as ``blocked``."""
    if fold not in (2, 4):
        raise SizeError(f"fold={fold}: the columns' first step folds as radix 2 or 4")
    rows, _ = passes
    h, w = s["H"], s["W"]
    if h < 2 * fold:
        raise SizeError(f"fold={fold} needs H >= {2 * fold} (H={h})")
    part = h // fold
    return [replace(rows, ibase=f"(wid.x + c * {h // 2}u) * {w}u", obase=f"(c * {part}u + wid.x) * {w}u",
                    fold_n=h, fold_r=fold, fold_jump=part * w),
            # RW columns, but at most W a workgroup: a workgroup (or a block) within one image
            PassSpec("cols", part, w, "T", "Y", f"(g / {w}u) * {part * w}u + g % {w}u", w,
                     "g", fold * w, 0, "CC")]


TEMPLATES = templates_for("fft2", specs, blocked, folded)


def priors(s: Size, d: DeviceInfo | None) -> dict[str, list[Params]]:
    """fft.py's priors, after the folded register design on a big GPU with subgroups: 4096-point
    columns fit two a workgroup (16-byte runs), folded 2048-point ones four. On an H100 the
    scratch in blocks of 8 columns ran 0.282 ms, of 4 0.297, row-major 0.304, unfolded 0.444,
    beside cuFFT's 0.262 (NOTES, rounds 15-17)."""
    out = priors_for(s, d)
    if big_gpu(d) and subgroups(d):
        fold = {"regs": 16, "cols": 4, "ex": 1, "fold": 2}
        out["A"] = [{**fold, "blk": 2}, {**fold, "blk": 1}, fold, *out["A"]]
    return out
