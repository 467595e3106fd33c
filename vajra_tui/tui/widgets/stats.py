"""Key/value tables of one result's measurements (formatted, never computed)."""

from __future__ import annotations

from rich.table import Table

from vajra_tui.engine.events import CandidateResult
from vajra_tui import fmt


def result_table(r: CandidateResult) -> Table:
    """Median, IQR, GFLOP/s, GB/s, timing method, roofline share and regime, and the
    conditions they were measured under: cache state, batch and the GPU's clocks."""
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column(justify="right")
    table.add_column(style="bold")
    table.add_column(justify="right")
    table.add_row("median", fmt.ms(r.median_ms), "GFLOP/s", fmt.num(r.gflops))
    table.add_row("IQR", fmt.ms(r.iqr_ms), "GB/s", fmt.num(r.gbps))
    table.add_row("min / max", f"{fmt.ms(r.min_ms)} / {fmt.ms(r.max_ms)}",
                  "roofline", f"{fmt.pct(r.pct_of_roofline)} ({r.regime or fmt.DASH}-bound)")
    table.add_row("timing", r.timing or fmt.DASH, "intensity", f"{fmt.num(r.intensity)} FLOP/B")
    table.add_row("workgroup", fmt.dims(r.workgroup_size), "grid", fmt.dims(r.grid))
    table.add_row("caches", r.cache_state, "batch", fmt.DASH if r.batch is None else str(r.batch))
    table.add_row("GPU", fmt.telemetry(r.telemetry), "", "")
    return table
