"""Token-level primitives under both the structural queries (tokens.py) and the constant
evaluator (expr.py): matching a bracket, reading an integer literal.

They live below both so that tokens.py can evaluate ``const`` and ``@workgroup_size``
expressions with expr.py, and expr.py can walk tokens, without either importing the other.
tokens.py re-exports them: they stay part of its interface.
"""

from __future__ import annotations

from vajra_tui.engine.wgsl.lexer import PUNCT, Token

_OPEN = {"(": ")", "[": "]", "{": "}"}
MAX_LITERAL_DIGITS = 20
"""Significant digits an integer literal may have here: no WGSL integer (i64 at most)
needs more, and a longer one is not converted at all."""


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
    """Value of an integer literal token text (``64``, ``64u``, ``0x40i``); None otherwise (also
    for one of more than MAX_LITERAL_DIGITS digits)."""
    t = text.rstrip("iu")
    hexadecimal = t[:2].lower() == "0x"
    if len((t[2:] if hexadecimal else t).lstrip("0")) > MAX_LITERAL_DIGITS:
        return None  # never handed to int(): Python refuses decimal strings over 4300 digits
    try:
        return int(t, 16) if t[:2].lower() == "0x" else int(t, 10)
    except ValueError:
        return None
