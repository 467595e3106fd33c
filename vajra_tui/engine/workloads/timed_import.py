"""A workload file's import under a deadline.

Importing a user's file runs its module-level code, which may never return (a loop left at
the top of the file). Its functions run in the GPU worker under the prepare deadline; the
import runs here, in the caller's process, so it gets the same bound: on a thread that is
waited for at most ``deadline_s`` seconds. A file past it is refused in one line; its
thread is left behind as a daemon (Python cannot stop a thread), which ends with the process.
"""

from __future__ import annotations

import threading
from importlib.abc import Loader
from types import ModuleType
from typing import Any, Callable, TypeVar

from vajra_tui.engine.workloads.base import WorkloadError

T = TypeVar("T")
deadline_s = 300.0  # settings.timing.prepare_deadline_s: the CLI and the TUI set it (set_deadline)


def set_deadline(seconds: float) -> None:
    """The longest a workload file's import may take (the prepare deadline in settings)."""
    global deadline_s
    deadline_s = float(seconds)


def exec_module(loader: Loader, module: ModuleType, shown: str) -> None:
    """``loader.exec_module(module)``, raising what it raised, or WorkloadError past the deadline."""
    within_deadline(lambda: loader.exec_module(module), shown)


def within_deadline(load: Callable[[], T], shown: str) -> T:
    """``load()`` (an import: a file's, or another package's entry point), raising what it
    raised, or WorkloadError past the deadline."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = load()
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, name=f"vajra-import {shown[-60:]}", daemon=True)
    thread.start()
    thread.join(deadline_s)
    if thread.is_alive():
        raise WorkloadError("", f"importing it ran past its {deadline_s:g} s deadline (code at the top of "
                            "the file that never returns?); timing.prepare_deadline_s sets it", shown)
    error = outcome.get("error")
    if error is not None and not isinstance(error, (Exception, SystemExit)):  # KeyboardInterrupt, say:
        raise WorkloadError("", f"importing it raised {type(error).__name__}", shown) from None  # the file's
    if error is not None:
        raise error
    return outcome["value"]
