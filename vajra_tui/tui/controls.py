"""The run controls of the app: back to the picker, cancel, what ``s``/``c`` act on, the footer.

Kept out of app.py so that it stays thin. Mixed into :class:`~vajra_tui.tui.app.VajraApp`.

- Escape (or Backspace) returns to the picker from any screen. During a running
  generation it asks first; going back cancels the run, keeps its recording and
  says where it went (and lists it again when Vajra quits).
- The cancel key stops the running generation: the candidates in flight end as
  "cancelled", and the run stays usable (``e`` evolves again).
- ``s`` and ``c`` act on the kernel selected on the current screen (or shown in
  the source view), never silently on another.
- The footer lists only what works now: no "evolve" in a replay, while a generation
  runs or when nothing can evolve (the library has no templates for a user's workload),
  no "cancel" when nothing does, no "export" without a crowned winner. Pressed anyway,
  ``e`` and ``x`` say in one line why not (a hidden binding on the same key answers,
  since Textual ignores a key whose action ``check_action`` refuses).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.screen import ModalScreen

from vajra_tui.tui.screens import StateScreen
from vajra_tui.tui.screens.confirm import ConfirmScreen
from vajra_tui.tui.screens.export import ExportScreen
from vajra_tui.tui.screens.source import SourceScreen
from vajra_tui.tui.standing import cannot_evolve
from vajra_tui.tui.state import CandidateView, RunState

if TYPE_CHECKING:
    from vajra_tui.tui.app import VajraApp

NEEDS_RUN = {"goto", "evolve", "source", "copy", "export", "cancel", "why_not"}
SESSION_SCREENS = ("baseline", "variants", "graveyard", "report")


class RunControls:
    """Back, cancel, selection and footer logic for VajraApp (``self`` is the app)."""

    saved_recordings: list[Path]

    # ---- which actions work now ------------------------------------------------
    def check_action(self: "VajraApp", action: str, parameters: tuple[object, ...]) -> bool | None:
        """False hides a key from the footer (and ignores it) while it cannot work."""
        driver = self.driver
        if action in NEEDS_RUN and driver is None:
            return False
        if action == "evolve":  # refused: the hidden why_not binding on its key says why
            return self.evolve_offered()
        if action == "cancel":
            return not driver.replay and driver.busy
        if action == "back":
            return self.current != "picker" or bool(self.screen.query("HelpPanel"))
        if action == "export":
            return self.state.winner is not None and self.state.winner.result is not None
        if action in ("source", "copy"):
            return self.shown_kernel() is not None
        return True

    def footer_signature(self: "VajraApp") -> tuple[Any, ...]:
        """What the footer depends on; the app's tick refreshes bindings when it moves."""
        driver = self.driver
        return (id(driver), getattr(driver, "busy", None), getattr(driver, "ready", None),
                self.current, self.state.winner is not None, self.shown_kernel() is not None,
                self.state.no_templates)

    # ---- evolve and export: offered only when they work, else why not ----------
    def evolve_refusal(self: "VajraApp") -> str:
        """Why e cannot start a generation now, in one line ('' when it can)."""
        driver = self.driver
        if driver is None:
            return "nothing to evolve yet: run a workload first"
        if driver.replay:
            return "evolve is disabled while replaying a recording"
        if driver.busy:
            what = f"generation {self.state.generation}" if self.state.generation else "the run"
            return f"{what} is still running: e evolves once it is ranked ({self.key_for('cancel')} cancels it)"
        if not getattr(driver, "ready", False):
            return "nothing to evolve: the first generation did not finish"
        return cannot_evolve(self.state)

    def evolve_offered(self: "VajraApp") -> bool:
        """Whether e works now: what the footer and the variants heading offer."""
        return not self.evolve_refusal()

    def export_refusal(self: "VajraApp") -> str:
        """Why x has no winner to export, in one line ('' when there is one)."""
        winner, ranking = self.state.winner, self.state.ranking
        if winner is not None and winner.result is not None:
            return ""
        if ranking is None:
            return "nothing to export yet: no generation has been ranked"
        if ranking.baseline_won and ranking.fastest_id:
            return ("nothing to export: no portable candidate beat the baseline "
                    "(--limits adapter would crown the fastest here)")
        if ranking.baseline_won:
            return "nothing to export: no candidate beat the baseline, so none is crowned (r: the report)"
        return "nothing to export: no kernel verified (g: the graveyard says why)"

    def action_why_not(self: "VajraApp", what: str) -> None:
        """``e`` or ``x`` pressed while it is not offered: say why, never nothing."""
        why = self.evolve_refusal() if what == "evolve" else self.export_refusal()
        if why:
            self.notify(why, severity="warning")

    def action_evolve(self: "VajraApp") -> None:
        why = self.evolve_refusal()
        if not why and self.driver is not None:
            why = self.driver.evolve() or ""
        if why:
            self.notify(why, severity="warning")
        else:
            self.goto("variants")

    def action_export(self: "VajraApp") -> None:
        why = self.export_refusal()
        if why:
            self.notify(why, severity="warning")
            return
        assert self.state.winner is not None
        self.push_screen(ExportScreen(self.state.winner.label))

    # ---- what s and c act on -------------------------------------------------
    def shown_kernel(self: "VajraApp") -> CandidateView | None:
        """The kernel in the source view, else the one selected on the current screen."""
        for screen in self.screen_stack[::-1]:
            if isinstance(screen, SourceScreen):
                return screen.view
            if isinstance(screen, StateScreen):
                return screen.selected_view()
        return None

    # ---- cancel ----------------------------------------------------------------
    def action_cancel(self: "VajraApp") -> None:
        driver = self.driver
        if driver is None or driver.replay:
            return
        why = driver.cancel()
        if why:
            self.notify(why, severity="warning")
        else:
            self.notify("cancelling: the candidates in flight are stopped", timeout=3)

    # ---- back to the picker ----------------------------------------------------
    def action_back(self: "VajraApp") -> None:
        if self.screen.query("HelpPanel"):  # the palette's Keys panel closes first
            self.action_hide_help_panel()
            return
        if isinstance(self.screen, ModalScreen) or self.current == "picker":
            return
        driver = self.driver
        if driver is not None and not driver.replay and driver.busy:
            generation = self.state.generation
            what = f"Generation {generation} is running" if generation else "The run is starting"
            self.push_screen(ConfirmScreen(
                f"{what}. Stop it and go back to the picker?\n"
                "The candidates in flight are cancelled; the recording so far is kept.",
                yes="Stop and go back", no="Keep running"), self._back_answered)
            return
        self.run_worker(self.back_to_picker(), group="navigation", exclusive=True)

    def _back_answered(self: "VajraApp", yes: bool | None) -> None:
        if yes:
            self.run_worker(self.back_to_picker(), group="navigation", exclusive=True)

    async def back_to_picker(self: "VajraApp") -> None:
        """End the session (recording published), forget its state, show the picker."""
        driver, self.driver = self.driver, None
        if driver is not None:
            path = await driver.aclose()
            self.workers.cancel_group(self, "engine")
            if path is not None:
                self.saved_recordings.append(path)
                self.notify(f"recording saved: {path}", timeout=8)
        self.state = RunState()
        self.selected_id, self.banner, self.replay_events = None, "", None
        self._announced.clear()
        self.goto("picker")
        for name in SESSION_SCREENS:  # drawn anew for the next run
            if self.is_screen_installed(name):
                screen = self.get_screen(name)
                if screen not in self.screen_stack:
                    self.uninstall_screen(name)
                    await screen.remove()
        if self.screen_stack:  # the switch to the picker may still be under way
            self.refresh_bindings()
