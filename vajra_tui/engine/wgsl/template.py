"""WGSL kernels as published projects write them: host-side templates.

Projects fill ``{{NAME}}`` placeholders and run a small C-like preprocessor (``#define``,
``#undef``, ``#ifdef``, ``#ifndef``, ``#if``, ``#elif``, ``#else``, ``#endif``) before handing
the text to WebGPU. Vajra expands them itself so such a kernel can be read, tuned and exported
as written. Every line keeps its number (directive and inactive lines become empty lines)
because diagnostics point at the source the user wrote. Costs are bounded: a template is
untrusted text, and a macro bomb must stop with a one-line error, not exhaust memory.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Mapping
from dataclasses import dataclass

MAX_EXPR, MAX_DEPTH, MAX_OUTPUT, MAX_DIRECTIVES = 400, 64, 2_000_000, 10_000
_EVAL_STEPS = 20_000  # tokens one #if may read, counting the macros it looks into
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_]\w*)\s*\}\}")
_DIRECTIVE = re.compile(r"^(\s*)#\s*([A-Za-z_]\w*)?(.*)$")
_IDENT = re.compile(r"(?<!\w)[A-Za-z_]\w*")
_DEFINE = re.compile(r"([A-Za-z_]\w*)(\(?)\s*(.*)$")
_TOKEN = re.compile(r"\s*(?:(0[xX][0-9A-Fa-f]+|\d+)[uUlLi]*(?!\w)|([A-Za-z_]\w*)"
                    r"|(<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%<>!()]))")
_CONDITIONALS = frozenset({"if", "ifdef", "ifndef", "elif", "else", "endif"})
_UNSUPPORTED = frozenset({"include", "import", "pragma"})
_LEVELS = (("||",), ("&&",), ("==", "!="), ("<", "<=", ">", ">="), ("<<", ">>"), ("+", "-"),
           ("*", "/", "%"))
_NO_VALUE = "has no value (give it in the workload's defines, the size or a // tune: line)"


class TemplateError(ValueError):
    """A template Vajra cannot expand; ``line``/``column`` (1-based) say where."""

    def __init__(self, problem: str, line: int, column: int = 1) -> None:
        super().__init__(f"template: {problem}")
        self.line, self.column = line, column


def _code(line: str) -> str:
    """The line before its ``//`` comment (WGSL has no strings, so ``//`` always starts one)."""
    cut = line.find("//")
    return line if cut < 0 else line[:cut]


def is_template(source: str) -> bool:
    """True when the source needs expanding: placeholders or directive lines."""
    return any(line.lstrip().startswith("#") or _PLACEHOLDER.search(_code(line))
               for line in source.split("\n"))


def placeholders(source: str) -> list[str]:
    """Names the template needs from outside, in first-use order: every ``{{NAME}}``, and the
    names conditionals test that the source does not ``#define`` itself."""
    order: dict[str, bool] = {}  # name -> used as {{NAME}}
    defined: set[str] = set()
    for line in source.split("\n"):
        code = _code(line)
        for m in _PLACEHOLDER.finditer(code):
            order[m[1]] = True
        d = _DIRECTIVE.match(code)
        if not d:
            continue
        rest = _PLACEHOLDER.sub(" ", d[3])
        names = [m[0] for m in _IDENT.finditer(rest)]
        if d[2] == "define" and names:
            defined.add(names[0])
        elif d[2] in ("ifdef", "ifndef", "if", "elif"):
            for name in names:
                if name not in ("defined", "true", "false"):
                    order.setdefault(name, False)
    return [name for name, braced in order.items() if braced or name not in defined]


def literal(value: object, name: str, line: int, column: int = 1) -> str:
    """``value`` as WGSL text: ints in decimal, bools as true/false, floats that round-trip."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        number = float(value)
        if not math.isfinite(number):
            raise TemplateError(f"{{{{{name}}}}} is {number}, which WGSL cannot write (line {line})",
                                line, column)
        return repr(number)
    if isinstance(value, str):
        if "\n" in value or "\r" in value:
            raise TemplateError(f"{{{{{name}}}}}'s value spans lines, which would move every line "
                                f"after it (line {line})", line, column)
        return value
    raise TemplateError(f"{{{{{name}}}}} is a {type(value).__name__}, not a number, bool or "
                        f"string (line {line})", line, column)


def expand(source: str, values: Mapping[str, int | float | bool | str]) -> str:
    """The WGSL the template stands for under ``values`` (which also count as defined macros
    for conditionals, but never rewrite the kernel's own identifiers), line for line."""
    return _Expander(values).run(source)


@dataclass(slots=True)
class _Frame:
    """One open conditional: where it began, whether its enclosing text is live, and its state."""
    line: int
    column: int
    kind: str
    parent: bool
    taken: bool
    active: bool
    else_line: int = 0


class _Expander:
    """One expansion's state: macros, open conditionals and the spending against the bounds."""

    def __init__(self, values: Mapping[str, object]) -> None:
        self.values = dict(values)
        self.macros: dict[str, str] = {}
        self.stack: list[_Frame] = []
        self.budget, self.directives = MAX_OUTPUT, 0

    @property
    def active(self) -> bool:
        return not self.stack or self.stack[-1].active

    def run(self, source: str) -> str:
        out = []
        for number, line in enumerate(source.split("\n"), 1):
            d = _DIRECTIVE.match(line)
            if d:
                self.directive(d, number)
                out.append("")
            elif not self.active:
                out.append("")
            else:
                code = _code(line)
                comment = line[len(code):]
                out.append(self.substitute(self.fill(code, number), number) + comment)
                self.spend(len(comment) + 1, number)
        if self.stack:
            f = self.stack[-1]
            raise TemplateError(f"`#{f.kind}` on line {f.line} has no `#endif`", f.line, f.column)
        return "\n".join(out)

    def spend(self, amount: int, number: int) -> None:
        self.budget -= amount
        if self.budget < 0:
            raise TemplateError(f"the expansion grows past {MAX_OUTPUT // 1_000_000} MB "
                                f"(line {number})", number)

    def fill(self, text: str, number: int, offset: int = 0) -> str:
        """Replace ``{{NAME}}``: a ``#define`` made in the source first, then the given values."""
        def one(m: re.Match[str]) -> str:
            name, column = m[1], offset + m.start() + 1
            if name in self.macros:
                return self.macros[name]
            if name not in self.values:
                raise TemplateError(f"{{{{{name}}}}} on line {number} {_NO_VALUE}", number, column)
            return literal(self.values[name], name, number, column)
        return _PLACEHOLDER.sub(one, text)

    def substitute(self, text: str, number: int, depth: int = 0,
                   hiding: frozenset[str] = frozenset()) -> str:
        """Replace macro names (whole identifiers, rescanned as C does, a macro never inside
        itself). Every character that reaches the output, and every expansion, is spent."""
        parts, pos = [], 0
        for m in _IDENT.finditer(text) if self.macros else ():
            name = m[0]
            if name not in self.macros or name in hiding:
                continue
            if depth >= MAX_DEPTH:
                raise TemplateError(f"macro `{name}` nests past {MAX_DEPTH} levels (line {number})",
                                    number, m.start() + 1)
            self.spend(m.start() - pos + 1, number)
            parts.append(text[pos:m.start()])
            parts.append(self.substitute(self.macros[name], number, depth + 1, hiding | {name}))
            pos = m.end()
        self.spend(len(text) - pos, number)
        parts.append(text[pos:])
        return "".join(parts)

    def directive(self, d: re.Match[str], number: int) -> None:
        kind, column = d[2] or "", len(d[1]) + 1
        rest, offset = _code(d[3]).strip(), d.start(3)
        self.directives += 1
        if self.directives > MAX_DIRECTIVES:
            raise TemplateError(f"more than {MAX_DIRECTIVES} directive lines (line {number})",
                                number, column)
        if rest.endswith("\\"):
            raise TemplateError(f"`#{kind}` continues onto the next line, which is not supported "
                                f"(line {number})", number, column)
        if kind in _CONDITIONALS:
            self.conditional(kind, rest, number, column, offset)
        elif kind in _UNSUPPORTED:
            raise TemplateError(f"`#{kind}` is not supported (line {number})", number, column)
        elif kind not in ("define", "undef"):
            if kind or rest:  # a lone `#` is C's null directive
                word = kind or rest.split()[0]
                raise TemplateError(f"`#{word}` is not a known directive (line {number})",
                                    number, column)
        elif self.active:
            self.define(kind, rest, number, column, offset)

    def define(self, kind: str, rest: str, number: int, column: int, offset: int) -> None:
        m = _DEFINE.match(rest)
        if not m or (kind == "undef" and m[2] + m[3]):
            raise TemplateError(f"`#{kind}` needs one name (line {number})", number, column)
        if kind == "undef":
            self.macros.pop(m[1], None)
            self.values.pop(m[1], None)
        elif m[2]:
            raise TemplateError(f"function-like macro `{m[1]}(...)` is not supported "
                                f"(line {number})", number, column)
        else:
            self.macros[m[1]] = self.fill(m[3], number, offset + m.start(3)).strip()

    def conditional(self, kind: str, rest: str, number: int, column: int, offset: int) -> None:
        if kind.startswith("if"):
            if len(self.stack) >= MAX_DEPTH:
                raise TemplateError(f"conditionals nest past {MAX_DEPTH} levels (line {number})",
                                    number, column)
            live = self.active and self.test(kind, rest, number, column, offset)
            self.stack.append(_Frame(number, column, kind, self.active, live, live))
            return
        if not self.stack:
            raise TemplateError(f"`#{kind}` without an `#if` before it (line {number})",
                                number, column)
        frame = self.stack[-1]
        if kind == "endif":
            self.stack.pop()
        elif frame.else_line:
            raise TemplateError(f"`#{kind}` after the `#else` of line {frame.else_line} "
                                f"(line {number})", number, column)
        elif kind == "else":
            frame.else_line, frame.active = number, frame.parent and not frame.taken
            frame.taken = True
        else:
            frame.active = (frame.parent and not frame.taken
                            and self.test("if", rest, number, column, offset))
            frame.taken = frame.taken or frame.active

    def test(self, kind: str, rest: str, number: int, column: int, offset: int) -> bool:
        if kind == "if":
            where = f"`#{kind}` on line {number}"
            return _Eval(self, where, number, column).run(self.fill(rest, number, offset)) != 0
        if not re.fullmatch(r"[A-Za-z_]\w*", rest):
            raise TemplateError(f"`#{kind}` needs one name (line {number})", number, column)
        return (rest in self.macros or rest in self.values) == (kind == "ifdef")


def _wrap(value: int) -> int:
    """C's 64-bit signed arithmetic, so a chain of products cannot grow without bound."""
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)


class _Eval:
    """Recursive descent over one ``#if`` expression, C's precedence and truncating division;
    a name is a macro (evaluated as its own expression), a value, or 0."""

    def __init__(self, ex: _Expander, where: str, number: int, column: int, depth: int = 0,
                 hiding: frozenset[str] = frozenset(), steps: list[int] | None = None) -> None:
        self.ex, self.where, self.number, self.column = ex, where, number, column
        self.depth, self.hiding, self.steps = depth, hiding, steps or [0]
        self.tokens: list[int | str] = []
        self.pos = self.skip = 0

    def fail(self, problem: str) -> TemplateError:
        return TemplateError(f"{self.where}: {problem}", self.number, self.column)

    def run(self, text: str) -> int:
        if len(text) > MAX_EXPR:
            raise self.fail(f"the expression is longer than {MAX_EXPR} characters")
        pos = 0
        while m := _TOKEN.match(text, pos):
            pos = m.end()
            self.tokens.append(int(m[1], 16 if m[1][1:2] in "xX" else 10) if m[1] else m[2] or m[3])
        if text[pos:].strip():
            raise self.fail(f"unexpected `{text[pos:].strip()[:20]}`")
        value = self.binary(0)
        if self.pos < len(self.tokens):
            raise self.fail(f"unexpected `{self.tokens[self.pos]}`")
        return value

    def next(self) -> int | str:
        if self.pos >= len(self.tokens):
            raise self.fail("the expression ends too soon")
        self.steps[0] += 1
        if self.steps[0] > _EVAL_STEPS:
            raise self.fail(f"evaluating reads more than {_EVAL_STEPS} tokens")
        self.pos += 1
        return self.tokens[self.pos - 1]

    def peek(self) -> int | str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def binary(self, level: int) -> int:
        if level == len(_LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        while isinstance(op := self.peek(), str) and op in _LEVELS[level]:
            self.next()
            cut = (op == "&&" and not left) or (op == "||" and left)  # C never evaluates it
            self.skip += cut
            right = self.binary(level + 1)
            self.skip -= cut
            left = _wrap(self.apply(op, left, right))
        return left

    def apply(self, op: str, a: int, b: int) -> int:
        if op in ("/", "%", "<<", ">>") and (b == 0 if op in "/%" else not 0 <= b < 64):
            if self.skip:
                return 0
            raise self.fail("division by zero" if op in "/%" else f"shift by {b}")
        if op in ("/", "%"):
            q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
            return q if op == "/" else a - b * q
        table = {"||": lambda: a or b, "&&": lambda: a and b, "==": lambda: a == b,
                 "!=": lambda: a != b, "<": lambda: a < b, "<=": lambda: a <= b,
                 ">": lambda: a > b, ">=": lambda: a >= b, "<<": lambda: a << b,
                 ">>": lambda: a >> b, "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b}
        result = table[op]()
        return int(bool(result)) if op in ("||", "&&") else int(result)

    def unary(self) -> int:
        token = self.next()
        if token in ("!", "-", "+"):
            value = self.unary()
            return int(not value) if token == "!" else _wrap(-value if token == "-" else value)
        if isinstance(token, int):
            return _wrap(token)
        if token == "(":
            value = self.binary(0)
            if self.next() != ")":
                raise self.fail("a `(` is not closed")
            return value
        if not isinstance(token, str) or not (token[0].isalpha() or token[0] == "_"):
            raise self.fail(f"unexpected `{token}`")
        if token == "defined":
            paren = self.peek() == "("
            name = self.next() if not paren else (self.next(), self.next())[1]
            if not isinstance(name, str) or (paren and self.next() != ")"):
                raise self.fail("`defined` needs a name")
            return int(name in self.ex.macros or name in self.ex.values)
        return self.name(token)

    def name(self, name: str) -> int:
        if name in ("true", "false"):
            return int(name == "true")
        value = self.ex.macros.get(name, self.ex.values.get(name, 0))
        if name in self.hiding or isinstance(value, (bool, numbers.Integral)):
            return 0 if name in self.hiding else int(value)
        if isinstance(value, numbers.Real) and not float(value).is_integer():
            raise self.fail(f"`{name}` is {value}, not an integer")
        if isinstance(value, numbers.Real):
            return _wrap(int(value))
        if self.depth >= MAX_DEPTH:
            raise self.fail(f"`{name}` nests past {MAX_DEPTH} levels")
        inner = _Eval(self.ex, self.where, self.number, self.column, self.depth + 1,
                      self.hiding | {name}, self.steps)
        inner.skip = self.skip
        return inner.run(str(value))
