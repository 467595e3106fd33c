"""What the app does with a kernel, and its command palette: show, copy, export.

Kept out of app.py so that it stays thin (as :mod:`~vajra_tui.tui.controls` is). Mixed into
:class:`~vajra_tui.tui.app.VajraApp`.

- ``s`` shows the kernel selected on this screen, stitched; ``c`` copies it to the clipboard
  through OSC 52, which reaches the terminal on the user's side of an SSH session.
- The export modal calls :meth:`KernelActions.export_to`, the CLI's export, so both write the
  same files and the lockfile carries the browser's verdict block.
- The palette (ctrl+p) offers the screens and these actions; in the picker, before a run,
  only help.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from textual.app import SystemCommand
from textual.screen import Screen

from vajra_tui.safe_text import one_line
from vajra_tui.tui.screens.source import SourceScreen

if TYPE_CHECKING:
    from vajra_tui.tui.app import VajraApp


class KernelActions:
    def action_source(self: "VajraApp") -> None:
        view = self.shown_kernel()  # the kernel selected on this screen, never another
        if view is None:
            self.notify("no kernel selected here", severity="warning")
        elif not isinstance(self.screen, SourceScreen):
            self.push_screen(SourceScreen(view))

    def action_copy(self: "VajraApp") -> None:
        view = self.shown_kernel()
        source = (view.stitched_source or view.source) if view is not None else ""
        if view is None or not source:
            self.notify("no kernel source here to copy", severity="warning")
            return
        try:
            self.copy_to_clipboard(source)
        except Exception as exc:  # no terminal, closed stream: never crash over a clipboard
            self.notify(f"could not copy: {exc}", severity="error")
            return
        lines = source.count("\n") + 1
        kind = "WGSL" if view.stitched_source else "kernel body"
        self.notify(f"copied {view.label}'s {kind} ({lines} lines) via OSC 52")

    def export_to(self: "VajraApp", out_dir: Path, overwrite: bool) -> tuple[list[Path], str]:
        """Called by the export modal: (written paths, '') or ([], one-line error).

        The CLI's export (``vajra-tui export``), so the files are the same: the lockfile
        carries the browser's verdict block too."""
        from vajra_tui.engine.errors import UsageError
        from vajra_tui.engine.run.builder import export_result

        winner, session = self.state.winner, self.state.session
        if winner is None or winner.result is None or session is None:
            return [], "no verified winner to export"
        try:
            written = export_result(winner.result, session.device, session.workload, out_dir, overwrite,
                                    limits=session.limits, seeds=session.seeds, timed_seed=session.fresh_seed)
        except UsageError as exc:
            cause = exc.__context__  # the CLI's words say --force; here it is a checkbox
            if isinstance(cause, FileExistsError):
                return [], f"{one_line(cause)}: tick “overwrite existing files” to replace it"
            return [], one_line(exc.message)
        except (OSError, ValueError, RuntimeError) as exc:
            return [], str(exc).splitlines()[0]
        self.notify(f"exported {winner.label}: " + ", ".join(p.name for p in written) + f" → {out_dir}")
        return written, ""

    def get_system_commands(self: "VajraApp", screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        commands: list[tuple[str, str, Callable[[], Any]]] = [
            ("Navigate: baseline", "the baseline's progress and numbers", lambda: self.goto("baseline")),
            ("Navigate: variants", "live candidate panels", lambda: self.goto("variants")),
            ("Navigate: graveyard", "failed candidates and why", lambda: self.goto("graveyard")),
            ("Navigate: report", "ranking, chart and provenance", lambda: self.goto("report")),
            ("Tune: evolve winner", "run the next generation from the winner", self.action_evolve),
            ("Kernel: show source", "stitched WGSL of the selected kernel", self.action_source),
            ("Kernel: copy selected WGSL", "the selected kernel, to the clipboard via OSC 52",
             self.action_copy),
            ("Tune: cancel generation", "stop the candidates in flight", self.action_cancel),
            ("Navigate: back to the picker", "end this session (the recording is kept)",
             self.action_back),
            ("Kernel: export winner", "WGSL, TypeScript and lockfile", self.action_export),
            ("Help: keys", "every key binding", self.action_help),
        ]
        if self.driver is None:
            commands = [c for c in commands if c[0].startswith("Help")]
        for title, help_text, callback in commands:
            yield SystemCommand(title, help_text, callback)
