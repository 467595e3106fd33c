"""The one error of the kernel contract: a candidate refused before it ever runs, with the
line and column of what it broke (its diagnostic in the candidate's own numbering)."""

from __future__ import annotations

from vajra_tui.engine.events import Diagnostic


class ContractError(Exception):
    """The candidate breaks the contract: rejected before it ever runs."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.diagnostic = Diagnostic(line=line, column=column, message=message)
