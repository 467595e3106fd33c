"""Constant integer expressions over WGSL tokens (for ``@workgroup_size(TILE * 2)``).

The evaluation itself is WGSL's, typed and exact (``consteval.py``); this module keeps
the names the rest of the front end has always imported.
"""

from __future__ import annotations

from vajra_tui.engine.wgsl.consteval import ConstEvalError, Value, eval_int, evaluate  # noqa: F401
from vajra_tui.engine.wgsl.lexer import Token


def split_args(toks: list[Token]) -> list[list[Token]]:
    """Split a token list at top-level commas (a trailing comma is allowed)."""
    args: list[list[Token]] = [[]]
    depth = 0
    for t in toks:
        if t.text in ("(", "[", "{"):
            depth += 1
        elif t.text in (")", "]", "}"):
            depth -= 1
        if t.text == "," and depth == 0:
            args.append([])
        else:
            args[-1].append(t)
    return [a for a in args if a]
