"""One root for every failure a user is told about: a one-line message and an exit status.

Each entry point catches :class:`VajraError` once (the CLI prints ``vajra-tui: <message>``
and exits with :attr:`VajraError.exit_status`; the TUI shows the message as a notice; the
Python API lets it propagate), instead of keeping its own tuple of exception types that a
new failure is easily left out of. Two families:

- :class:`UsageError`: the input is wrong (a flag, a size, a workload file, a path).
  Exit status 2. It is also a ``ValueError``, which is what Python callers expect.
- :class:`RunFailed`: the input was fine but the run cannot go on (a failing baseline,
  a GPU worker that died). Exit status 1.

Failures that are verdicts on one candidate (a contract breach, a compile error) are not
errors of the run: they become that candidate's result and go to the graveyard.
"""

from __future__ import annotations

EXIT_RUN_FAILED = 1
EXIT_USAGE = 2


def _one_line(text: str) -> str:
    return " ".join(text.split())


class VajraError(Exception):
    """A failure with a message meant for the user, on one line."""

    exit_status = EXIT_RUN_FAILED
    title = "error"  # what kind of failure, for a heading (TUI) or a prefix (CLI)
    prefix = ""  # put before the message on the CLI ("GPU worker failed: ")

    @property
    def message(self) -> str:
        """The one line the user reads; control characters and newlines folded away."""
        return _one_line(str(self))

    def user_message(self) -> str:
        return f"{self.prefix}{self.message}"


class UsageError(VajraError, ValueError):
    """Bad input from the user: one line on stderr, exit status 2."""

    exit_status = EXIT_USAGE
    title = "usage"


class RunFailed(VajraError):
    """The run cannot go on (its baseline failed, its GPU worker died): exit status 1."""

    title = "run failed"
