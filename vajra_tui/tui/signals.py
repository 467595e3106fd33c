"""SIGTERM and SIGHUP end the TUI's session as ``q`` does, without asking.

Python's default ended the process where it stood: the recording was left ``.partial`` and a
running generation's candidates unmarked. SIGHUP is what a dropped SSH session sends, and
then the terminal the app would redraw is gone: Textual's writes to it block for good, so once
the session is saved the process ends on its own a little later.
"""

from __future__ import annotations

import asyncio
import signal
from typing import Protocol

SIGNAL_EXIT_S = 3.0  # after the session is saved: the longest the UI may take to close


class Quits(Protocol):
    def run_worker(self, work: object, *, group: str, exclusive: bool) -> object: ...
    async def quit_now(self, status: int = 0, hard_exit_s: float | None = None) -> None: ...


def end_on_signals(app: Quits) -> None:
    """Handle SIGTERM and SIGHUP on the running loop: the session saved, exit 143 or 129."""
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGHUP):
        try:
            loop.add_signal_handler(signum, _quit, app, signum)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or Windows
            return


def _quit(app: Quits, signum: int) -> None:
    app.run_worker(app.quit_now(128 + signum, hard_exit_s=SIGNAL_EXIT_S), group="navigation", exclusive=True)
