"""VajraApp: keys, screen switching and the refresh tick; the screens do the drawing.

Events arrive as :class:`EngineEvent` messages (live or replayed), are folded
into one :class:`RunState`, and a ~15 Hz tick redraws the visible screen only
when something moved — so a fast token stream never floods the renderer.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Iterable

from textual.app import App
from textual.binding import Binding
from textual.screen import ModalScreen

from vajra_tui.tui.driver import EngineEvent, EngineIdle, LiveDriver, ReplayDriver, RunConfig, next_recording
from vajra_tui.engine.events import DeviceInfo, Event, GenerationStarted, Notice, RankingReady, SessionFinished
from vajra_tui.engine.events import SessionStarted
from vajra_tui.engine.store import damage
from vajra_tui.engine.store.record import Recording, RecordingError
from vajra_tui.safe_text import clean, clean_event, one_line
from vajra_tui.tui.adapter_probe import probe_adapter
from vajra_tui.tui.controls import RunControls
from vajra_tui.tui.kernel_actions import KernelActions
from vajra_tui.tui.signals import end_on_signals
from vajra_tui.tui.screens import StateScreen
from vajra_tui.tui.screens.baseline import BaselineScreen
from vajra_tui.tui.screens.confirm import ConfirmScreen
from vajra_tui.tui.screens.graveyard import GraveyardScreen
from vajra_tui.tui.screens.help import HelpScreen
from vajra_tui.tui.screens.picker import PRESETS, PickerScreen
from vajra_tui.tui.screens.report import ReportScreen
from vajra_tui.tui.screens.variants import VariantsScreen
from vajra_tui.settings import Settings
from vajra_tui.tui.state import RunState

SCREENS_BY_NAME: dict[str, type[StateScreen]] = {
    "picker": PickerScreen, "baseline": BaselineScreen, "variants": VariantsScreen,
    "graveyard": GraveyardScreen, "report": ReportScreen,
}
REFRESH_HZ = 15


class VajraApp(KernelActions, RunControls, App[int]):
    CSS_PATH = "styles.tcss"
    TITLE = "Vajra"
    BINDINGS = [
        Binding("escape,backspace", "back", "picker", id="back"),
        Binding("ctrl+x", "cancel", "cancel", id="cancel"),
        Binding("b", "goto('baseline')", "base", id="baseline"),
        Binding("v", "goto('variants')", "vars", id="variants"),
        Binding("g", "goto('graveyard')", "graves", id="graveyard"),
        Binding("r", "goto('report')", "report", id="report"),
        Binding("e", "evolve", "evolve", id="evolve"),
        Binding("s", "source", "src", id="source"),
        Binding("c", "copy", "copy", id="copy"),
        Binding("x", "export", "export", id="export"),
        # e and x when not offered (hidden from the footer): they say why not (controls.py)
        Binding("e", "why_not('evolve')", "evolve", show=False, id="evolve-why"),
        Binding("x", "why_not('export')", "export", show=False, id="export-why"),
        Binding("question_mark,f1", "help", "help", id="help"),
        Binding("q", "quit", "quit", id="quit"),
    ]

    def __init__(self, settings: Settings | None = None, *, workload: str | None = None,
                 size: str | None = None, source: str = "auto", adapter: str | None = None,
                 record: Path | None = None, kernels: list[Path] | None = None,
                 replay_events: Iterable[Event] | None = None, replay_label: str = "",
                 speed: float = 1.0, probe: Callable[[], DeviceInfo] | None = None,
                 gpus: str | None = None) -> None:
        super().__init__()
        self.gpus = gpus  # --gpus: one worker per adapter (engine/scale/lanes.py)
        self.settings = settings or Settings()
        self.state = RunState()
        self.driver: LiveDriver | ReplayDriver | None = None
        self.selected_id: str | None = None
        self.adapter_info: DeviceInfo | None = None
        self.probe: Callable[[], DeviceInfo] = probe or (lambda: probe_adapter(adapter))
        self.initial_workload = workload or "sgemm"
        self.initial_preset = size if size in PRESETS[:2] else "custom" if size else "seed"
        self.initial_custom = size if self.initial_preset == "custom" and size else ""
        source = "llm" if source == "nemotron" else source  # the model's name, accepted for the source
        self.initial_source = source if source in ("library", "llm", "auto") else "auto"
        self.adapter, self.record, self.kernels = adapter, record, list(kernels or [])
        self.replay_events, self.speed = replay_events, speed
        self.banner = f"▶ RECORDING — replay of {replay_label}" if replay_events is not None else ""
        self._dirty = False
        self._announced: set[int] = set()
        self._footer: tuple[object, ...] = ()
        self.saved_recordings: list[Path] = []  # printed when the terminal is back

    # ---- lifecycle -------------------------------------------------------------
    def on_mount(self) -> None:
        try:
            self.theme = self.settings.theme
        except Exception:
            self.notify(f"unknown theme {self.settings.theme!r}; using the default", severity="warning")
        if self.settings.keys:  # a key moved moves its why-not answer with it
            keys = dict(self.settings.keys)
            keys.update({f"{bid}-why": keys[bid] for bid in ("evolve", "export") if bid in keys})
            self.set_keymap(keys)
        self.set_interval(1 / REFRESH_HZ, self._refresh_tick)
        if not self.is_headless:
            end_on_signals(self)
        if self.replay_events is not None:
            self.start_replay(self.replay_events)
        else:
            self.goto("picker")

    def start_live(self, workload: str, size: str, source: str) -> None:
        """Enter on the picker: start the engine; events will switch to the baseline screen."""
        if self.driver is not None:
            self.notify("a run is already in progress", severity="warning")
            return
        record = next_recording(self.record) if self.record is not None else None
        config = RunConfig(workload=workload, size=size, source=source, adapter=self.adapter,
                           record=record, extra_kernels=self.kernels, timing=self.settings.timing,
                           gpus=self.gpus)
        driver = LiveDriver(self, config, self.settings)
        try:
            driver.start()
        except (OSError, RecordingError) as exc:
            self.notify(str(exc), severity="error")
            return
        self.driver = driver
        if record is not None and record != self.record:  # --record FILE was this session's first run's
            self.notify(f"recording this run to {record} ({self.record.name} has the earlier one)",
                        timeout=10)
        self.refresh_bindings()
        self.goto("baseline")

    def start_replay(self, events: Iterable[Event]) -> None:
        # what the screens ask to tell a replay (a recorded roofline, not this machine's cache):
        # set here too, for a recording the picker plays (start_replay_file)
        self.replay_events = events
        self.driver = ReplayDriver(self, events, self.speed)
        self.driver.start()
        self.refresh_bindings()
        self.goto("baseline")

    def start_replay_file(self, path: Path) -> None:
        """The picker's fallback when no adapter exists: play a shipped recording."""
        try:
            events = Recording(path).check()  # streamed: read again as it plays
        except RecordingError as exc:
            self.notify(str(exc), severity="error")
            return
        cut = f", cut at line {events.cut}" if events.cut else ""
        self.banner = f"▶ RECORDING — {path.name} (recorded elsewhere, not measured here{cut})"
        self.start_replay(events)

    async def action_quit(self) -> None:
        """Quit; during a live generation, ask first (as Escape does): its candidates are cancelled."""
        driver = self.driver
        if driver is not None and not driver.replay and driver.busy and not isinstance(self.screen, ModalScreen):
            generation = self.state.generation
            what = f"Generation {generation} is running" if generation else "The run is starting"
            self.push_screen(ConfirmScreen(
                f"{what}. Stop it and quit?\nThe candidates in flight are cancelled; the recording so far is kept.",
                yes="Stop and quit", no="Keep running"), self._quit_answered)
            return
        await self.quit_now()

    def _quit_answered(self, yes: bool | None) -> None:
        if yes:
            self.run_worker(self.quit_now(), group="navigation", exclusive=True)

    async def quit_now(self, status: int = 0, hard_exit_s: float | None = None) -> None:
        """End the session (a running generation cancelled, the recording published) and exit;
        ``hard_exit_s``: then end the process that long after, whatever the UI is doing."""
        if self.driver is not None:
            path = await self.driver.aclose()  # a running generation is cancelled first
            if path is not None:  # run_app prints it once the terminal is back
                self.saved_recordings.append(path)
        self.workers.cancel_group(self, "engine")
        if hard_exit_s is not None:
            timer = threading.Timer(hard_exit_s, os._exit, (status,))
            timer.daemon = True  # a process that closes normally does not wait for it
            timer.start()
        self.exit(return_code=status)

    # ---- events ----------------------------------------------------------------
    def on_engine_event(self, message: EngineEvent) -> None:
        event = clean_event(message.event)  # what is shown: data, never control codes (see safe_text)
        self.state.apply(event)
        self._dirty = True
        if isinstance(event, SessionStarted) and self.current == "picker":
            self.goto("baseline")
        elif isinstance(event, GenerationStarted) and self.current == "baseline":
            self.goto("variants")
        elif isinstance(event, Notice) and event.level != "info":
            self.notify(event.message, severity=event.level, timeout=6)
        elif isinstance(event, RankingReady) and event.generation not in self._announced:
            self._announced.add(event.generation)
            self.notify(f"generation {event.generation} ranked: r opens the report card")
        elif isinstance(event, SessionFinished) and self.driver is not None and self.driver.replay:
            self.notify("replay finished: browse with b v g r")

    def on_engine_idle(self, message: EngineIdle) -> None:
        message.driver.busy = False  # every event of the step is applied: the keys may act on it

    def notify(self, message: str, *, title: str = "", severity: Any = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Every toast is plain text: messages carry names, paths and server errors, so
        markup is never parsed in them and control codes never reach the terminal."""
        super().notify(clean(message), title=clean(title), severity=severity, timeout=timeout,
                       markup=False)

    def _refresh_tick(self) -> None:
        if not self.screen_stack:  # starting up or shutting down
            return
        for problem in damage.take():  # a damaged cache folder: what to remove, once
            self.notify(problem, severity="warning", timeout=10)
        if self.state.tick():  # a deadline countdown moved
            self._dirty = True
        signature = self.footer_signature()
        if signature != self._footer:  # the footer lists only the keys that work now
            self._footer = signature
            self.refresh_bindings()
            self._dirty = True  # and the screens say the same (the variants heading offers e)
        if not self._dirty:
            return
        self._dirty = False
        for screen in self.screen_stack[::-1]:
            if isinstance(screen, StateScreen):
                screen.redraw()
                break

    # ---- navigation ------------------------------------------------------------
    @property
    def current(self) -> str:
        for screen in self.screen_stack[::-1]:
            if isinstance(screen, StateScreen):
                return next((n for n, c in SCREENS_BY_NAME.items() if type(screen) is c), "")
        return ""

    def goto(self, name: str) -> None:
        while isinstance(self.screen, ModalScreen):
            self.pop_screen()
        if name == self.current:
            return
        if not self.is_screen_installed(name):
            self.install_screen(SCREENS_BY_NAME[name](), name)
        if isinstance(self.screen, StateScreen):
            self.switch_screen(name)
        else:
            self.push_screen(name)

    def key_for(self, binding_id: str) -> str:
        """The key now bound to an action (settings.keys overrides included): "ctrl+b", or
        "R / f5" for a comma list (a keymap's value is one string, as a binding's key is)."""
        keys = self._keymap.get(binding_id, "")
        if not keys:
            keys = next((b.key for b in self.BINDINGS if isinstance(b, Binding) and b.id == binding_id), "")
        return " / ".join(k.strip().replace("question_mark", "?") for k in keys.split(",") if k.strip())

    # ---- actions ---------------------------------------------------------------
    def action_goto(self, name: str) -> None:
        self.goto(name)

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())


def run_app(settings: Settings, *, workload: str | None = None, size: str | None = None,
            source: str = "auto", replay: Path | None = None, speed: float = 1.0,
            record: Path | None = None, adapter: str | None = None,
            kernels: list[Path] | None = None, gpus: str | None = None) -> int:
    """The CLI's entry: 0 on a normal quit, 2 on a bad recording/argument (one line on stderr)."""
    from vajra_tui.engine.workloads import SizeError, WorkloadError, get_workload

    from vajra_tui.engine.run.kernel_file import KernelFileError, read_kernel_file
    from vajra_tui.engine.run.output_paths import OutputPathError, check_new_file

    events: Recording | None = None
    label = ""
    try:
        if replay is not None:
            # read once to refuse a bad file here; the replay streams it again (memory stays flat)
            events = Recording(Path(replay)).check()
            label = Path(replay).name + (f" (cut at line {events.cut})" if events.cut else
                                         " (interrupted: no end of run recorded)" if events.interrupted else "")
        elif workload is not None:
            get_workload(workload).size(size)
        if record is not None and Path(record).exists():
            raise RecordingError(f"{record} exists; refusing to overwrite a recording")
        if record is not None:  # before the UI starts, not when the run does
            check_new_file(Path(record))
        for path in kernels or []:
            read_kernel_file(path)
    except (RecordingError, SizeError, KeyError, OutputPathError, KernelFileError, WorkloadError) as exc:
        print(f"vajra-tui: {one_line(exc)}", file=sys.stderr)
        return 2
    app = VajraApp(settings, workload=workload, size=size, source=source, adapter=adapter,
                   record=record, kernels=kernels, replay_events=events, replay_label=label,
                   speed=speed, gpus=gpus)
    app.run()
    for path in app.saved_recordings:  # after the UI: a print while it runs never shows
        print(f"recording saved: {one_line(path)}", file=sys.stderr)
    return int(app.return_code or 0)
