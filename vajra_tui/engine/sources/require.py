"""The ``// require:`` language: small, Python-like arithmetic over tuned values and sizes,
evaluated by a bounded interpreter (never ``eval``).

A require comes from a kernel file, so its cost is bounded before anything runs: the text
is measured (length, an upper bound on its nesting) before ``ast.parse`` can recurse, only
whitelisted nodes are interpreted, values are numbers and booleans only (no strings), and
an integer beyond 2^64 is refused before it is computed (``9**9**9``, ``1 << 10**10``).
An arithmetic error (a division by zero) excludes the configuration; a limit is a
:class:`RequireLimit` the caller turns into a one-line ``kernel:line`` refusal.
"""

from __future__ import annotations

import ast
import functools
import operator
import re
from typing import Any, Callable

from vajra_tui.engine.errors import UsageError

MAX_CHARS = 400
"""Longest require, in characters: far past any real condition, and short enough that the
nesting bound below is the whole story for the parser."""
MAX_NESTING = 64
"""Upper bound on an expression's nesting, counted on the text before parsing (operator
symbols, ``and``/``or``/``not`` and opening parentheses): CPython's parser and compiler
recurse once per level and fail near 1000 levels with a RecursionError."""
MAX_MAGNITUDE = 1 << 64
"""Largest integer a require may compute (2^64): WGSL integers are 32-bit, so a bigger one
means nothing, and past it ``**`` and ``<<`` cost time and memory without bound."""
MAX_SHIFT = 64
"""Largest left shift: anything more moves a nonzero value past 2^64."""
FUNCS: dict[str, Callable[..., Any]] = {"min": min, "max": max, "abs": abs}
_OPERATORS = re.compile(r"[-+*/%<>=!&|^~(]|\b(?:and|or|not)\b")
_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.RShift: operator.rshift,
}
_UNARY: dict[type, Callable[[Any], Any]] = {
    ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert, ast.Not: operator.not_,
}
_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
}
_ALLOWED = (ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.BinOp, ast.Pow, ast.LShift, ast.UnaryOp,
            ast.Compare, ast.Name, ast.Load, ast.Constant, ast.Call, *_BINARY, *_UNARY, *_COMPARE)


class ParamsError(UsageError):
    """A malformed ``// tune:`` or ``// require:`` line: one line naming the kernel and the line."""


class RequireLimit(ParamsError):
    """A require past one of the limits above; the caller adds the kernel and the line.

    A UsageError, hence a ValueError: the interpreter lets it through before it catches
    the arithmetic errors that only exclude a configuration."""


def _checked(value: Any) -> Any:
    """``value``, unless it is an integer beyond 2^64."""
    if isinstance(value, int) and abs(value) > MAX_MAGNITUDE:
        raise RequireLimit("an integer beyond 2^64 (the limit of // require arithmetic)")
    return value


def _measure(text: str) -> None:
    """Length and nesting, counted in one pass over the text before it is parsed."""
    if len(text) > MAX_CHARS:
        raise RequireLimit(f"{len(text)} characters, over the limit of {MAX_CHARS}")
    nesting = sum(1 for _ in _OPERATORS.finditer(text))
    if nesting > MAX_NESTING:
        raise RequireLimit(f"{nesting} operators and parentheses, over the limit of {MAX_NESTING}")


@functools.lru_cache(maxsize=256)
def parse(text: str) -> ast.Expression:
    """The checked tree of a require (SyntaxError: not in the language; RequireLimit: too big).

    Cached: the search evaluates the same few texts once per configuration."""
    _measure(text)
    python = text.replace("&&", " and ").replace("||", " or ")
    python = re.sub(r"!(?!=)", " not ", python)
    python = re.sub(r"\btrue\b", "True", re.sub(r"\bfalse\b", "False", python))
    try:
        tree = ast.parse(python.strip(), mode="eval")
    except ValueError as exc:  # a NUL byte, an int literal past Python's digit limit
        raise SyntaxError(str(exc)) from None
    for node in ast.walk(tree):  # iterative: the nesting is already bounded
        if not isinstance(node, _ALLOWED):
            raise SyntaxError(f"{type(node).__name__} is not allowed")
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in FUNCS):
            raise SyntaxError("only min(), max() and abs() may be called")
        if isinstance(node, ast.Constant) and not isinstance(node.value, (bool, int, float)):
            raise SyntaxError(f"{type(node.value).__name__} values are not allowed: numbers and true/false")
        if isinstance(node, ast.Constant):
            _checked(node.value)
    return tree


def names(text: str) -> set[str]:
    """The names a require reads (not the functions it calls)."""
    return {n.id for n in ast.walk(parse(text)) if isinstance(n, ast.Name) and n.id not in FUNCS}


def probe(text: str) -> None:
    """Evaluate every part of a require that reads no name, so that a constant past the
    limits (``9**9**9``) is refused when the kernel is read, whatever the configuration."""
    pending: list[ast.AST] = [parse(text).body]
    while pending:
        node = pending.pop()
        if any(isinstance(n, ast.Name) for n in ast.walk(node)):  # a call's function is a Name
            pending.extend(n for n in ast.iter_child_nodes(node) if isinstance(n, ast.expr))
            continue
        try:
            _value(node, {})
        except RequireLimit:
            raise
        except (ArithmeticError, TypeError, ValueError):
            pass  # excludes every configuration: a mistake, but not a cost


def evaluate(text: str, values: dict[str, Any]) -> bool:
    """A require over tuned values and sizes; an arithmetic error excludes (False)."""
    tree = parse(text)
    try:
        return bool(_value(tree.body, values))
    except RequireLimit:
        raise
    except (ArithmeticError, TypeError, ValueError):
        return False


def _value(node: ast.AST, values: dict[str, Any]) -> Any:
    """The interpreter: one case per whitelisted node; depth bounded by MAX_NESTING."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in values:
            raise TypeError(f"{node.id} is not defined")
        return _checked(values[node.id])
    if isinstance(node, ast.BoolOp):
        return _bool_op(node, values)
    if isinstance(node, ast.UnaryOp):
        return _checked(_UNARY[type(node.op)](_value(node.operand, values)))
    if isinstance(node, ast.BinOp):
        return _checked(_binary(node.op, _value(node.left, values), _value(node.right, values)))
    if isinstance(node, ast.Compare):
        return _compare(node, values)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return _checked(FUNCS[node.func.id](*(_value(a, values) for a in node.args)))
    raise SyntaxError(f"{type(node).__name__} is not allowed")


def _bool_op(node: ast.BoolOp, values: dict[str, Any]) -> Any:
    """``and``/``or`` as Python has them: the deciding operand, later ones never evaluated."""
    result: Any = None
    for operand in node.values:
        result = _value(operand, values)
        if bool(result) != isinstance(node.op, ast.And):
            return result
    return result


def _compare(node: ast.Compare, values: dict[str, Any]) -> bool:
    left = _value(node.left, values)
    for op, right_node in zip(node.ops, node.comparators):
        right = _value(right_node, values)
        if not _COMPARE[type(op)](left, right):
            return False
        left = right
    return True


def _binary(op: ast.operator, left: Any, right: Any) -> Any:
    """One arithmetic step; ``**`` and ``<<`` are checked before they are computed."""
    if isinstance(op, ast.Pow):
        return _power(left, right)
    if isinstance(op, ast.LShift):
        if isinstance(right, int) and right > MAX_SHIFT and left:
            raise RequireLimit(f"a shift by more than {MAX_SHIFT} (past 2^64, the limit of // require arithmetic)")
        return operator.lshift(left, right)
    return _BINARY[type(op)](left, right)


def _power(base: Any, exponent: Any) -> Any:
    """``base ** exponent``; between integers, refused when the result must pass 2^64."""
    both_int = isinstance(base, int) and isinstance(exponent, int)
    if both_int and exponent > 0 and abs(base) >= 2 and (abs(base).bit_length() - 1) * exponent >= 64:
        if abs(base) ** min(exponent, 65) > MAX_MAGNITUDE:  # exact near the edge, e.g. 2 ** 64
            raise RequireLimit("an integer beyond 2^64 (the limit of // require arithmetic)")
    return operator.pow(base, exponent)
