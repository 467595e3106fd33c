"""Token-level primitives under both the structural queries (tokens.py) and the constant
evaluator (expr.py): matching a bracket, reading an integer literal.

They live below both so that tokens.py can evaluate ``const`` and ``@workgroup_size``
expressions with expr.py, and expr.py can walk tokens, without either importing the other.
tokens.py re-exports them: they stay part of its interface.
"""

from __future__ import annotations

from vajra_tui.engine.wgsl.lexer import PUNCT, Token

_OPEN = {"(": ")", "[": "]", "{": "}"}


def match_bracket(toks: list[Token], i: int) -> int:
    """Index of the bracket closing ``toks[i]`` ((, [ or {); -1 when unbalanced."""
    stack = []
    for j in range(i, len(toks)):
        t = toks[j].text
        if toks[j].kind != PUNCT:
            continue
        if t in _OPEN:
            stack.append(_OPEN[t])
        elif t in (")", "]", "}"):
            if not stack or stack.pop() != t:
                return -1
            if not stack:
                return j
    return -1


def int_literal(text: str) -> int | None:
    """Value of an integer literal token text (``64``, ``64u``, ``0x40i``); None otherwise."""
    t = text.rstrip("iu")
    try:
        return int(t, 16) if t[:2].lower() == "0x" else int(t, 10)
    except ValueError:
        return None
