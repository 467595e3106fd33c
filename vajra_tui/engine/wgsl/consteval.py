"""Integer constant evaluation exactly as WGSL defines it, for what the front end sizes.

Workgroup memory, the zero-init loop bounds and the workgroup size are computed here,
before the compiler sees the kernel, so a value computed differently from WGSL is a
kernel checked against the wrong size: Python's ``u32(-1i)`` is -1 (WGSL: 4294967295)
and Python's ``%`` floors (WGSL truncates). So values carry their WGSL type:

* ``u32``/``i32`` wrap modulo 2^32 (``i32`` in two's complement); ``/`` and ``%``
  truncate toward zero; a shift count must be below 32; ``>>`` is logical on ``u32`` and
  arithmetic on ``i32``; a division by zero (or ``i32`` -2^31 / -1) is an error.
* abstract integers (unsuffixed literals, untyped ``const``s) are exact within i64; an
  overflow is an error, and one is converted to a concrete type only when it fits.
* ``u32(x)``/``i32(x)`` reinterpret the bits of the other 32-bit type and convert an
  abstract value only when it fits.

Anything else (floats, bools, built-in calls, unknown names) cannot be evaluated with
certainty and raises :class:`ConstEvalError`: callers refuse the kernel, never guess.
Nesting depth and expression length are bounded, so any input costs little.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Union

from vajra_tui.engine.wgsl.lexer import IDENT, NUMBER, Token
from vajra_tui.engine.wgsl.primitives import match_bracket

MAX_EVAL_DEPTH = 64
"""Nested parentheses, unary operators and conversions one expression may hold: real
kernels use a handful, and deeper ones would only run Python out of stack."""

MAX_EXPR_TOKENS = 4096
"""Tokens one constant expression may have; real sizes are a few dozen tokens long."""

I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1
_RANGES = {"u32": (0, (1 << 32) - 1), "i32": (-(1 << 31), (1 << 31) - 1), "abstract": (I64_MIN, I64_MAX)}
_MAX_DIGITS = {10: 19, 16: 16}  # an i64 (or u32) literal never needs more significant digits
_PRECEDENCE = {"|": 1, "^": 2, "&": 3, "<<": 4, ">>": 4, "+": 5, "-": 5, "*": 6, "/": 6, "%": 6}
_CONVERSIONS = ("u32", "i32")


class ConstEvalError(ValueError):
    """An expression WGSL rejects, or one this evaluator cannot evaluate with certainty."""


@dataclass(frozen=True, slots=True)
class Value:
    """An integer with its WGSL type: ``u32``, ``i32`` or ``abstract`` (AbstractInt)."""

    type: str
    value: int

    def __str__(self) -> str:
        suffix = {"u32": "u", "i32": "i"}.get(self.type, "")
        return f"{self.value}{suffix}"


Known = Mapping[str, Union[int, Value, ConstEvalError]]


def typed(value: int | Value, type_: str = "u32") -> Value:
    """A plain int (a size constant, a pipeline constant) as a Value of ``type_``."""
    if isinstance(value, Value):
        return value
    return _fit(value, type_, "value")


def _fit(value: int, type_: str, what: str) -> Value:
    low, high = _RANGES[type_]
    if not low <= value <= high:
        raise ConstEvalError(f"{what} {value} does not fit in {_type_name(type_)}")
    return Value(type_, value)


def _type_name(type_: str) -> str:
    return "an abstract integer (64 bits)" if type_ == "abstract" else type_


def _wrap(value: int, type_: str) -> Value:
    """Concrete arithmetic modulo 2^32; abstract arithmetic must stay within i64."""
    if type_ == "u32":
        return Value("u32", value & 0xFFFFFFFF)
    if type_ == "i32":
        value &= 0xFFFFFFFF
        return Value("i32", value - (1 << 32) if value >= 1 << 31 else value)
    return _fit(value, "abstract", "abstract integer result")


def literal(text: str) -> Value:
    """An integer literal token's value and type; raises for floats and out-of-range literals.

    The digits are counted before Python converts them, so a literal of any length
    costs nothing (Python refuses decimal strings over 4300 digits with a ValueError).
    """
    suffix = text[-1] if text[-1:] in ("i", "u") else ""
    body = text[:-1] if suffix else text
    base = 16 if body[:2].lower() == "0x" else 10
    digits = body[2:] if base == 16 else body
    allowed = "0123456789abcdefABCDEF" if base == 16 else "0123456789"
    if not digits or any(c not in allowed for c in digits):
        raise ConstEvalError(f"{text[:40]} is not an integer literal")
    significant = digits.lstrip("0")
    type_ = {"i": "i32", "u": "u32"}.get(suffix, "abstract")
    if len(significant) > _MAX_DIGITS[base]:
        raise ConstEvalError(f"integer literal of {len(digits)} digits does not fit in {_type_name(type_)}")
    return _fit(int(significant or "0", base), type_, "integer literal")


def evaluate(toks: list[Token], known: Known) -> Value:
    """The value of a constant integer expression (``known``: names already evaluated)."""
    if len(toks) > MAX_EXPR_TOKENS:
        raise ConstEvalError(f"expression of {len(toks)} tokens is longer than the "
                             f"{MAX_EXPR_TOKENS} this front end evaluates")
    parser = _Parser(_merge_shifts(toks), known)
    value = parser.binary(1, 0)
    if parser.i != len(parser.toks):
        raise ConstEvalError(f"cannot evaluate {parser.toks[parser.i].text[:40]!r} here")
    return value


def _merge_shifts(toks: list[Token]) -> list[Token]:
    """Rejoin ``>>`` that the type parser split into two adjacent ``>``."""
    out: list[Token] = []
    for t in toks:
        if t.text == ">" and out and out[-1].text == ">" and out[-1].offset + 1 == t.offset:
            prev = out.pop()
            out.append(Token(prev.kind, ">>", prev.line, prev.column, prev.offset))
        else:
            out.append(t)
    return out


class _Parser:
    """Precedence climbing over WGSL's integer operators (recursion only for nesting)."""

    def __init__(self, toks: list[Token], known: Known) -> None:
        self.toks, self.known, self.i = toks, known, 0

    def _peek(self) -> str:
        return self.toks[self.i].text if self.i < len(self.toks) else ""

    def binary(self, min_prec: int, depth: int) -> Value:
        left = self.unary(depth)
        while _PRECEDENCE.get(self._peek(), 0) >= min_prec:
            op = self._peek()
            self.i += 1
            right = self.binary(_PRECEDENCE[op] + 1, depth + 1)
            left = apply(op, left, right)
        return left

    def unary(self, depth: int) -> Value:
        if depth > MAX_EVAL_DEPTH:
            raise ConstEvalError(f"expression nested deeper than {MAX_EVAL_DEPTH} levels")
        if self.i >= len(self.toks):
            raise ConstEvalError("incomplete expression")
        t = self.toks[self.i]
        if t.text in ("-", "~"):
            self.i += 1
            return negate(t.text, self.unary(depth + 1))
        if t.text == "(":
            return self._group(depth)
        self.i += 1
        if t.kind == NUMBER:
            return literal(t.text)
        if t.kind == IDENT and t.text in _CONVERSIONS and self._peek() == "(":
            return convert(t.text, self._group(depth))
        if t.kind == IDENT and t.text in self.known:
            return _named(t.text, self.known[t.text])
        raise ConstEvalError(f"cannot evaluate {t.text[:40]!r}")

    def _group(self, depth: int) -> Value:
        close = match_bracket(self.toks, self.i)
        if close < 0:
            raise ConstEvalError("unbalanced parentheses")
        inner = _Parser(self.toks[self.i + 1:close], self.known)
        value = inner.binary(1, depth + 1)
        if inner.i != len(inner.toks):
            raise ConstEvalError(f"cannot evaluate {inner.toks[inner.i].text[:40]!r} here")
        self.i = close + 1
        return value


def _named(name: str, value: int | Value | ConstEvalError) -> Value:
    if isinstance(value, ConstEvalError):
        raise ConstEvalError(f"`{name}`: {value}")
    return typed(value)


def _unify(op: str, a: Value, b: Value) -> str:
    """The type both operands take: an abstract one converts to the other's concrete type."""
    if a.type == b.type:
        return a.type
    if a.type == "abstract":
        _fit(a.value, b.type, f"{a} (left of {op})")
        return b.type
    if b.type == "abstract":
        _fit(b.value, a.type, f"{b} (right of {op})")
        return a.type
    raise ConstEvalError(f"{a} {op} {b} mixes {a.type} and {b.type}")


def apply(op: str, a: Value, b: Value) -> Value:
    """``a op b`` as WGSL evaluates it."""
    if op in ("<<", ">>"):
        return shift(op, a, b)
    type_ = _unify(op, a, b)
    x, y = a.value, b.value
    if op in ("/", "%"):
        if y == 0:
            raise ConstEvalError(f"{a} {op} {b} divides by zero")
        if type_ == "i32" and x == -(1 << 31) and y == -1:
            raise ConstEvalError(f"{a} {op} {b} overflows i32")
        quotient = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)  # toward zero
        return _wrap(quotient if op == "/" else x - quotient * y, type_)
    result = {"+": x + y, "-": x - y, "*": x * y, "&": x & y, "|": x | y, "^": x ^ y}[op]
    return _wrap(result, type_)


def shift(op: str, a: Value, b: Value) -> Value:
    """``<<``/``>>``: the count is u32 and below the bit width; ``>>`` keeps an i32's sign."""
    if b.type == "i32":
        raise ConstEvalError(f"shift count {b} must be u32")
    count = b.value
    width = 64 if a.type == "abstract" else 32
    if count < 0 or count >= width:
        raise ConstEvalError(f"shift count {count} is not below {width}, the width of {_type_name(a.type)}")
    if a.type == "u32" and op == ">>":
        return Value("u32", a.value >> count)
    return _wrap(a.value << count if op == "<<" else a.value >> count, a.type)


def negate(op: str, a: Value) -> Value:
    """Unary ``-`` (not defined on u32) and ``~``."""
    if op == "~":
        return _wrap(~a.value, a.type) if a.type != "abstract" else Value("abstract", ~a.value)
    if a.type == "u32":
        raise ConstEvalError(f"unary minus is not defined on u32 ({a})")
    return _wrap(-a.value, a.type)


def convert(type_: str, a: Value) -> Value:
    """``u32(x)``/``i32(x)``: the other 32-bit type's bits reinterpreted, an abstract value kept
    only when it fits."""
    if a.type == type_:
        return a
    if a.type == "abstract":
        return _fit(a.value, type_, f"{type_}({a.value})")
    return _wrap(a.value, type_)


def eval_int(toks: list[Token], known: Known) -> int | None:
    """The value, or None when it cannot be evaluated (callers that must say why use
    :func:`evaluate`)."""
    try:
        return evaluate(toks, known).value
    except ConstEvalError:
        return None
