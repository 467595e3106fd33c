"""2-D FFT templates: the row pass and the column pass as register sub-FFTs (A), Stockham
radix-4 (B) and radix-8 (C) stages, from fft.py's generator (several columns per workgroup coalesce the
strided column pass)."""

from __future__ import annotations

from dataclasses import replace

from vajra_tui.engine.sources.library.base import Size
from vajra_tui.engine.sources.library.fft import priors_for, templates_for
from vajra_tui.engine.sources.library.fft_gen import PassSpec


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
    runs (16 bytes at B = 2) down the image; a rows workgroup of R rows writes runs of R x B."""
    rows, columns = passes
    b, h = cols[1], columns.length
    return [replace(rows, obase=f"g * {b}u", ostride=1, oblock=b, ojump=b * h),
            replace(columns, ibase=f"(g / {b}u) * {b * h}u + g % {b}u", istride=b)]


TEMPLATES = templates_for("fft2", specs, blocked)
priors = priors_for
