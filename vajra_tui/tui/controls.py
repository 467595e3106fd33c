"""The run controls of the app: back to the picker, cancel, what ``s``/``c`` act on, the footer.

Kept out of app.py so that it stays thin. Mixed into :class:`~vajra_tui.tui.app.VajraApp`.

- Escape (or Backspace) returns to the picker from any screen. During a running
  generation it asks first; going back cancels the run, keeps its recording and
  says where it went (and lists it again when Vajra quits).
- The cancel key stops the running generation: the candidates in flight end as
  "cancelled", and the run stays usable (``e`` evolves again).
- ``s`` and ``c`` act on the kernel selected on the current screen (or shown in
  the source view), never silently on another.
- The footer lists only what works now: no "evolve" in a replay or while a
  generation runs, no "cancel" when nothing does.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.screen import ModalScreen

from vajra_tui.tui.screens import StateScreen
from vajra_tui.tui.screens.confirm import ConfirmScreen
from vajra_tui.tui.screens.source import SourceScreen
from vajra_tui.tui.state import CandidateView, RunState

if TYPE_CHECKING:
    from vajra_tui.tui.app import VajraApp

NEEDS_RUN = {"goto", "evolve", "source", "copy", "export", "cancel"}
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
        if action == "evolve":  # during a generation too: pressed then, it says why not (action_evolve)
            return not driver.replay and getattr(driver, "ready", False)
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
                self.current, self.state.winner is not None, self.shown_kernel() is not None)

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
