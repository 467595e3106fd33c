"""The two errors a workload raises, and the one place a user's function failing becomes one.

Split from ``base.py`` (the :class:`~vajra_tui.engine.workloads.base.Workload` type) so that
every module that checks a workload (its declaration, its sizes, what its functions return,
the loader's checks at import) says a problem the same way without importing the type:
:class:`WorkloadError` is one line naming the field, and :func:`raised` is the one line a
user's exception becomes (``raised ZeroDivisionError: division by zero``).
"""

from __future__ import annotations

from typing import Any, Callable

from vajra_tui.engine.errors import UsageError


class SizeError(UsageError):
    """A size string that does not fit the workload."""


class WorkloadError(UsageError):
    """A workload declaration (or what its functions return) is broken.

    ``str()`` is one line naming the field: ``bindings: ...``. The loader puts the
    file in front (``mine.py: bindings: ...``), so the user knows what to fix where.
    """

    def __init__(self, field_name: str, problem: str, where: str = "") -> None:
        self.field, self.problem, self.where = field_name, problem, where
        super().__init__(self._text())

    def _text(self) -> str:
        head = f"{self.where}: " if self.where else ""
        return f"{head}{self.field}: {self.problem}" if self.field else f"{head}{self.problem}"

    def located(self, where: str) -> "WorkloadError":
        """The same error, said of ``where`` (a file, a module, an entry point)."""
        return WorkloadError(self.field, self.problem, where)


def raised(exc: BaseException) -> str:
    """What a user's code raised, in one line: its type and the first line of its message."""
    text = str(exc).strip().splitlines()
    return f"raised {type(exc).__name__}" + (f": {text[0]}" if text else "")


def call(field_name: str, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``, a workload's own function: whatever it raises is one WorkloadError
    line naming the field, never the end of the GPU worker or a traceback."""
    try:
        return fn(*args)
    except (WorkloadError, KeyboardInterrupt, GeneratorExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - the user's function (a BaseException subclass, a
        # sys.exit() too): one line that names it, never the end of the worker or a traceback
        if type(exc).__name__ == "CancelledError":  # asyncio's: a cancel, not the workload's fault
            raise
        raise WorkloadError(field_name, raised(exc)) from exc
