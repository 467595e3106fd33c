"""WGSL types sized by WGSL's layout rules: scalars, vectors, matrices, atomics, fixed arrays
and structs (``@align``/``@size`` included), through type aliases.

Workgroup memory is checked against the adapter's limit and zeroed from these sizes, so a
size is either exact or refused (a ValueError saying why), never guessed: array lengths and
attributes are evaluated as WGSL does (``consteval.py``). Each struct and alias is sized
once per module (a struct holding the previous one twice, 40 deep, is 40 sizings, not
2^40), nesting is bounded, and a type past MAX_TYPE_BYTES is refused before it grows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from vajra_tui.engine.wgsl.consteval import ConstEvalError, Value, evaluate
from vajra_tui.engine.wgsl.tokens import (
    ATTR, KEYWORD, Token, match_bracket, semicolons_after, significant_tokens, typed_consts,
)

MAX_TYPE_BYTES = 1 << 20
"""The largest type sized here (1 MiB): no GPU offers more than 64 KB of workgroup memory
through WebGPU or Vulkan, so a larger one is refused as such, whatever the adapter."""

MAX_TYPE_DEPTH = 64
"""Nested arrays, aliases and struct members one type may go through; real kernels use two
or three, and deeper ones would only run Python out of stack."""

_SCALARS = {"f32": (4, 4), "i32": (4, 4), "u32": (4, 4), "bool": (4, 4), "f16": (2, 2)}
_SHORT = {"f": "f32", "i": "i32", "u": "u32", "h": "f16"}


@dataclass(frozen=True, eq=False)
class WType:
    """A sized WGSL type: ``text`` names it in WGSL (aliases resolved). Compared by identity:
    one struct is one object however often it is nested."""

    kind: str  # scalar | vector | matrix | atomic | array | struct
    size: int
    align: int
    text: str
    elem: "WType | None" = None  # array element, atomic's scalar
    count: int = 0  # array length
    members: tuple[tuple[str, "WType"], ...] = ()

    @cached_property
    def constructible(self) -> bool:
        """Has a zero-value constructor ``T()`` (no atomics inside); cached, since a nested
        struct is shared by every member that holds it."""
        if self.kind == "atomic":
            return False
        if self.kind == "array":
            return self.elem is not None and self.elem.constructible
        if self.kind == "struct":
            return all(t.constructible for _, t in self.members)
        return True


@dataclass
class Struct:
    name: str
    members: list[tuple[str, list[Token], dict[str, list[Token]]]]  # name, type tokens, attributes
    line: int


@dataclass
class Module:
    """Module-scope declarations the sizer needs, and each named type once it is sized."""

    structs: dict[str, Struct] = field(default_factory=dict)
    aliases: dict[str, list[Token]] = field(default_factory=dict)
    consts: dict[str, Value | ConstEvalError] = field(default_factory=dict)
    sized: dict[str, WType | ValueError] = field(default_factory=dict)
    sizing: set[str] = field(default_factory=set)  # named types being sized now (a cycle)


def round_up(value: int, to: int) -> int:
    return -(-value // to) * to


def _vector(n: int, scalar: tuple[int, int]) -> tuple[int, int]:
    return n * scalar[0], (2 if n == 2 else 4) * scalar[1]


def split_shifts(toks: list[Token]) -> list[Token]:
    """``>>`` as two ``>`` (it closes two template lists); the evaluator joins them again."""
    out: list[Token] = []
    for t in toks:
        if t.text in (">>", ">>="):
            out += [Token("punct", ">", t.line, t.column, t.offset),
                    Token("punct", t.text[1:], t.line, t.column + 1, t.offset + 1)]
        else:
            out.append(t)
    return out


def attributes(toks: list[Token], i: int, end: int) -> tuple[dict[str, list[Token]], int]:
    """Attributes starting at ``toks[i]`` (``@name`` or ``@name(args)``); returns them and the next index."""
    attrs: dict[str, list[Token]] = {}
    while i < end and toks[i].kind == ATTR and i + 1 < end:
        name = toks[i + 1].text
        i += 2
        args: list[Token] = []
        if i < end and toks[i].text == "(":
            close = match_bracket(toks, i)
            if close < 0:
                break
            args = toks[i + 1:close]
            i = close + 1
        attrs[name] = args
    return attrs, i


def _split_members(toks: list[Token]) -> list[list[Token]]:
    """A struct body split at its top-level commas (template brackets ``<>`` count as nesting)."""
    parts: list[list[Token]] = [[]]
    depth = 0
    for t in toks:
        if t.text in ("(", "[", "<"):
            depth += 1
        elif t.text in (")", "]", ">"):
            depth -= 1
        if t.text == "," and depth == 0:
            parts.append([])
        else:
            parts[-1].append(t)
    return [part for part in parts if part]


def read_module(toks: list[Token], consts: dict[str, Value | ConstEvalError]) -> Module:
    """The structs and aliases of ``toks`` (``>>`` split), with the typed constants."""
    mod = Module(consts=consts)
    semis = semicolons_after(toks)
    depth = 0
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.text in ("{", "}") and t.kind != KEYWORD:
            depth += 1 if t.text == "{" else -1
            i += 1
            continue
        if depth == 0 and t.kind == KEYWORD and t.text == "alias" and i + 2 < len(toks):
            end = semis[i]
            if toks[i + 2].text == "=":
                mod.aliases[toks[i + 1].text] = toks[i + 3:end]
            i = end + 1
            continue
        if depth == 0 and t.kind == KEYWORD and t.text == "struct" and i + 2 < len(toks) \
                and toks[i + 2].text == "{":
            close = match_bracket(toks, i + 2)
            if close < 0:
                break
            members = []
            for part in _split_members(toks[i + 3:close]):
                attrs, k = attributes(part, 0, len(part))
                if k + 1 < len(part) and part[k + 1].text == ":":
                    members.append((part[k].text, part[k + 2:], attrs))
            mod.structs[toks[i + 1].text] = Struct(toks[i + 1].text, members, t.line)
            i = close + 1
            continue
        i += 1
    return mod


def _capped(t: WType) -> WType:
    if t.size > MAX_TYPE_BYTES:
        raise ValueError(f"{t.text[:80]} is {t.size} bytes, over the {MAX_TYPE_BYTES} bytes "
                         "any workgroup memory could hold")
    return t


def _constant(toks: list[Token], mod: Module, what: str) -> int:
    """A positive integer constant (array length, @align, @size), evaluated as WGSL does."""
    text = " ".join(t.text for t in toks)[:80] or "?"
    try:
        value = evaluate(toks, mod.consts).value
    except ConstEvalError as exc:
        raise ValueError(f"cannot evaluate {what} {text}: {exc}") from None
    if value <= 0:
        raise ValueError(f"{what} {text} is {value}: it must be positive")
    return value


class TypeParser:
    """Size, alignment and structure of a WGSL type written as tokens (``>>`` already split)."""

    def __init__(self, toks: list[Token], mod: Module, depth: int = 0) -> None:
        if depth > MAX_TYPE_DEPTH:
            raise ValueError(f"type nested deeper than {MAX_TYPE_DEPTH} levels")
        self.toks, self.mod, self.i, self.depth = toks, mod, 0, depth

    def _next(self) -> str:
        if self.i >= len(self.toks):
            raise ValueError("incomplete type")
        text = self.toks[self.i].text
        self.i += 1
        return text

    def _expect(self, text: str) -> None:
        got = self._next()
        if got != text:
            raise ValueError(f"expected {text!r}, found {got[:40]!r}")

    def _scalar_arg(self) -> str:
        self._expect("<")
        name = self._next()
        if name in self.mod.aliases or name in self.mod.structs:
            inner = self.named(name)
            if inner.kind != "scalar":
                raise ValueError(f"{name} is not a scalar type")
            name = inner.text
        if name not in _SCALARS:
            raise ValueError(f"unknown scalar type {name[:40]}")
        self._expect(">")
        return name

    def parse(self) -> WType:
        name = self._next()
        if name in self.mod.aliases or name in self.mod.structs:  # a module's own names shadow
            return self.named(name)  # the predeclared ones (`alias vec4f = array<...>` is legal)
        if name in _SCALARS:
            size, align = _SCALARS[name]
            return WType("scalar", size, align, name)
        if name == "atomic":
            scalar = self._scalar_arg()
            size, align = _SCALARS[scalar]
            return WType("atomic", size, align, f"atomic<{scalar}>", elem=WType("scalar", size, align, scalar))
        if name.startswith("vec") and len(name) >= 4 and name[3] in "234" and len(name) <= 5:
            n = int(name[3])
            scalar = _SHORT.get(name[4]) if len(name) == 5 else self._scalar_arg()
            if scalar is None:
                raise ValueError(f"unknown type {name}")
            size, align = _vector(n, _SCALARS[scalar])
            return WType("vector", size, align, f"vec{n}<{scalar}>")
        if name.startswith("mat") and len(name) in (6, 7) and name[3] in "234" and name[4] == "x" \
                and name[5] in "234":
            cols, rows = int(name[3]), int(name[5])
            scalar = _SHORT.get(name[6]) if len(name) == 7 else self._scalar_arg()
            if scalar is None:
                raise ValueError(f"unknown type {name}")
            col_size, col_align = _vector(rows, _SCALARS[scalar])
            return WType("matrix", cols * round_up(col_size, col_align), col_align,
                         f"mat{cols}x{rows}<{scalar}>")
        if name == "array":
            return self._array()
        return self.named(name)

    def _array(self) -> WType:
        self._expect("<")
        elem = TypeParser(self.toks[self.i:], self.mod, self.depth + 1)
        element = elem.parse()
        self.i += elem.i
        if self.i < len(self.toks) and self.toks[self.i].text == ">":
            raise ValueError("a runtime-sized array cannot live in workgroup memory")
        self._expect(",")
        depth, start = 0, self.i
        while self.i < len(self.toks) and (depth or self.toks[self.i].text not in (">", ",")):
            depth += {"(": 1, ")": -1}.get(self.toks[self.i].text, 0)
            self.i += 1
        count = _constant(self.toks[start:self.i], self.mod, "the array length")
        if self.i < len(self.toks) and self.toks[self.i].text == ",":
            self.i += 1  # a trailing comma
        self._expect(">")
        stride = round_up(element.size, element.align)
        return _capped(WType("array", count * stride, element.align, f"array<{element.text}, {count}>",
                             elem=element, count=count))

    def named(self, name: str) -> WType:
        """An alias or struct, sized once per module (a failure is remembered too)."""
        done = self.mod.sized.get(name)
        if isinstance(done, ValueError):
            raise done
        if done is not None:
            return done
        if name in self.mod.sizing:
            raise ValueError(f"type {name[:40]} refers to itself")
        self.mod.sizing.add(name)
        try:
            sized = self._alias_or_struct(name)
        except ValueError as exc:
            self.mod.sized[name] = exc
            raise
        finally:
            self.mod.sizing.discard(name)
        self.mod.sized[name] = sized
        return sized

    def _alias_or_struct(self, name: str) -> WType:
        if name in self.mod.aliases:
            return TypeParser(self.mod.aliases[name], self.mod, self.depth + 1).parse_all()
        struct = self.mod.structs.get(name)
        if struct is None:
            raise ValueError(f"unknown type {name[:40]}")
        offset, align, members = 0, 1, []
        for member, toks, attrs in struct.members:
            t = TypeParser(toks, self.mod, self.depth + 1).parse_all()
            m_align, m_size = t.align, t.size
            if "align" in attrs:
                m_align = _constant(attrs["align"], self.mod, f"@align of {name}.{member}")
                if m_align & (m_align - 1):
                    raise ValueError(f"@align of {name}.{member} is {m_align}: it must be a power of two")
            if "size" in attrs:
                m_size = _constant(attrs["size"], self.mod, f"@size of {name}.{member}")
                if m_size < t.size:
                    raise ValueError(f"@size of {name}.{member} is {m_size}, smaller than its "
                                     f"{t.text[:40]} ({t.size} bytes)")
            offset = round_up(offset, m_align) + m_size
            align = max(align, m_align)
            _capped(WType("struct", offset, align, name))
            members.append((member, t))
        if not members:
            raise ValueError(f"struct {name[:40]} has no members")
        return _capped(WType("struct", round_up(offset, align), align, name, members=tuple(members)))

    def parse_all(self) -> WType:
        t = self.parse()
        if self.i != len(self.toks):
            raise ValueError(f"unexpected {self.toks[self.i].text[:40]!r} in a type")
        return t


def type_size(source: str, type_text: str, consts: dict[str, int] | None = None) -> int:
    """Bytes of ``type_text`` as declared in ``source`` (its structs, aliases and constants,
    ``consts`` as the prelude's size constants): what a buffer bound to a declaration of this
    type must hold at least. A ValueError says why a type cannot be sized."""
    toks = split_shifts(significant_tokens(source))
    mod = read_module(toks, typed_consts(toks, consts))
    return TypeParser(split_shifts(significant_tokens(type_text)), mod).parse_all().size
