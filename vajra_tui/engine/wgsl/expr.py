"""Constant integer expressions over WGSL tokens (for ``@workgroup_size(TILE * 2)``)."""

from __future__ import annotations

from vajra_tui.engine.wgsl.lexer import IDENT, NUMBER, Token
from vajra_tui.engine.wgsl.primitives import int_literal, match_bracket

_BINARY = [("|",), ("^",), ("&",), ("<<", ">>"), ("+", "-"), ("*", "/", "%")]
_CASTS = {"u32", "i32", "abstract_int"}


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


def eval_int(toks: list[Token], consts: dict[str, int]) -> int | None:
    """Evaluate integer literals, const names, + - * / % << >> & | ^, parens, u32()/i32(); None if not."""
    try:
        val, rest = _parse(list(toks), 0, consts)
    except (ValueError, IndexError, ZeroDivisionError):
        return None
    return val if not rest else None


def _parse(toks: list[Token], level: int, consts: dict[str, int]) -> tuple[int, list[Token]]:
    if level == len(_BINARY):
        return _unary(toks, consts)
    left, toks = _parse(toks, level + 1, consts)
    while toks and toks[0].text in _BINARY[level]:
        op = toks[0].text
        right, toks = _parse(toks[1:], level + 1, consts)
        left = {
            "|": lambda: left | right, "^": lambda: left ^ right, "&": lambda: left & right,
            "<<": lambda: left << right, ">>": lambda: left >> right, "+": lambda: left + right,
            "-": lambda: left - right, "*": lambda: left * right,
            "/": lambda: int(left / right), "%": lambda: left % right,
        }[op]()
    return left, toks


def _unary(toks: list[Token], consts: dict[str, int]) -> tuple[int, list[Token]]:
    t = toks[0]
    if t.text == "-":
        v, rest = _unary(toks[1:], consts)
        return -v, rest
    if t.text == "(":
        close = match_bracket(toks, 0)
        v, rest = _parse(toks[1:close], 0, consts)
        if rest or close < 0:
            raise ValueError("bad parens")
        return v, toks[close + 1:]
    if t.kind == NUMBER:
        v = int_literal(t.text)
        if v is None:
            raise ValueError("not an integer")
        return v, toks[1:]
    if t.kind == IDENT and t.text in _CASTS and len(toks) > 1 and toks[1].text == "(":
        return _unary(toks[1:], consts)
    if t.kind == IDENT and t.text in consts:
        return consts[t.text], toks[1:]
    raise ValueError(f"cannot evaluate {t.text!r}")
