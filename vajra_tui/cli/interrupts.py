"""Ctrl-C and SIGTERM end a headless command the same way, and say so in one line.

Python's default for SIGTERM ends the process at once: no ``finally`` runs, so a ``--record``
was left unpublished and a ``--json`` script read an empty stdout. asyncio already turns
SIGINT into a cancellation of the running command, whose cleanup (the GPU worker closed,
the recording written out as far as the run got) then runs. So SIGTERM is passed on as SIGINT, and the
only difference left is the exit status a shell expects: 130 for SIGINT, 143 for SIGTERM.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from contextlib import contextmanager
from types import FrameType
from typing import Iterator

EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_TERMINATED = 128 + signal.SIGTERM

_received: list[int] = []


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    """Remember SIGTERM, then deliver it as SIGINT: asyncio's handler, or Python's default one
    (KeyboardInterrupt) outside a loop, ends the command with its cleanup."""
    _received.append(signum)
    signal.raise_signal(signal.SIGINT)


@contextmanager
def sigterm_as_ctrl_c(args: argparse.Namespace) -> Iterator[None]:
    """While a headless command runs, SIGTERM ends it as Ctrl-C does; the handler before it is
    put back after, so a program that calls ``cli.main()`` keeps its own. Not for the TUI, which
    has its own keys, and only on the main thread, where handlers live."""
    _received.clear()
    if threading.current_thread() is not threading.main_thread() or opens_the_tui(args):
        yield
        return
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def opens_the_tui(args: argparse.Namespace) -> bool:
    """Whether the command runs the Textual app: no subcommand, or ``replay`` on a terminal
    without ``--headless``/``--json``."""
    if args.command is None:
        return True
    return args.command == "replay" and not args.headless and not args.json and sys.stdout.isatty()


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
