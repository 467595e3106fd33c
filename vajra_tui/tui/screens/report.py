"""Screen 5: the report card — ranked verified kernels, a throughput chart, provenance.

Numbers are only formatted here; every one of them was derived by the engine
and arrived inside CandidateResult. The throughput is GFLOP/s, or GB/s for a workload
of no arithmetic (a copy, a transpose), whose GFLOP/s are 0 on every row.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.widgets import DataTable, Header, Static

from vajra_tui.engine.events import CandidateResult, WorkloadInfo
from vajra_tui.safe_text import plain
from vajra_tui.tui.state import CandidateView, RunState
from vajra_tui import fmt
from vajra_tui.tui.widgets.banner import Banner
from vajra_tui.tui.widgets.footer import FittingFooter
from vajra_tui.tui.widgets.lists import ListTable, cell_width, fit_columns
from vajra_tui.tui.widgets.chart import Bar, ThroughputChart
from vajra_tui.tui.screens import ListScreen

CROWN = "👑"
COLUMNS = ("", "kernel", "median", "GFLOP/s", "speedup", "GB/s", "roofline", "regime",
           "FLOP/B", "workgroup", "grid", "IQR", "timing", "origin")
# Too narrow for every column (80 columns over SSH cut the table at "workgroup"), the
# first of these are left out, whole, until the rest fit; the others always show.
DROP_FIRST = ("origin", "timing", "IQR", "FLOP/B", "grid", "workgroup", "GB/s", "regime", "roofline")
# No arithmetic: GB/s stands where GFLOP/s did (and is kept at 80 columns); no GFLOP/s or FLOP/B.
BYTES_COLUMNS = tuple("GB/s" if c == "GFLOP/s" else c for c in COLUMNS if c not in ("GB/s", "FLOP/B"))
BYTES_DROP_FIRST = tuple(c for c in DROP_FIRST if c in BYTES_COLUMNS and c != "GB/s")


def metric(workload: WorkloadInfo | None) -> str:
    """What ranks the kernels' throughput: GFLOP/s, or GB/s when the workload does no arithmetic."""
    return "GB/s" if workload is not None and workload.flops == 0 else "GFLOP/s"


def throughput(r: CandidateResult, unit: str) -> float | None:
    return r.gbps if unit == "GB/s" else r.gflops


def report_row(view: CandidateView, r: CandidateResult, rank: str,
               columns: tuple[str, ...] = COLUMNS) -> tuple[object, ...]:
    """The row's cells in ``columns`` (COLUMNS, or BYTES_COLUMNS for a workload of no arithmetic)."""
    # every text cell is a Text: a str cell would be parsed as markup by the DataTable
    label = view.label + ("*" if r.portable is False else "")  # over WebGPU's default limits
    cells = dict(zip(COLUMNS, (
        rank, plain(label, style="bold" if rank == CROWN else "", single_line=True),
        fmt.ms(r.median_ms), fmt.num(r.gflops), fmt.speedup(r.speedup), fmt.num(r.gbps),
        fmt.pct(r.pct_of_roofline), plain(r.regime or fmt.DASH, single_line=True),
        fmt.num(r.intensity), fmt.dims(r.workgroup_size), fmt.dims(r.grid), fmt.ms(r.iqr_ms),
        plain(r.timing or fmt.DASH, single_line=True),
        plain(view.origin or view.strategy, single_line=True))))
    return tuple(cells[name] for name in columns)


def shown_columns(rows: list[tuple[object, ...]], width: int,
                  columns: tuple[str, ...] = COLUMNS) -> tuple[str, ...]:
    """The names of ``columns`` that fit ``width`` cells whole (0: unknown, all of them)."""
    widths = [max([cell_width(label)] + [cell_width(row[i]) for row in rows]) for i, label in enumerate(columns)]
    drop = DROP_FIRST if columns == COLUMNS else BYTES_DROP_FIRST
    return tuple(columns[i] for i in fit_columns(columns, widths, width, drop))


def provenance(state: RunState, replay: bool = False) -> Text:
    """Device (software flag), timing method, seeds: what the numbers stand on."""
    s = state.session
    if s is None:
        return Text("no session yet", style="dim")
    methods = sorted({v.result.timing for v in [*state.ranked, state.baseline]
                      if v is not None and v.result is not None and v.result.timing})
    style = "bold yellow" if s.device.software else "bold green"
    text = Text.assemble(("Device ", "bold"), (fmt.device_label(s.device), style),
                         ("\nWorkload ", "bold"), fmt.workload_label(s.workload), "  ",
                         ("Timing ", "bold"), ", ".join(methods) or fmt.DASH,
                         f" · warm-up {s.warmup}, {s.reps} timed rounds · seeds ",
                         ", ".join(map(str, s.seeds)) or fmt.DASH,
                         f" · caches {_cache_states(state)}",
                         f" · source {s.source_mode}", f" · grounding {'on' if s.grounding else 'off'}",
                         f" · vajra {s.tool_version}")
    if state.calibration is not None:
        cal = state.calibration
        text.append(f" · roofline copy {fmt.num(cal.copy_gbps)} GB/s, FMA {fmt.num(cal.fma_gflops)} GFLOP/s"
                    f" ({fmt.calibration_note(cal, state.calibration_cached, recorded=replay)})")
    return text


def _cache_states(state: RunState) -> str:
    """Which cache state the shown numbers were timed in, and the GPU clocks of the batch."""
    results = [v.result for v in state.ranked if v.result is not None]
    states = sorted({r.cache_state for r in results}) or ["warm"]
    clocks = next((r.telemetry for r in results if r.telemetry is not None), None)
    return f"{'/'.join(states)} · GPU {fmt.telemetry(clocks)}"


class ReportScreen(ListScreen):
    LIST_ID = "ranking"
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Banner()
        yield Static(id="report-winner")
        yield Static(id="provenance")
        yield ListTable(id="ranking")
        yield ThroughputChart(id="chart")
        yield FittingFooter()

    def on_mount(self) -> None:
        self.title, self.sub_title = "Vajra", "report card"
        table = self.query_one("#ranking", DataTable)
        self._columns: tuple[str, ...] = ()
        self._set_columns(table, COLUMNS)
        table.focus()
        self._drawn: tuple[object, ...] = ()
        self.mounted()

    def on_resize(self) -> None:
        """Another width may fit more (or fewer) columns: draw the table again."""
        self._drawn = ()
        self.redraw()

    def _set_columns(self, table: DataTable, shown: tuple[str, ...]) -> None:
        if shown == self._columns:
            return
        table.clear(columns=True)
        for name in shown:
            table.add_column(name, key=name or "rank")
        self._columns = shown

    def _fill(self, rows: list[tuple[CandidateView, CandidateResult, str]], unit: str) -> None:
        """The ranking's rows, in the columns this width fits whole."""
        table = self.query_one("#ranking", DataTable)
        columns = BYTES_COLUMNS if unit == "GB/s" else COLUMNS
        cells = [report_row(view, result, rank, columns) for view, result, rank in rows]
        # less the table's margins and a vertical scrollbar's column (a long ranking scrolls)
        width = (self.size.width or self.app.size.width) - 2 - 1
        cursor = table.cursor_row
        table.clear()
        self._set_columns(table, shown_columns(cells, width, columns))
        for (view, _, _), row in zip(rows, cells):
            table.add_row(*(cell for name, cell in zip(columns, row) if name in self._columns), key=view.id)
        if rows:
            table.move_cursor(row=min(cursor, len(rows) - 1))

    def sync(self, state: RunState) -> None:
        winner = state.winner
        rows: list[tuple[CandidateView, CandidateResult, str]] = []
        number = 0
        for view in state.ranked:  # the baseline ranks in its place ("ref")
            if view.result is None:
                continue
            number += view.id != "baseline"
            mark = "ref" if view.id == "baseline" else CROWN if view is winner else str(number)
            rows.append((view, view.result, mark))
        base = state.baseline
        listed = any(view.id == "baseline" for view, _, _ in rows)
        if not listed and base is not None and base.result is not None and base.result.status == "verified":
            rows.append((base, base.result, "ref"))  # recordings from before the baseline ranked
        signature = (self.size.width, id(state.session), id(state.calibration), id(state.ranking),
                     tuple((v.id, id(r), r.browser, rank) for v, r, rank in rows))
        if signature == self._drawn:
            return
        self._drawn = signature
        self.query_one("#provenance", Static).update(provenance(state, getattr(self.app, "replay_events", None) is not None))
        unit = metric(state.workload)
        self.query_one("#report-winner", Static).update(headline(state, unit))
        self._fill(rows, unit)
        self.query_one(ThroughputChart).sync([
            Bar(view.label, throughput(result, unit) or 0.0, baseline=view.id == "baseline", winner=view is winner)
            for view, result, _ in rows],
            f" · batch {state.ranking.batch}" if state.ranking and state.ranking.batch else "", unit)

    @on(DataTable.RowHighlighted, "#ranking")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self.vapp.selected_id = str(event.row_key.value)


def undecided_note(state: RunState) -> str:
    """Why a kernel with the faster median was not crowned: its samples overlap the baseline's."""
    view = state.candidates.get(state.ranking.undecided_id or "") if state.ranking else None
    if view is None or view.result is None or not view.result.speedup:
        return ""
    return (f" {view.label}'s median is {fmt.speedup(view.result.speedup)} the baseline's, but inside"
            f" the noise of {len(view.result.times_ms)} reps: more reps can tell.")


def headline(state: RunState, unit: str) -> Text:
    """The crown (or why there is none), its numbers in ``unit``, its browser verdict, the batch."""
    winner = state.winner
    text = Text("No ranking yet: the report fills in when generation 1 is measured.", style="dim")
    if state.ranking is not None:
        text = Text("Nothing verified beat the checks: see the graveyard (g).", style="bold red")
        if state.ranking.baseline_won:
            which = "portable candidate" if state.ranking.fastest_id else "candidate"
            text = Text(f"No {which} beat the baseline: nothing is crowned.", style="bold yellow")
            text.append(undecided_note(state))
    if winner is not None and winner.result is not None:
        tie = state.ranking is not None and bool(state.ranking.tie_ids)
        text = Text.assemble((f"{CROWN} {winner.label}", "bold"),
                             " ties at " if tie else " wins: ",
                             (fmt.speedup(winner.result.speedup), "bold green"), " vs baseline, ",
                             f"{fmt.ms(winner.result.median_ms)}, "
                             f"{fmt.num(throughput(winner.result, unit))} {unit}")
        if tie:  # on the headline, beside the numbers it qualifies (not after the browser's line)
            others = ", ".join(state.candidates[i].label for i in state.ranking.tie_ids
                               if i in state.candidates)
            text.append(f"  (tie with {others}: within noise)", style="yellow")
        text.append_text(browser_badge(winner.result))
        text.append_text(browser_line(winner.result))
        r = winner.result
        if r.pass_ms and r.passes:  # a multi-pass result: each pass's share of its time
            text.append("\npasses: " + " · ".join(f"{p['label']} {fmt.ms(ms)}"
                                                 for p, ms in zip(r.passes, r.pass_ms)), style="dim")
    text.append(fastest_here(state))
    if state.ranking is not None and state.ranking.batch is not None:
        text.append(f"\nshoot-out batch {state.ranking.batch}: every number below was timed "
                    "in it, beside one baseline sample", style="dim")
    return text


def fastest_here(state: RunState) -> Text:
    """The fastest kernel here, when ``--limits portable`` kept it from the crown, and why."""
    fid = state.ranking.fastest_id if state.ranking is not None else None
    view = state.candidates.get(fid) if fid else None
    if view is None or view.result is None:
        return Text("")
    r = view.result
    why = "; ".join(r.portability) or "over WebGPU's default limits"
    return Text.assemble("\n* fastest here: ", (view.label, "bold"), f" {fmt.speedup(r.speedup)}, ",
                         f"{fmt.ms(r.median_ms)}, not portable ({why}); --limits adapter would crown it",
                         style="yellow")


def browser_line(result: CandidateResult) -> Text:
    """Where the crowned kernel's export ran in a browser (fmt.browser_line, as the CLI says it)."""
    said = fmt.browser_line(result)
    return Text(f"\n{said}", style="dim") if said else Text("")


def browser_badge(result: CandidateResult) -> Text:
    """Whether browsers' WGSL compiler (Tint, through Dawn) accepts the crowned kernel."""
    if result.browser_invalid:  # found by Vajra's own uniformity analysis, Node or not
        return Text(f"  [browser-invalid: {result.browser_invalid}]", style="bold yellow")
    if not result.browser:
        return Text("")
    if result.browser == "browser-valid":
        return Text("  [browser-valid]", style="bold green")
    if result.browser == "tint-rejected":
        first = result.browser_diagnostics[0] if result.browser_diagnostics else None
        where = f" {first.line}:{first.column} {first.message}" if first else ""
        return Text(f"  [Tint rejects it:{where}]", style="bold yellow")
    # "unchecked: <why>": the browser line under the headline says why, and it says it once
    shown = result.browser.split(":", 1)[0] if fmt.browser_line(result) else result.browser
    return Text(f"  [{shown}]", style="dim")
