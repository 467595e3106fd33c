"""Progress of a headless run: a live bar on a terminal, plain lines in a pipe or a log.

Both narrate the same events with the same lines (render.ProgressPrinter); on a
terminal a Rich progress bar under them shows how many candidates are done and
which step is running, and it disappears when the run ends.
"""

from __future__ import annotations

import sys
from typing import TextIO

from vajra_tui.cli.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.text import Text

from vajra_tui.engine.events import CandidateFinished, CandidateQueued, Event, GenerationStarted, StageChanged
from vajra_tui.cli.render import ProgressPrinter
from vajra_tui.safe_text import one_line


class ProgressBar(ProgressPrinter):
    """The printer's lines, above a bar of finished candidates and the step in flight."""

    def __init__(self, stream: TextIO | None = None) -> None:
        super().__init__(stream)
        self.console = Console(file=self.stream, highlight=False)
        self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TimeElapsedColumn(), console=self.console,
                                 transient=True)
        self.task = self.progress.add_task("starting the GPU worker", total=None)
        self.queued: set[str] = set()
        self.finished: set[str] = set()
        self.generation = 0
        self.progress.start()

    def _say(self, text: str) -> None:
        self.progress.console.print(Text(one_line(text) if "\n" not in text else text))

    def __call__(self, event: Event) -> None:
        super().__call__(event)
        if isinstance(event, GenerationStarted):
            self.generation = event.generation
        elif isinstance(event, CandidateQueued) or (isinstance(event, StageChanged) and event.id not in self.queued):
            self.queued.add(event.id)
        if isinstance(event, CandidateFinished):
            self.finished.add(event.result.id)
        if isinstance(event, StageChanged):
            where = f"generation {self.generation}: " if self.generation else ""
            self.progress.update(self.task, description=one_line(f"{where}{self._name(event.id)} {event.stage}", 60))
        self.progress.update(self.task, total=max(len(self.queued), 1),
                             completed=len(self.finished & self.queued))

    def close(self) -> None:
        self.progress.stop()


def progress_sink(stream: TextIO | None = None) -> ProgressPrinter:
    """A bar when the progress goes to a terminal, plain lines when it goes to a pipe or a file."""
    stream = stream or sys.stderr
    if stream.isatty():
        return ProgressBar(stream)
    return ProgressPrinter(stream)
