"""WGSL kernels as published projects write them: host-side templates (``{{NAME}}`` and a small
C-like preprocessor), expanded by Vajra itself so such a kernel is read, tuned and exported as
written. Every line keeps its number (directive and inactive lines become empty lines, a value
of several lines is folded onto its placeholder's line) because diagnostics point at the
source the user wrote. Costs are bounded: a template is untrusted
text, and a macro bomb must stop with a one-line error, not exhaust memory."""

from __future__ import annotations

import math
import numbers
import operator
import re
from collections.abc import Mapping
from dataclasses import dataclass

from vajra_tui.engine.wgsl.lexer import LINE_COMMENT, tokenize

MAX_EXPR, MAX_DEPTH, MAX_OUTPUT, MAX_DIRECTIVES = 400, 64, 2_000_000, 10_000
_EVAL_STEPS = 20_000  # tokens one #if may read, counting the macros it looks into
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_]\w*)\s*\}\}")
# a JavaScript template literal's substitution, as kernels kept in JS/TS strings write them
JS_PLACEHOLDER = re.compile(r"\$\{([^{}\n]*)\}")
JS_ARITHMETIC = re.compile(r"[\w\s+\-*/%()]+")
_DIRECTIVE = re.compile(r"^(\s*)#\s*([A-Za-z_]\w*)?(.*)$")
_IDENT = re.compile(r"(?<!\w)[A-Za-z_]\w*")
_DEFINE = re.compile(r"([A-Za-z_]\w*)(\(?)\s*(.*)$")
_TOKEN = re.compile(r"\s*(?:(0[xX][0-9A-Fa-f]+|\d+)[uUlLi]*(?!\w)|([A-Za-z_]\w*)"
                    r"|(<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%<>!()]))")
_CONDITIONALS = frozenset({"if", "ifdef", "ifndef", "elif", "else", "endif"})
_UNSUPPORTED = frozenset({"include", "import", "pragma"})
_LEVELS = (("||",), ("&&",), ("==", "!="), ("<", "<=", ">", ">="), ("<<", ">>"), ("+", "-"),
           ("*", "/", "%"))
_OPS = {"||": lambda a, b: bool(a or b), "&&": lambda a, b: bool(a and b), "==": operator.eq,
        "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
        ">=": operator.ge, "<<": operator.lshift, ">>": operator.rshift, "+": operator.add,
        "-": operator.sub, "*": operator.mul}
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
    return any(line.lstrip().startswith("#") or _PLACEHOLDER.search(_code(line)) or JS_PLACEHOLDER.search(_code(line))
               for line in source.split("\n"))


def js_names(inner: str) -> list[str]:
    """What ``${inner}`` needs from outside: the names in integer arithmetic
    (``${workgroupSize * 2}``), else the text itself as one key (``${this.wgSize}``)."""
    inner = inner.strip()
    if JS_ARITHMETIC.fullmatch(inner):
        return [m[0] for m in _IDENT.finditer(inner)] or [inner]
    return [inner]


def placeholders(source: str) -> list[str]:
    """Names the template needs from outside, in first-use order: every ``{{NAME}}``, and the
    names conditionals test that the source does not ``#define`` itself."""
    order: dict[str, bool] = {}  # name -> used as {{NAME}}
    defined: set[str] = set()
    for line in source.split("\n"):
        order.update((m[1], True) for m in _PLACEHOLDER.finditer(_code(line)))
        order.update((name, True) for m in JS_PLACEHOLDER.finditer(_code(line)) for name in js_names(m[1]))
        d = _DIRECTIVE.match(_code(line))
        names = [m[0] for m in _IDENT.finditer(_PLACEHOLDER.sub(" ", d[3]))] if d else []
        if d and d[2] == "define" and names:
            defined.add(names[0])
        elif d and d[2] in ("ifdef", "ifndef", "if", "elif"):
            order.update((n, order.get(n, False)) for n in names
                         if n not in ("defined", "true", "false"))
    return [name for name, braced in order.items() if braced or name not in defined]


def literal(value: object, name: str, line: int, column: int = 1) -> str:
    """``value`` as WGSL text: ints in decimal, bools as true/false, floats that round-trip."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real) and math.isfinite(value):
        return repr(float(value))
    if isinstance(value, str):
        return value if "\n" not in value and "\r" not in value else folded(value)
    raise TemplateError(f"{{{{{name}}}}}'s value is {value!r}, not a WGSL literal (line {line})", line, column)


def folded(code: str) -> str:
    """A value of several lines (burn pastes a distribution's whole loop into ``{{ prng_loop }}``)
    on one line, so that every line after it keeps its number: its ``//`` comments dropped,
    since they would swallow the rest of the line, and every line break a space."""
    return "".join(" " if t.text in ("\n", "\r\n", "\r") else re.sub(r"[\r\n]", " ", t.text)
                   for t in tokenize(code) if t.kind != LINE_COMMENT)


def expand(source: str, values: Mapping[str, int | float | bool | str],
           macros: Mapping[str, int | float | bool | str] | None = None) -> str:
    """The WGSL the template stands for under ``values`` (which also count as defined macros
    for conditionals, but never rewrite the kernel's own identifiers), line for line.
    ``macros`` are defined as if by ``#define`` before the first line (a host's ``-D``):
    they do replace identifiers."""
    expander = _Expander({**values, **(macros or {})})
    expander.macros.update({k: literal(v, k, 1) for k, v in (macros or {}).items()})
    return expander.run(source)


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
    """One expansion's state: macros, open conditionals, where it is, and spending against the
    bounds."""

    def __init__(self, values: Mapping[str, object]) -> None:
        self.values = dict(values)
        self.macros: dict[str, str] = {}
        self.stack: list[_Frame] = []
        self.budget, self.directives, self.number, self.column = MAX_OUTPUT, 0, 0, 1

    @property
    def active(self) -> bool:
        return not self.stack or self.stack[-1].active

    def fail(self, problem: str, column: int = 0) -> TemplateError:
        return TemplateError(f"{problem} (line {self.number})", self.number, column or self.column)

    def run(self, source: str) -> str:
        out = []
        for self.number, line in enumerate(source.split("\n"), 1):
            d = _DIRECTIVE.match(line)
            self.column = len(d[1]) + 1 if d else 1
            if d or not self.active:
                out.append(self.directive(d) if d else "")
                continue
            code = _code(line)
            out.append(self.substitute(self.fill(code)) + line[len(code):])
            self.spend(len(line) - len(code) + 1)
        if self.stack:
            f = self.stack[-1]
            raise TemplateError(f"`#{f.kind}` has no `#endif` (line {f.line})", f.line, f.column)
        return "\n".join(out)

    def spend(self, amount: int) -> None:
        self.budget -= amount
        if self.budget < 0:
            raise self.fail(f"the expansion grows past {MAX_OUTPUT // 1_000_000} MB")

    def fill(self, text: str, offset: int = 0) -> str:
        """Replace ``{{NAME}}``: a ``#define`` made in the source first, then the given values."""
        def one(m: re.Match[str]) -> str:
            name, column = m[1], offset + m.start() + 1
            if name in self.macros:
                return self.macros[name]
            if name not in self.values:
                raise TemplateError(f"{{{{{name}}}}} on line {self.number} {_NO_VALUE}",
                                    self.number, column)
            return literal(self.values[name], name, self.number, column)
        return JS_PLACEHOLDER.sub(lambda m: self.js(m, offset), _PLACEHOLDER.sub(one, text))

    def js(self, m: re.Match[str], offset: int) -> str:
        """``${...}`` as a JS template literal holds it: a value given under its exact text
        (``${this.wgSize}``), or integer arithmetic over given values (``${workgroupSize * 2}``)."""
        inner, column = m[1].strip(), offset + m.start() + 1
        if inner in self.macros:
            return self.macros[inner]
        if inner in self.values:
            return literal(self.values[inner], inner, self.number, column)
        names = js_names(inner)
        missing = [n for n in names if n not in self.values and n not in self.macros]
        if missing or not JS_ARITHMETIC.fullmatch(inner):
            raise TemplateError(f"`${{{inner}}}` on line {self.number}: {(missing or [inner])[0]!r} {_NO_VALUE}",
                                self.number, column)
        try:
            return str(_Eval(self).run(inner))
        except TemplateError as exc:
            raise TemplateError(f"`${{{inner}}}` on line {self.number}: {str(exc).split(': ', 2)[-1]}",
                                self.number, column) from None

    def substitute(self, text: str, depth: int = 0, hiding: frozenset[str] = frozenset()) -> str:
        """Replace macro names (whole identifiers, rescanned as C does, a macro never inside
        itself). Every character that reaches the output, and every expansion, is spent."""
        parts, pos = [], 0
        for m in _IDENT.finditer(text) if self.macros else ():
            if m[0] not in self.macros or m[0] in hiding:
                continue
            if depth >= MAX_DEPTH:
                raise self.fail(f"macro `{m[0]}` nests past {MAX_DEPTH} levels", m.start() + 1)
            self.spend(m.start() - pos + 1)
            parts += [text[pos:m.start()], self.substitute(self.macros[m[0]], depth + 1,
                                                           hiding | {m[0]})]
            pos = m.end()
        self.spend(len(text) - pos)
        return "".join(parts) + text[pos:]

    def directive(self, d: re.Match[str]) -> str:
        """Act on one directive line; it leaves an empty line behind."""
        kind, rest, offset = d[2] or "", _code(d[3]).strip(), d.start(3)
        self.directives += 1
        if self.directives > MAX_DIRECTIVES:
            raise self.fail(f"more than {MAX_DIRECTIVES} directive lines")
        if rest.endswith("\\"):
            raise self.fail(f"`#{kind}` continues onto the next line, which is not supported")
        if kind in _CONDITIONALS:
            self.conditional(kind, rest, offset)
        elif kind in _UNSUPPORTED:
            raise self.fail(f"`#{kind}` is not supported")
        elif kind not in ("define", "undef"):
            if kind or rest:  # a lone `#` is C's null directive
                raise self.fail(f"`#{kind or rest.split()[0]}` is not a known directive")
        elif self.active:
            self.define(kind, rest, offset)
        return ""

    def define(self, kind: str, rest: str, offset: int) -> None:
        m = _DEFINE.match(rest)
        if not m or (kind == "undef" and m[2] + m[3]):
            raise self.fail(f"`#{kind}` needs one name")
        if kind == "undef":
            self.macros.pop(m[1], None)
            self.values.pop(m[1], None)
        elif m[2]:
            raise self.fail(f"function-like macro `{m[1]}(...)` is not supported")
        else:
            self.macros[m[1]] = self.fill(m[3], offset + m.start(3)).strip()

    def conditional(self, kind: str, rest: str, offset: int) -> None:
        if kind.startswith("if"):
            if len(self.stack) >= MAX_DEPTH:
                raise self.fail(f"conditionals nest past {MAX_DEPTH} levels")
            live = self.active and self.test(kind, rest, offset)
            self.stack.append(_Frame(self.number, self.column, kind, self.active, live, live))
            return
        if not self.stack:
            raise self.fail(f"`#{kind}` without an `#if` before it")
        frame = self.stack[-1]
        if kind == "endif":
            self.stack.pop()
        elif frame.else_line:
            raise self.fail(f"`#{kind}` after the `#else` of line {frame.else_line}")
        elif kind == "else":
            frame.else_line, frame.active = self.number, frame.parent and not frame.taken
            frame.taken = True
        else:
            frame.active = frame.parent and not frame.taken and self.test("if", rest, offset)
            frame.taken = frame.taken or frame.active

    def test(self, kind: str, rest: str, offset: int) -> bool:
        if kind == "if":
            return _Eval(self).run(self.fill(rest, offset)) != 0
        if not re.fullmatch(r"[A-Za-z_]\w*", rest):
            raise self.fail(f"`#{kind}` needs one name")
        return (rest in self.macros or rest in self.values) == (kind == "ifdef")


def _wrap(value: int) -> int:
    """C's 64-bit signed arithmetic, so a chain of products cannot grow without bound."""
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)


class _Eval:
    """Recursive descent over one ``#if`` expression, C's precedence and truncating division;
    a name is a macro (evaluated as its own expression), a value, or 0."""

    def __init__(self, ex: _Expander, depth: int = 0, hiding: frozenset[str] = frozenset(),
                 steps: list[int] | None = None, skip: int = 0) -> None:
        self.ex, self.depth, self.hiding, self.steps = ex, depth, hiding, steps or [0]
        self.tokens: list[int | str] = []
        self.pos, self.skip = 0, skip

    def fail(self, problem: str) -> TemplateError:
        return self.ex.fail(f"`#if`: {problem}")

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
            cut = (op == "&&" and not left) or (op == "||" and bool(left))  # C skips the right
            self.skip += cut
            left, self.skip = _wrap(self.apply(op, left, self.binary(level + 1))), self.skip - cut
        return left

    def apply(self, op: str, a: int, b: int) -> int:
        if op in ("/", "%") and b == 0 or op in ("<<", ">>") and not 0 <= b < 64:
            if self.skip:
                return 0
            raise self.fail("division by zero" if op in "/%" else f"shift by {b}")
        if op in ("/", "%"):  # C truncates toward zero
            q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
            return q if op == "/" else a - b * q
        return int(_OPS[op](a, b))

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
        value = self.ex.macros.get(name, self.ex.values.get(name, 0))
        if name in ("true", "false") or name in self.hiding:
            return int(name == "true")
        if isinstance(value, numbers.Real):
            if not float(value).is_integer():
                raise self.fail(f"`{name}` is {value}, not an integer")
            return _wrap(int(value))
        if self.depth >= MAX_DEPTH:
            raise self.fail(f"`{name}` nests past {MAX_DEPTH} levels")
        return _Eval(self.ex, self.depth + 1, self.hiding | {name}, self.steps,
                     self.skip).run(str(value))
