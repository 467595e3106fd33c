"""The CLI's rich Console, which leaves a closed pipe to the CLI's entry point.

Rich's own answer to a reader that left (``vajra-tui tune ... | head``) is exit status 1,
raised from inside whatever was printing; ``cli.main`` answers every closed pipe alike,
with no traceback and the status a shell gives such a program (141).
"""

from __future__ import annotations

from rich.console import Console as RichConsole


class Console(RichConsole):
    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError("the reader of this output left")
