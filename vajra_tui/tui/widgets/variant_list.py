"""The variants screen's list: every candidate, in the engine's last ranking's order.

Two things keep it honest beside the report card and the CLI's table:

- A speedup divides the baseline of its own batch. Rows from the final ranking's batch
  show theirs; a row timed in an earlier batch shows ``-`` and, in the batch column,
  which batch and what its speedup was there (``3: 10.07× of its baseline``).
- Too narrow for every column (80 columns cut the last one at "GFLOP/"), whole columns
  are left out, least needed first, as the report card does.

A tick redraws only the rows that changed (a replay of thousands stays linear); the whole
list is drawn again only when the ranking (its order, its batch) or the fitting columns move.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets.data_table import ColumnKey

from vajra_tui import fmt
from vajra_tui.safe_text import plain
from vajra_tui.tui.standing import final_batch, other_batch, standing
from vajra_tui.tui.state import CandidateView, RunState
from vajra_tui.tui.widgets.lists import ListTable, cell_width, fit_columns

COLUMNS = ("kernel", "gen", "origin", "status", "median", "speedup", "batch", "GFLOP/s")
# Left out first to last while too wide: the origin is whole in each card, the generation in
# its card's border; the batch column goes last, since it says what a '-' speedup stands for.
DROP_FIRST = ("origin", "gen", "GFLOP/s", "batch")


def status_cell(view: CandidateView) -> Text:
    if view.result is None:
        return Text(view.stage, style="yellow")
    ok = view.result.status == "verified"
    return Text(view.result.status.replace("_", " "), style="green" if ok else "red")


def batch_cell(view: CandidateView, apart: int | None) -> Text:
    """Which batch timed the row; for one apart from the final batch, its speedup there."""
    r = view.result
    if r is None or r.status != "verified" or not r.batch:
        return Text(fmt.DASH)
    if apart is not None:
        return Text(f"{apart}: {fmt.speedup(r.speedup)} of its baseline", style="dim")
    return Text(str(r.batch))


def row_cells(view: CandidateView, apart: int | None = None) -> tuple[object, ...]:
    """One row; ``apart``: the row's batch when its speedup divides another batch's baseline."""
    r = view.result
    verified = r is not None and r.status == "verified"
    # names and origins are data: Text cells, never markup (DataTable parses a str cell)
    return (plain(view.label, single_line=True), str(view.generation),
            plain(view.origin or view.strategy, limit=18), status_cell(view),  # whole in the card
            fmt.ms(r.median_ms) if verified and r else fmt.DASH,
            fmt.speedup(r.speedup) if verified and r and apart is None else fmt.DASH,
            batch_cell(view, apart),
            fmt.num(r.gflops) if verified and r else fmt.DASH)


class VariantList(ListTable):
    """Every candidate's row, ranked ones first (see the module doc)."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self._cells: dict[str, tuple[object, ...]] = {}
        self._widths = [cell_width(label) for label in COLUMNS]
        self._columns: tuple[int, ...] = ()
        self._order: tuple[object, ...] | None = None  # the ranking and batch the rows follow
        self.apart: set[str] = set()  # rows whose speedup is from an earlier batch

    def refit(self) -> None:
        """Another width may fit more (or fewer) columns: the next sync draws them all again."""
        self._columns = ()

    def sync(self, state: RunState, changed: list[CandidateView], width: int) -> int | None:
        """Bring the rows up to date; returns the final batch the speedups divide (None: none yet)."""
        final = final_batch(state)
        order = (id(state.ranking), final)
        if order != self._order:  # a new ranking: its order, and every row's batch against it
            self._order = order
            self._cells = {view.id: self._cells_of(view, final) for view in standing(state)}
            self._fit(list(self._cells.values()), width)
            self._draw(state)
            return final
        fresh = {view.id: self._cells_of(view, final) for view in changed if view.id != "baseline"}
        if self._fit(list(fresh.values()), width):
            self._cells.update(fresh)
            self._draw(state)
            return final
        for cid, cells in fresh.items():
            old = self._cells.get(cid)
            if old == cells:
                continue  # unchanged rows cost nothing: a tick may carry many events
            self._cells[cid] = cells
            shown = [cells[i] for i in self._columns]
            if cid in self.rows and old is not None:
                for index, value in zip(self._columns, shown):
                    if value != old[index]:
                        self.update_cell(cid, COLUMNS[index], value, update_width=self._wider(index, value))
            else:
                self.add_row(*shown, key=cid)
        return final

    def _cells_of(self, view: CandidateView, final: int | None) -> tuple[object, ...]:
        apart = other_batch(view, final)
        if apart is None:
            self.apart.discard(view.id)
        else:
            self.apart.add(view.id)
        return row_cells(view, apart)

    def _fit(self, rows: list[tuple[object, ...]], width: int) -> bool:
        """Widen the known widths by ``rows``; True when the columns that fit have changed."""
        for row in rows:
            for index, value in enumerate(row):
                self._widths[index] = max(self._widths[index], cell_width(value))
        shown = fit_columns(COLUMNS, self._widths, width, DROP_FIRST)
        if shown == self._columns:
            return False
        self._columns = shown
        return True

    def _draw(self, state: RunState) -> None:
        """Every row again, in the ranking's order, in the columns that fit. A cursor moved down
        the list stays on its kernel; one on the first row stays there, on the new leader."""
        key = before = None
        if self.row_count:
            before = self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
            key = before if self.cursor_row > 0 else None
        self.clear(columns=True)
        for index in self._columns:
            self.add_column(COLUMNS[index], key=COLUMNS[index])
        ids = [view.id for view in standing(state) if view.id in self._cells]
        for cid in ids:
            self.add_row(*(self._cells[cid][i] for i in self._columns), key=cid)
        row = ids.index(key) if key in ids else 0
        self.move_cursor(row=row)
        if ids and ids[row] != before:  # another kernel under an unmoved cursor: say so, the
            # selected card follows it (the table only tells of a cursor that moved)
            self.post_message(self.RowHighlighted(self, row, self.coordinate_to_cell_key((row, 0)).row_key))

    def _wider(self, index: int, value: object) -> bool:
        """Whether ``value`` needs its column to grow. Widths only grow, to the widest value ever
        shown: the same on a fast host (rows added early, then updated) as on a slow one (added
        finished). Only a wider value asks the table to resize: asked with a narrower one, Textual
        re-measures every cell of the column, and a replay of thousands became quadratic."""
        return cell_width(value) > self.columns[ColumnKey(COLUMNS[index])].content_width
