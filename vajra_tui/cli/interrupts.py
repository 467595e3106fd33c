"""Ctrl-C and SIGTERM end a headless command the same way, and say so in one line.

Python's default for SIGTERM ends the process at once: no ``finally`` runs, so a ``--record``
was left unpublished and a ``--json`` script read an empty stdout. asyncio already turns
SIGINT into a cancellation of the running command, whose cleanup (the GPU worker closed,
the recording written out as far as the run got) then runs. So SIGTERM is passed on as SIGINT, and the
only difference left is the exit status a shell expects: 130 for SIGINT, 143 for SIGTERM.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_TERMINATED = 128 + signal.SIGTERM

_received: list[int] = []


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    """Remember SIGTERM, then deliver it as SIGINT: asyncio's handler, or Python's default one
    (KeyboardInterrupt) outside a loop, ends the command with its cleanup."""
    _received.append(signum)
    signal.raise_signal(signal.SIGINT)


def route_sigterm() -> None:
    """SIGTERM ends a headless command as Ctrl-C does (the main thread only: where handlers live)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)


def what_ended_it() -> str:
    """"terminated (SIGTERM)" or "interrupted" (Ctrl-C): the words every surface uses."""
    return "terminated (SIGTERM)" if _received else "interrupted"


def interrupted_line(kept_results: bool) -> tuple[str, int]:
    """The one line, and the exit status, for a command ended by Ctrl-C or SIGTERM;
    ``kept_results``: a tune or bench whose finished kernels are in the results cache."""
    what, status = what_ended_it(), EXIT_TERMINATED if _received else EXIT_INTERRUPTED
    if kept_results:
        return f"{what}: kernels measured before it are kept (--resume skips them)", status
    return what, status
