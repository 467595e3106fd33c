"""Headless output: progress lines, the results table and the JSON document.

Only formatting happens here; every number arrives already derived by the engine.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from vajra_tui.cli.console import Console
from rich.table import Table
from rich.text import Text

from vajra_tui.safe_text import clean, plain
from vajra_tui.cli.tables import PRIORITY, fitted_table, terminal_width
from vajra_tui import fmt

from vajra_tui.engine.events import (
    CandidateFinished, CandidateQueued, CandidateResult, CompileFinished, DeviceInfo, Event,
    GenerationStarted, GroundingResult, LanesUpdated, ModelFailover, Notice, RankingReady, SanitizerRewrite,
    SessionStarted,
    VerificationFinished, WorkloadInfo,
)
from vajra_tui.engine.run.report import RESULT_FIELDS, document, result_dict

__all__ = ["ProgressPrinter", "RESULT_FIELDS", "document", "print_table", "result_dict", "results_table"]

COLUMNS = ("kernel", "status", "median", "IQR", "GFLOP/s", "GB/s", "roofline", "speedup", "wg", "grid",
           "timing", "origin / reason")


def device_label(device: DeviceInfo) -> str:
    # the flag leads: where a narrow terminal wraps the line, it splits the name, never the flag
    soft = "SOFTWARE adapter (CPU timings): " if device.software else ""
    index = f"#{device.adapter_index} " if device.adapter_index is not None else ""
    return f"{soft}{index}{device.name} ({device.backend}, {device.adapter_type})"


class ProgressPrinter:
    """An event sink that narrates the run on stderr, one short line per step."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.names: dict[str, str] = {}
        self._told: dict[str, tuple] = {}  # the result line said for each kernel

    def _say(self, text: str) -> None:
        # names, reasons, messages and device names are data: no control code reaches the terminal
        print(clean(text), file=self.stream, flush=True)

    def _name(self, cid: str) -> str:
        """The kernel's one display name (ids such as ``g2-D`` stay internal)."""
        return self.names.get(cid, cid)

    def __call__(self, event: Event) -> None:
        if isinstance(event, CandidateQueued):
            self.names[event.id] = event.name
        elif isinstance(event, SessionStarted):
            self._say(f"device   {device_label(event.device)}")
            size = " ".join(f"{k}={v}" for k, v in event.workload.size.items())
            self._say(f"workload {event.workload.name} {size}")
        elif isinstance(event, GenerationStarted):
            self._say(f"-- generation {event.generation} ({event.source})")
        elif isinstance(event, CompileFinished) and not event.ok:
            d = event.diagnostics[0] if event.diagnostics else None
            where = f"{d.line}:{d.column} {d.message}" if d else ""
            self._say(f"compile  {self._name(event.id)}: error {where}")
        elif isinstance(event, VerificationFinished) and not event.passed:
            self._say(f"verify   {self._name(event.id)} seed {event.seed}: FAILED {event.reason}")
        elif isinstance(event, SanitizerRewrite):
            verb = "rewrote" if event.repaired else "flagged"
            self._say(f"sanitize {self._name(event.id)}: {verb} {len(event.findings)} uniformity issue(s)")
        elif isinstance(event, ModelFailover):
            self._say(f"llm      {self._name(event.id)}: {event.from_model} failed ({event.reason}); using {event.to_model}")
        elif isinstance(event, GroundingResult):
            what = f"failed: {event.error}" if event.error else f"{len(event.results)} results"
            self._say(f"grounding {event.query[:60]}: {what}{' (cached)' if event.cached else ''}")
        elif isinstance(event, Notice):
            self._say(f"{event.level:<8} {event.message}")
        elif isinstance(event, CandidateFinished):
            r = event.result
            told = (r.status, r.median_ms, r.batch, r.reason)
            if self._told.get(r.id) == told:  # the same outcome again (its browser badge): said once
                return
            self._told[r.id] = told
            if r.status == "verified" and r.from_cache and r.batch is None:
                self._say(f"result   {r.name}: {fmt.ms(r.median_ms)} (an earlier run's, --resume: not timed again)")
            elif r.status == "verified":
                lane = f", {r.lane}" if r.lane and getattr(self, "_lane_shape", None) else ""
                self._say(f"result   {r.name}: {fmt.ms(r.median_ms)} ({r.timing}, batch {r.batch}{lane})")
            else:
                self._say(f"result   {r.name}: {r.status} - {r.reason}")
        elif isinstance(event, LanesUpdated):
            self._lanes(event)
        elif isinstance(event, RankingReady) and event.final:
            batch = f" (batch {event.batch}: every speedup divides that batch's baseline)" if event.batch else ""
            self._say(f"final    {event.headline}{batch}")


    def _lanes(self, event: LanesUpdated) -> None:
        """One line when the set of lanes or a lane's liveness changes, not on every state."""
        shape = [(i.label, i.adapter_index, i.state == "lost") for i in event.lanes]
        if shape == getattr(self, "_lane_shape", None) or any(i.state == "starting" for i in event.lanes):
            return
        self._lane_shape = shape
        self._say("lanes    " + ", ".join(
            f"{i.label}=#{i.adapter_index}{' LOST' if i.state == 'lost' else ''}" for i in event.lanes))


def _num(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def _speedup_and_detail(r: CandidateResult, final_batch: int | None) -> tuple[str, str]:
    """A speedup divides the baseline of its own batch: one from an earlier batch is not shown
    beside the final batch's, only which batch it came from."""
    detail = r.origin if r.status == "verified" else r.reason
    if r.browser_invalid:
        detail = f"browser-invalid ({r.browser_invalid}); {detail}"
    if r.status != "verified":  # timed, then rejected (a fresh seed): its time is no speedup to claim
        return "-", detail
    if final_batch is not None and r.batch and r.batch != final_batch and r.speedup is not None:
        return "-", f"batch {r.batch}: {r.speedup:.2f}x of that batch's baseline; {detail}"
    if r.from_cache and r.batch is None and r.speedup is not None:  # --resume: not timed again here
        return "-", f"earlier run: {r.speedup:.2f}x of that run's baseline; {detail}"
    return _num(r.speedup, ".2f") + ("x" if r.speedup else ""), detail


def results_table(device: DeviceInfo, workload: WorkloadInfo, results: list[CandidateResult],
                  winner_id: str | None = None, width: int | None = None,
                  final_batch: int | None = None) -> Table:
    """One row per kernel; with ``final_batch``, speedups only for the rows of that batch."""
    size = "x".join(str(v) for v in workload.size.values())
    # every text is a Text: a str would be parsed as markup ("[/oops]" raises, "[link=...]" links)
    title = plain(f"{workload.name} {size} on {device_label(device)}", single_line=True)
    names, priority = table_columns(workload)
    columns = [(col, "right" if col not in ("kernel", "status", "origin / reason") else "left") for col in names]
    rows: list[list[Any]] = []
    for r in results:
        crown = "★ " if r.id == winner_id else ""
        mark = "*" if r.portable is False else ""  # over WebGPU's default limits: the footnote says why
        mark += "†" if _over(r) else ""  # dispatched many times over: the footnote says by how much
        roof = f"{r.pct_of_roofline:.0f}% {r.regime[0]}" if r.pct_of_roofline is not None and r.regime else "-"
        speedup, detail = _speedup_and_detail(r, final_batch)
        cells = dict(zip(COLUMNS, [
            plain(crown + r.name, single_line=True) + mark, plain(r.status), fmt.ms(r.median_ms), fmt.ms(r.iqr_ms),
            _num(r.gflops, ".1f"), _num(r.gbps, ".1f"), plain(roof + ("?" if r.suspicious else "")),
            speedup, "x".join(map(str, r.workgroup_size)) or "-", "x".join(map(str, r.grid)) or "-",
            plain(r.timing or "-"), plain(detail, limit=60 if width is None or width < 120 else 200),
        ]))
        rows.append([cells[name] for name in names])
    table, dropped = fitted_table(title, columns, rows, terminal_width() if width is None else width,
                                  priority=priority)
    notes = [n for n in (over_dispatch_note(results, workload), browser_note(results, winner_id),
                         passes_note(results, winner_id), portability_note(results), dropped_note(dropped, width))
             if n is not None]
    table.caption = Text("\n").join(notes) if notes else None
    return table


def table_columns(workload: WorkloadInfo) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The columns, and the order they are kept in at a narrow width. A workload of no
    arithmetic (a copy, a transpose) is judged by GB/s: its GFLOP/s column would read 0.0
    on every row while GB/s was the one dropped at 80 columns, so GB/s takes its place."""
    if workload.flops > 0:
        return COLUMNS, PRIORITY
    return (tuple(c for c in COLUMNS if c != "GFLOP/s"),
            tuple("GB/s" if c == "GFLOP/s" else c for c in PRIORITY if c != "GB/s"))


def _over(r: CandidateResult) -> tuple[int, int] | None:
    """The factors by which the kernel's first grid was too large, or None."""
    fx, fy = (list(r.over_dispatch) + [1, 1])[:2]
    return (fx, fy) if fx * fy > 1 else None


def _fitting_tile(r: CandidateResult, workload: WorkloadInfo, f: tuple[int, int]) -> tuple[int, int] | None:
    """The output elements one workgroup really computes: its header's (or shape's) tile times the factors."""
    from vajra_tui.engine.admission.contract import tile_of

    wg = (list(r.workgroup_size) + [1, 1, 1])[:3]
    try:
        tile = tile_of(r.source, dict(workload.size), (wg[0], wg[1], wg[2]), dict(r.constants))  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 - a header that cannot be read here says nothing more
        return None
    return tile[0] * f[0], tile[1] * f[1]


def over_dispatch_note(results: list[CandidateResult], workload: WorkloadInfo, most: int = 3) -> Text | None:
    """The footnote of the rows marked ``†``: a finding about the result, so it is in the table
    whatever ``--quiet`` hid (the progress line said it once; --json has ``over_dispatch``)."""
    said = []
    for r in [r for r in results if _over(r)][:most]:
        f = _over(r) or (1, 1)
        tile = _fitting_tile(r, workload, f)
        grid = (list(r.grid) + [1, 1])[:2]
        og = (list(workload.output_grid) + [1, 1])[:2]
        header = f"`// tile: {tile[0]}x{tile[1]}`" if tile else "a `// tile:` header"
        text = f"{r.name}: dispatched {f[0] * f[1]}x over ({f[0]}x{f[1]} times fewer workgroups also verify)"
        if tile and grid == [-(-og[0] // tile[0]), -(-og[1] // tile[1])]:  # re-planned, timed on what it needs
            text += f"; timed on the {grid[0]}x{grid[1]} it needs; declare {header}"
        else:  # the workload's own grid= (or a grid Vajra left alone): said, not changed
            fewer = f"{-(-grid[0] // f[0])}x{-(-grid[1] // f[1])}"
            text += (f"; its time includes the extra workgroups: {fewer} of its {grid[0]}x{grid[1]} would do"
                     + (f" (each workgroup computes {tile[0]}x{tile[1]}: {header} with output_grid)" if tile else ""))
        said.append(text)
    if not said:
        return None
    more = len([r for r in results if _over(r)]) - most
    return plain("† " + "; ".join(said) + (f"; {more} more (see --json)" if more > 0 else ""), style="dim")


def portability_note(results: list[CandidateResult], most: int = 3) -> Text | None:
    """The footnote of the rows marked ``*``: over WebGPU's default limits, or wrong in the
    browser (browser/crown.py), and why."""
    barred = [r for r in results if r.portable is False]
    if not barred:
        return None
    said = "; ".join(f"{r.name}: {', '.join(r.portability)}" for r in barred[:most])
    more = f"; {len(barred) - most} more (see --json)" if len(barred) > most else ""
    return plain(f"* not portable (crowned only under --limits adapter): "
                 f"{said}{more}", style="dim", single_line=True)


def browser_note(results: list[CandidateResult], winner_id: str | None) -> Text | None:
    """The winner's browser judgement in one line (its details are in --json and the lockfile);
    with no winner, the baseline's when it was judged (--export-baseline exported it)."""
    r = next((r for r in results if r.id == (winner_id or "baseline")), None)
    said = fmt.browser_line(r) if r is not None else ""
    return plain(said, style="dim", single_line=True) if said else None


def passes_note(results: list[CandidateResult], winner_id: str | None) -> Text | None:
    """A multi-pass workload: each pass's median for the baseline and the winner (all in --json)."""
    shown = [r for r in results if r.pass_ms and r.passes and (r.id == "baseline" or r.id == winner_id)]
    if not shown:
        return None
    lines = [f"{r.name} passes: " + " · ".join(f"{p['label']} {fmt.ms(ms)}" for p, ms in zip(r.passes, r.pass_ms))
             for r in shown]
    return plain("\n".join(lines), style="dim")


def dropped_note(dropped: list[str], width: int | None) -> Text | None:
    if not dropped:
        return None
    return Text(f"not shown at {width or terminal_width()} columns: {', '.join(dropped)} "
                "(widen the terminal, or use --json or --csv)", style="dim")


def print_table(*args: Any, **kwargs: Any) -> None:
    """At the terminal's real width (when piped: $COLUMNS, else 80); columns drop, never squeeze."""
    console = Console()
    console.print(results_table(*args, width=console.width, **kwargs))
