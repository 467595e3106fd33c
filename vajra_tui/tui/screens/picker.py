"""Screen 1: choose a workload, a size and a candidate source; Enter runs.

The adapter is probed on a thread of its own (loading a GPU driver can take a
second) so the picker is usable at once; with no adapter it offers the shipped
recordings instead, clearly marked as recordings.

The user's workload files, and the workloads other installed packages register, are
imported on a thread of their own: importing one runs its module-level code, which may
take long or never return (bounded by the prepare deadline, 300 s by default). Their rows
are listed at once and say "loading…" until then; the built-ins can be chosen and run
meanwhile, and Enter on a loading row runs it as soon as it has loaded.
"""

from __future__ import annotations

import threading
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import (
    Button, DataTable, Header, Input, Label, OptionList, RadioButton, RadioSet, Static,
)
from textual.widgets.option_list import Option

from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.admission.adapter_fit import missing_features, oversized
from vajra_tui.engine.workloads import SizeError, WorkloadError
from vajra_tui.engine.workloads.loader import (
    Found, each_in_folder_as_loaded, each_other_package, folder_paths, registered_in_two,
)
from vajra_tui.safe_text import clean, one_line, plain
from vajra_tui.shipped import shipped_recordings  # package data: in a wheel too
from vajra_tui import fmt
from vajra_tui.tui.widgets.banner import Banner
from vajra_tui.tui.widgets.footer import FittingFooter
from vajra_tui.tui.widgets.lists import ListTable
from vajra_tui.tui.screens import StateScreen

PRESETS = ("seed", "large", "custom")
SOURCES = ("library", "llm", "auto")  # the CLI's --source names; "llm" is the Nemotron model
SOURCE_LABELS = {"library": "library (offline)", "llm": "Nemotron", "auto": "auto"}


NOT_THIS_SIZE = "does not apply"  # the size chosen (--size, or typed) is another workload's shape
LOADING = "loading…"  # a folder file whose import has not finished


def row_label(f: Found) -> str:
    """How the picker names a workload. Yours say so: "(yours)" for the workloads folder's,
    "(yours: FILE)" for one given with ``-w``, so a file that shares a folder workload's (or
    any listed) name is never shown as if it were a built-in, and each row is told apart."""
    if f.origin == "folder":
        return f"{f.name} (yours)"
    if f.origin == "file":  # one that did not load is named by what was given
        return f"{f.name} (yours: {_short(f.key)})" if f.workload is not None else f"{_short(f.key)} (yours)"
    return f.name


def _short(spec: str, most: int = 24) -> str:
    """A given file by its name (the line under the table has its whole path), or a module
    spec, elided at the start past ``most`` characters: the table keeps its columns at 80."""
    name = Path(spec).name if "/" in spec or spec.endswith(".py") else spec
    return name if len(name) <= most else "…" + name[-(most - 1):]


def _same_file(a: str, b: str) -> bool:
    try:
        return Path(a).expanduser().resolve() == Path(b).expanduser().resolve()
    except (OSError, RuntimeError):
        return False


# A focused widget's enter (the table's select, the field's submit) shadows the screen's: the
# footer showed no way to start a run. Where enter runs, the widget's own binding says so.
class WorkloadTable(ListTable):
    BINDINGS = [Binding("enter", "select_cursor", "Run")]


class SizeInput(Input):
    BINDINGS = [Binding("enter", "submit", "Run")]


EMPTY_CUSTOM = "custom size: type one (e.g. 128 or 256x256x64), or choose seed or large"


class PickerScreen(StateScreen):
    BINDINGS = [Binding("enter", "run", "Run", id="run")]

    def compose(self) -> ComposeResult:
        app = self.vapp
        yield Header()
        yield Banner()
        yield Static("Adapter: detecting…", id="adapter")
        yield WorkloadTable(id="workloads")
        yield Static(id="workload-what")
        with Horizontal(id="options"):
            with Vertical(id="size-box"):
                yield Label("Size", classes="box-title")
                with RadioSet(id="preset"):
                    for preset in PRESETS:
                        yield RadioButton(preset, value=preset == app.initial_preset)
                yield SizeInput(app.initial_custom, placeholder="e.g. 128 or 256x256x64", id="custom")
            with Vertical(id="source-box"):
                yield Label("Candidates", classes="box-title")
                with RadioSet(id="source"):
                    for source in SOURCES:
                        yield RadioButton(self._source_label(source), value=source == app.initial_source)
                yield Static(self._grounding_text(), id="grounding")
        yield Static("", id="picker-error")
        with Vertical(id="recordings"):
            yield Static("No WebGPU adapter found. Play a shipped RECORDING instead "
                         "(recorded elsewhere, not measured on this machine):", id="no-adapter")
            yield OptionList(id="recording-list")
        yield Button("Run ▶", id="run", variant="primary")
        yield FittingFooter()

    def on_mount(self) -> None:
        self.title, self.sub_title = "Vajra", "pick a workload"
        table = self.query_one("#workloads", DataTable)
        # the description is its own line under the table: a column of it was cut at 80 columns
        for label in ("workload", "size", "FLOPs", "bytes"):
            table.add_column(label, key=label)
        # the built-ins, other packages' registered workloads, then the user's folder: the last
        # two are listed now and imported by _load_yours; one that does not load is listed with
        # its one-line error, and the rest still run
        built_ins, packages = registered_in_two()
        self.found: list[Found] = built_ins + packages
        self.found += [Found(str(path), path.stem, "folder") for path in folder_paths()]
        # keys of rows whose import has not finished (Screen.loading is Textual's own)
        self.importing: set[str] = {f.key for f in self.found[len(built_ins):]}
        self._queued_run: str | None = None  # the row Enter was pressed on while it loaded
        for f in self.found:
            table.add_row(plain(row_label(f), single_line=True), "", "", "", key=f.key)
        self._place_cursor(self.vapp.initial_workload)
        self._mount_row = table.cursor_row
        # -w names a file, or a folder workload by a name not its file's: its row comes later
        self._initial_unresolved = self._given_pending(self.vapp.initial_workload)
        self.query_one("#recordings").display = False
        self.query_one("#custom", Input).cursor_blink = not self.app.is_headless
        self._refresh_sizes()
        table.focus()
        self._probe()
        if self.importing or self._initial_unresolved:
            self._load_yours(self.vapp.initial_workload)

    @property
    def still_importing(self) -> bool:
        """Whether a file of the folder, or the one ``-w`` named, is still being imported."""
        return bool(self.importing) or self._initial_unresolved

    def _place_cursor(self, initial: str | None) -> None:
        row = self._initial_row(initial) if initial else None
        if row is not None:
            self.query_one("#workloads", DataTable).move_cursor(row=row)

    def _given_pending(self, spec: str | None) -> bool:
        """Whether ``-w`` names something no row has yet: a file, or a folder workload by a
        name that is not its file's."""
        return bool(spec) and self._initial_row(spec) is None

    # ---- the user's files ------------------------------------------------------
    def _load_yours(self, initial: str | None) -> None:
        """Other packages' registered workloads on one thread, the folder's files (each on a
        thread of its own) then a ``-w`` file on another, imported off the UI thread (their code
        runs), each row filled in as its import finishes: a plugin or a file that hangs holds
        back no other. Daemon threads
        of their own, not Textual thread workers: those run on asyncio's executor, whose threads
        the interpreter waits for at exit, so quitting beside a hanging file kept the process
        alive until its deadline."""
        if any(f.origin.startswith("package ") and f.key in self.importing for f in self.found):
            threading.Thread(target=self._import_packages, name="vajra-picker-packages", daemon=True).start()
        threading.Thread(target=self._import_yours, args=(initial,), name="vajra-picker-imports",
                         daemon=True).start()

    def _import_packages(self) -> None:
        try:
            for found in each_other_package():
                self.app.call_from_thread(self._one_loaded, found)
        except RuntimeError:  # the app has ended meanwhile: no picker to fill in
            return

    def _import_yours(self, initial: str | None) -> None:
        try:
            yours: dict[str, Found] = {}  # by path: a file given again (a name taken back) counts once
            for found in each_in_folder_as_loaded([Path(f.key) for f in self.found
                                                   if f.origin == "folder" and f.key in self.importing]):
                yours[found.key] = found
                self.app.call_from_thread(self._one_loaded, found)
            given = self._given(initial, [f for f in self.found if f.origin != "folder"] + list(yours.values()))
            self.app.call_from_thread(self._all_loaded, given, initial)
        except RuntimeError:  # the app has ended meanwhile: no picker to fill in
            return

    def _one_loaded(self, found: Found) -> None:
        table = self.query_one("#workloads", DataTable)
        self.found = [found if f.key == found.key else f for f in self.found]
        self.importing.discard(found.key)
        table.update_cell(found.key, "workload", plain(row_label(found), single_line=True), update_width=True)
        self._after_loading(table)

    def _all_loaded(self, given: list[Found], initial: str | None) -> None:
        table = self.query_one("#workloads", DataTable)
        row_before = table.cursor_row
        self.found += given
        for f in given:
            table.add_row(plain(row_label(f), single_line=True), "", "", "", key=f.key)
        if self._initial_unresolved and row_before == table.cursor_row == self._mount_row:
            self._place_cursor(initial)  # not moved meanwhile: to -w's row, now known
        self._initial_unresolved = False
        self._after_loading(table)

    def _after_loading(self, table: DataTable) -> None:
        """Sizes and the description brought up to date; a run Enter asked for while the row
        under the cursor was loading starts now (or is refused in its one line)."""
        self._refresh_sizes()
        self._describe_row(table.cursor_row)
        if self._queued_run is None or self._initial_unresolved:
            return
        row = self._initial_row(self._queued_run)
        if row is None or self.found[row].key in self.importing:
            return  # not loaded yet
        self._queued_run = None
        if row == table.cursor_row:  # still on it: as if Enter were pressed now
            self.query_one("#picker-error", Static).update("")
            self.action_run()

    # ---- adapter ---------------------------------------------------------------
    def _probe(self) -> None:
        """The adapter, asked off the UI thread. A daemon thread, as the imports' is: a driver
        that hangs while probing must not keep the process alive after q."""
        threading.Thread(target=self._ask_adapter, name="vajra-adapter-probe", daemon=True).start()

    def _ask_adapter(self) -> None:
        try:
            device, error = self.vapp.probe(), ""
        except Exception as exc:  # no driver, no adapter: offer recordings
            device, error = None, (clean(str(exc)).strip().splitlines() or [exc.__class__.__name__])[0]
        try:
            self.app.call_from_thread(self._adapter_ready, device, error)
        except RuntimeError:  # the app has ended meanwhile
            return

    def _adapter_ready(self, device: DeviceInfo | None, error: str) -> None:
        self.vapp.adapter_info = device
        label = self.query_one("#adapter", Static)
        if device is None:
            label.update(plain(f"Adapter: none ({error or 'no WebGPU adapter'})", style="bold red"))
            box = self.query_one("#recordings")
            options = self.query_one("#recording-list", OptionList)
            for path in shipped_recordings():
                options.add_option(Option(plain(path.name, single_line=True), id=str(path)))
            box.display = True
            if shipped_recordings():
                options.highlighted = 0  # Enter plays the first one straight away
                options.focus()
                # at 80x24 the box is below the screen's end: brought into view once it is laid out
                box.scroll_visible(animate=False)
            return
        style = "bold yellow" if device.software else "bold green"
        label.update(Text.assemble("Adapter: ", (clean(fmt.device_label(device)), style)))

    # ---- choices ---------------------------------------------------------------
    def _source_label(self, source: str) -> str:
        label = SOURCE_LABELS[source]
        if source != "library" and self.vapp.settings.llm.api_key() is None:
            label += " (no API key)"
        return label

    def _grounding_text(self) -> str:
        on_ = self.vapp.settings.tavily.api_key() is not None
        return f"Grounding (Tavily): {'on' if on_ else 'off — no API key'}"

    def _preset(self) -> str:
        index = self.query_one("#preset", RadioSet).pressed_index
        return PRESETS[index] if index >= 0 else "seed"

    def _source(self) -> str:
        index = self.query_one("#source", RadioSet).pressed_index
        return SOURCES[index] if index >= 0 else "auto"

    def _size_spec(self) -> str:
        preset = self._preset()
        return self.query_one("#custom", Input).value.strip() if preset == "custom" else preset

    def _refresh_sizes(self) -> None:
        table = self.query_one("#workloads", DataTable)
        spec = self._size_spec()
        self.query_one("#custom", Input).disabled = self._preset() != "custom"
        for f in self.found:
            if f.key in self.importing:
                cells = (Text(LOADING, style="dim"), fmt.DASH, fmt.DASH)
            elif f.workload is None:
                cells = ("broken", fmt.DASH, fmt.DASH)
            else:
                try:
                    size = f.workload.size(spec or "seed")
                    info = f.workload.info(size)
                    cells = (fmt.size_text(size), fmt.si(info.flops, "FLOP"), fmt.si(info.min_bytes, "B"))
                except SizeError:  # a size meant for another workload: nothing wrong with this one
                    cells = (Text(NOT_THIS_SIZE, style="dim"), fmt.DASH, fmt.DASH)
                except Exception:  # noqa: BLE001 - a user's function failing at this size
                    cells = ("broken", fmt.DASH, fmt.DASH)
            for column, value in zip(("size", "FLOPs", "bytes"), cells):
                table.update_cell(f.key, column, value, update_width=True)

    @on(DataTable.RowHighlighted, "#workloads")
    def _describe(self, event: DataTable.RowHighlighted) -> None:
        self._describe_row(event.cursor_row)

    def _describe_row(self, row: int) -> None:
        if not 0 <= row < len(self.found):
            return
        f = self.found[row]
        what = self.query_one("#workload-what", Static)
        if f.key in self.importing:
            what.update(plain(f"{f.key}: {LOADING} (its import runs first)", style="dim"))
        elif f.workload is None:  # the file's one line: which file, which field
            what.update(plain(f.error, style="bold red"))
        else:
            where = "" if f.origin == "built-in" or f.origin.startswith("package") else f"  ({clean(f.key)})"
            what.update(Text.assemble((f"{clean(f.name)}: ", "bold"), clean(f.workload.summary),
                                      (where, "dim")))

    def _initial_row(self, initial: str) -> int | None:
        """The row ``-w`` named: its key (a file as given), a folder's file by another path, else
        the name of a listed workload."""
        for match in (lambda f: f.key == initial, lambda f: f.origin == "folder" and _same_file(f.key, initial),
                      lambda f: f.name == initial):
            row = next((i for i, f in enumerate(self.found) if match(f)), None)
            if row is not None:
                return row
        return None

    @staticmethod
    def _given(spec: str | None, listed: list[Found]) -> list[Found]:
        """A workload named on the command line (`-w mine.py`) that no listing has: its own row.
        A path to a file of the workloads folder is that folder's row, not a second one."""
        if not spec or any(spec in (f.key, f.name) for f in listed):
            return []
        if any(f.origin == "folder" and _same_file(f.key, spec) for f in listed):
            return []
        from vajra_tui.engine.workloads import WorkloadError, get_workload

        try:
            w = get_workload(spec)
        except (WorkloadError, KeyError) as exc:
            return [Found(spec, spec, "file", error=str(exc))]
        return [Found(spec, w.name, "file", w)]

    @on(RadioSet.Changed, "#preset")
    @on(Input.Changed, "#custom")
    def _size_changed(self) -> None:
        self.query_one("#picker-error", Static).update("")
        self._refresh_sizes()

    # ---- run -------------------------------------------------------------------
    @on(DataTable.RowSelected, "#workloads")
    @on(Input.Submitted, "#custom")
    @on(Button.Pressed, "#run")
    def _submit(self) -> None:
        self.action_run()

    @on(OptionList.OptionSelected, "#recording-list")
    def _play(self, event: OptionList.OptionSelected) -> None:
        self.vapp.start_replay_file(Path(str(event.option.id)))

    def action_run(self) -> None:
        table = self.query_one("#workloads", DataTable)
        found = self.found[table.cursor_row]
        spec = self._size_spec()
        if self._initial_unresolved and table.cursor_row == self._mount_row:
            # Enter at once after `-w mine.py`: that one, not the row under the cursor now
            self._queued_run = self.vapp.initial_workload
            self._refuse(f"{_short(self._queued_run)} is still loading: it runs when its import has finished")
            return
        if found.key in self.importing:  # runs once its import has finished, if the cursor stays
            self._queued_run = found.key
            self._refuse(f"{_short(found.key)} is still loading: it runs when its import has finished")
            return
        if found.workload is None:
            self._refuse(found.error)
            return
        if self._preset() == "custom" and not spec:  # never the seed size in silence
            self._refuse(EMPTY_CUSTOM)
            return
        try:
            size = found.workload.size(spec or "seed")
        except SizeError as exc:
            self._refuse(str(exc))
            return
        cannot = self._cannot_run(found, size)
        if cannot:  # refused here as the CLI refuses it, not after the run has started
            self._refuse(cannot)
            return
        if self.vapp.adapter_info is None and self.query_one("#recordings").display:
            self.notify("no WebGPU adapter: pick a recording to play", severity="warning")
            return
        self.vapp.start_live(found.key, spec or "seed", self._source())

    def _refuse(self, message: str) -> None:
        """Why Enter did not start a run, under the options, scrolled into view (at 80x24 it is
        below the screen's end)."""
        error = self.query_one("#picker-error", Static)
        error.update(plain(message, style="bold red"))
        self.call_after_refresh(error.scroll_visible, animate=False)  # at its new height

    def _cannot_run(self, found: Found, size: object) -> str:
        """The engine's own checks (a feature the probed adapter lacks, a binding larger than it
        allows; the CLI's exit 2), in their words: '' when it can run or no adapter was probed."""
        device = self.vapp.adapter_info
        if device is None or found.workload is None:
            return ""
        try:
            lacks = missing_features(found.workload, device)
            why = None if lacks else oversized(found.workload, size, device)  # type: ignore[arg-type]
        except Exception:  # noqa: BLE001 - a user's lengths failing: the run says it as before
            return ""
        if lacks:
            return one_line(lacks)
        return one_line(WorkloadError("size", why)) if why else ""
