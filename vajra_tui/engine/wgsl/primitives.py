"""Token-level primitives under both the structural queries (tokens.py) and the constant
evaluator (expr.py): matching a bracket, reading an integer literal.

They live below both so that tokens.py can evaluate ``const`` and ``@workgroup_size``
expressions with expr.py, and expr.py can walk tokens, without either importing the other.
tokens.py re-exports them: they stay part of its interface.
"""

from __future__ import annotations

import threading

from vajra_tui.engine.wgsl.lexer import PUNCT, Token

_OPEN = {"(": ")", "[": "]", "{": "}"}
MAX_LITERAL_DIGITS = 20
"""Significant digits an integer literal may have here: no WGSL integer (i64 at most)
needs more, and a longer one is not converted at all."""


def match_bracket(toks: list[Token], i: int) -> int:
    """Index of the bracket closing ``toks[i]`` ((, [ or {); -1 when unbalanced.

    The parsers ask this of every bracket of one token list, so the pairs of a list are found
    once, in one pass, and kept for the list last asked about: a body of 100k nested braces
    used to be scanned again from each of them (quadratic: 11.7 s in ``sanitize``).
    """
    if not (0 <= i < len(toks)) or toks[i].kind != PUNCT or toks[i].text not in _OPEN:
        return _scan(toks, i)  # not an opener: the first bracket after it, as before
    return _pairs(toks).get(i, -1)


def _scan(toks: list[Token], i: int) -> int:
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


_LAST = threading.local()  # (the token list, its length, its pairs): per thread (the worker builds on several)


def _pairs(toks: list[Token]) -> dict[int, int]:
    """Every opener's closing index; an opener left out is unbalanced (a wrong closer or the end
    came first), exactly as :func:`_scan` from that opener would find."""
    kept = getattr(_LAST, "value", None)
    if kept is not None and kept[0] is toks and kept[1] == len(toks):
        return kept[2]
    pairs: dict[int, int] = {}
    stack: list[tuple[int, str]] = []
    for j, tok in enumerate(toks):
        if tok.kind != PUNCT:
            continue
        if tok.text in _OPEN:
            stack.append((j, _OPEN[tok.text]))
        elif tok.text in (")", "]", "}") and stack:
            opener, closer = stack.pop()
            if closer == tok.text:
                pairs[opener] = j
            else:  # every opener still open meets this wrong closer before its own
                stack.clear()
    _LAST.value = (toks, len(toks), pairs)
    return pairs


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
