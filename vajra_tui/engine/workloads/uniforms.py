"""A workload's uniform params struct, packed into bytes exactly as WGSL lays it out.

A ``Binding(access="uniform", fields=...)`` names the members of the kernel's own
``var<uniform> params: Params;`` struct; the GPU worker must hand it a buffer whose bytes sit
where the WGSL compiler reads them, or the kernel silently computes with garbage. So the
layout follows the WGSL spec's AlignOf/SizeOf table, with the ``uniform`` address space's
extra rules: a struct's alignment is rounded up to 16, and an array's element stride must be a
multiple of 16. WGSL rejects a smaller stride rather than padding it, so ``array<f32, n>`` or
``array<vec2<f32>, n>`` is refused here too (pack the values four to a ``vec4<f32>`` element).
Member attributes (``@align``/``@size``) are not supported: only the default rules are.
"""

from __future__ import annotations

import numbers
import re
import struct
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from vajra_tui.engine.wgsl.lexer import ATTR, KEYWORD, KEYWORDS, Token, significant_tokens
from vajra_tui.engine.wgsl.primitives import match_bracket

Field = tuple[str, str]

MAX_ARRAY = 65536
MAX_UNIFORM_BYTES = 65536
"""WebGPU's default ``maxUniformBufferBindingSize``: a larger struct cannot be bound at all."""

_WANT = "want f32, i32, u32, f16, vecN<T>, matCxR<f32>, array<T, n>"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SCALARS = {"f32": ("<f", 4), "i32": ("<i", 4), "u32": ("<I", 4), "f16": ("<e", 2)}
_SHORT = {"f": "f32", "i": "i32", "u": "u32", "h": "f16"}
_VEC = re.compile(r"vec([234])(?:<(\w+)>|([fiuh]))")
_MAT = re.compile(r"mat([234])x([234])(?:<(\w+)>|([fh]))")
_COUNT = re.compile(r"([1-9][0-9]{0,5})[iu]?")


class UniformError(ValueError):
    """A uniform struct or its values that Vajra cannot lay out (one line, naming the field)."""


class WgslType(NamedTuple):
    """A parsed member type: kind is scalar/vec/mat/array; n is a vector's width, a matrix's
    rows or an array's count; cols is a matrix's column count; elem an array's element."""

    kind: str
    scalar: str
    n: int = 1
    cols: int = 1
    elem: WgslType | None = None
    align: int = 4
    size: int = 4


def _scalar_type(s: str) -> WgslType | None:
    if s not in _SCALARS:
        return None
    width = _SCALARS[s][1]
    return WgslType("scalar", s, align=width, size=width)


def _vec_type(n: int, s: str) -> WgslType:
    width = _SCALARS[s][1]
    return WgslType("vec", s, n, align=width * (2 if n == 2 else 4), size=width * n)


def _parse(text: str, where: str) -> WgslType:
    """The type of ``text`` (whitespace free), or a UniformError naming ``where``."""
    bad = UniformError(f"{where}: type {text!r} is not a WGSL type ({_WANT})")
    if (t := _scalar_type(text)) is not None:
        return t
    if m := _VEC.fullmatch(text):
        s = m[2] or _SHORT[m[3]]
        if s not in _SCALARS:
            raise bad
        return _vec_type(int(m[1]), s)
    if m := _MAT.fullmatch(text):
        s = m[3] or _SHORT[m[4]]
        if s not in ("f32", "f16"):
            raise bad
        col = _vec_type(int(m[2]), s)
        return WgslType("mat", s, int(m[2]), int(m[1]), align=col.align, size=int(m[1]) * col.align)
    if text.startswith("array<") and text.endswith(">") and "," in text:
        inner, _, count = text[6:-1].rpartition(",")
        if not (m := _COUNT.fullmatch(count)) or int(m[1]) > MAX_ARRAY:
            raise UniformError(f"{where}: {text!r}: an array's count must be an integer literal "
                               f"from 1 to {MAX_ARRAY}")
        elem = _parse(inner, where)
        stride = -(-elem.size // elem.align) * elem.align
        if stride % 16:
            raise UniformError(f"{where}: {text!r} has a {stride}-byte element stride; a uniform "
                               "array's stride must be a multiple of 16 (use array<vec4<f32>, n>)")
        return WgslType("array", elem.scalar, int(m[1]), elem=elem, align=max(16, elem.align),
                        size=int(m[1]) * stride)
    raise bad


def _parse_member(text: str, where: str) -> WgslType:
    if "@" in text:
        raise UniformError(f"{where}: type {text!r} carries an attribute; Vajra lays out uniforms "
                           "by the default rules only (drop @align/@size, add explicit members)")
    return _parse("".join(str(text).split()), where)


def _members(prefix: str, fields: Sequence[Field]) -> tuple[list[tuple[str, str, WgslType, int]], int]:
    """Each member with its parsed type and offset, and the struct's size: checks as it goes."""
    if isinstance(fields, (str, bytes)) or not isinstance(fields, Sequence) or not fields:
        raise UniformError(f"{prefix}: fields must be a non-empty list of (name, WGSL type) pairs")
    out, seen, end, align = [], set(), 0, 16
    for i, item in enumerate(fields):
        if not (isinstance(item, (tuple, list)) and len(item) == 2 and all(isinstance(x, str) for x in item)):
            raise UniformError(f"{prefix}: field {i} is {item!r}, not a (name, WGSL type) pair of strings")
        name, text = item
        where = f"{prefix}: field {name!r}"
        if not _IDENT.fullmatch(name) or name == "_" or name.startswith("__") or name in KEYWORDS:
            raise UniformError(f"{where}: not a WGSL identifier")
        if name in seen:
            raise UniformError(f"{where}: declared twice")
        seen.add(name)
        t = _parse_member(text, where)
        offset = -(-end // t.align) * t.align
        out.append((name, text.strip(), t, offset))
        end, align = offset + t.size, max(align, t.align)
    size = -(-end // align) * align
    if size > MAX_UNIFORM_BYTES:
        raise UniformError(f"{prefix}: the struct is {size} bytes, over the {MAX_UNIFORM_BYTES} "
                           "a uniform buffer binding holds")
    return out, size


def check_fields(binding_name: str, fields: Sequence[Field]) -> None:
    """Refuse (one line, naming the field) a struct this module cannot lay out as WGSL does."""
    _members(f"uniform {binding_name}", fields)


def layout(fields: Sequence[Field]) -> list[tuple[str, str, int, int]]:
    """(name, type, offset, size) of each member, by the uniform address space's rules."""
    members, _ = _members("uniform struct", fields)
    return [(name, text, offset, t.size) for name, text, t, offset in members]


def struct_size(fields: Sequence[Field]) -> int:
    """The struct's SizeOf in the uniform address space (a multiple of 16: the buffer's size)."""
    return _members("uniform struct", fields)[1]


def pack(binding_name: str, fields: Sequence[Field], values: Mapping[str, Any]) -> bytes:
    """The buffer's bytes: each member's value at its offset, every padding byte zero."""
    prefix = f"uniform {binding_name}"
    members, size = _members(prefix, fields)
    if not isinstance(values, Mapping):
        raise UniformError(f"{prefix}: values must be a mapping of member name to value, "
                           f"not {type(values).__name__}")
    names = [m[0] for m in members]
    if extra := [k for k in values if k not in names]:
        raise UniformError(f"{prefix}: values gives {extra[0]!r}, which is not one of its fields "
                           f"({', '.join(names)}): a misspelt name in fields= or in values=?")
    buf = bytearray(-(-size // 16) * 16)
    for name, _, t, offset in members:
        if name not in values:
            raise UniformError(f"{prefix}: field {name!r}: no value given")
        _write(t, values[name], buf, offset, f"{prefix}: field {name!r}")
    return bytes(buf)


def _write(t: WgslType, value: Any, buf: bytearray, offset: int, where: str) -> None:
    """Write ``value`` as type ``t`` at ``offset``: vectors component by component, matrices
    column by column (each column at its vector's alignment), arrays element by stride."""
    if t.kind == "scalar":
        fmt = _SCALARS[t.scalar][0]
        struct.pack_into(fmt, buf, offset, _number(t.scalar, value, where))
    elif t.kind == "vec":
        width = _SCALARS[t.scalar][1]
        for i, v in enumerate(_items(value, t.n, where)):
            _write(WgslType("scalar", t.scalar), v, buf, offset + i * width, f"{where}[{i}]")
    elif t.kind == "mat":
        col = _vec_type(t.n, t.scalar)
        for c, column in enumerate(_columns(value, t.cols, t.n, where)):
            _write(col, column, buf, offset + c * col.align, f"{where}[{c}]")
    else:
        assert t.elem is not None
        stride = t.size // t.n
        for i, v in enumerate(_items(value, t.n, where)):
            _write(t.elem, v, buf, offset + i * stride, f"{where}[{i}]")


def _plain(value: Any) -> Any:
    """A numpy scalar or 0-d array as the Python number it holds (others unchanged)."""
    if getattr(value, "ndim", None) == 0 and hasattr(value, "item"):
        return value.item()
    return value


def _number(scalar: str, value: Any, where: str) -> int | float:
    """``value`` as a ``scalar``, range checked: integers must be integers (a float is refused
    rather than truncated); floats may be inf or nan but not past the type's finite range."""
    v = _plain(value)
    got = f"got {v!r} ({type(v).__name__})"
    if scalar in ("u32", "i32"):
        if not isinstance(v, numbers.Integral):
            raise UniformError(f"{where}: want an integer for a {scalar}, {got}")
        lo, hi = (0, 2**32 - 1) if scalar == "u32" else (-(2**31), 2**31 - 1)
        if not lo <= int(v) <= hi:
            raise UniformError(f"{where}: {int(v)} is out of {scalar} range ({lo}..{hi})")
        return int(v)
    if not isinstance(v, numbers.Real):
        raise UniformError(f"{where}: want a number for a {scalar}, {got}")
    try:
        struct.pack(_SCALARS[scalar][0], float(v))
    except (OverflowError, struct.error):
        raise UniformError(f"{where}: {float(v)!r} is out of {scalar} range") from None
    return float(v)


def _items(value: Any, n: int, where: str) -> list[Any]:
    """``value`` as a list of exactly ``n`` items (a sequence or a numpy array)."""
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__len__") or _plain(value) is not value:
        raise UniformError(f"{where}: want a sequence of {n} values, got {type(value).__name__}")
    items = list(value)
    if len(items) != n:
        raise UniformError(f"{where}: want {n} values, got {len(items)}")
    return items


def _columns(value: Any, cols: int, rows: int, where: str) -> list[Any]:
    """A matrix's columns, from a list of ``cols`` columns or ``cols*rows`` column-major values."""
    if not isinstance(value, (str, bytes, Mapping)) and hasattr(value, "__len__") and _plain(value) is value:
        items = list(value)
        if len(items) == cols * rows:
            return [items[c * rows:(c + 1) * rows] for c in range(cols)]
        if len(items) == cols:
            return items
    raise UniformError(f"{where}: want {cols} columns of {rows} values, or {cols * rows} values "
                       "in column-major order")


def struct_wgsl(struct_name: str, fields: Sequence[Field]) -> str:
    """``struct Name { a: u32, ... }``: what the prelude declares when the kernel does not."""
    if not _IDENT.fullmatch(struct_name) or struct_name.startswith("__") or struct_name in KEYWORDS:
        raise UniformError(f"uniform struct {struct_name!r}: not a WGSL identifier")
    members, _ = _members(f"uniform struct {struct_name!r}", fields)
    body = "".join(f"    {name}: {text},\n" for name, text, _, _ in members)
    return f"struct {struct_name} {{\n{body}}}"


def read_struct(source: str, struct_name: str) -> list[Field] | None:
    """The members of module-scope ``struct Name { ... }`` in ``source``, None when absent.

    Read from the lexer's tokens, so comments and look-alike text are ignored. A member's
    attributes stay in its type text (``"@align(16) vec4<f32>"``) so that check_fields refuses
    it by name instead of the layout silently disagreeing with the kernel's.
    """
    toks = significant_tokens(source)
    depth = 0
    for i, t in enumerate(toks):
        if t.text in ("{", "}"):
            depth += 1 if t.text == "{" else -1
        elif (depth == 0 and t.kind == KEYWORD and t.text == "struct" and i + 2 < len(toks)
              and toks[i + 1].text == struct_name and toks[i + 2].text == "{"):
            close = match_bracket(toks, i + 2)
            if close < 0:
                raise UniformError(f"struct {struct_name!r} (line {t.line}): its body is not closed")
            return _read_members(toks[i + 3:close], struct_name)
    return None


def _read_members(toks: list[Token], struct_name: str) -> list[Field]:
    """Split a struct body into (name, type text) pairs: a member ends at a ``,`` outside brackets."""
    out: list[Field] = []
    j = 0
    while j < len(toks):
        attrs = []
        while j < len(toks) and toks[j].kind == ATTR and j + 1 < len(toks):
            end = match_bracket(toks, j + 2) if j + 2 < len(toks) and toks[j + 2].text == "(" else j + 1
            attrs.append("@" + _joined(toks[j + 1:end + 1]))
            j = end + 1
        if j + 1 >= len(toks) or toks[j + 1].text != ":":
            line = toks[min(j, len(toks) - 1)].line
            raise UniformError(f"struct {struct_name!r} (line {line}): want `name: type` for each member")
        name, k, angle = toks[j].text, j + 2, 0
        while k < len(toks) and not (angle <= 0 and toks[k].text == ","):
            angle += {"<": 1, ">": -1, ">>": -2}.get(toks[k].text, 0)
            k += 1
        out.append((name, " ".join([*attrs, _joined(toks[j + 2:k])])))
        j = k + 1
    return out


def _joined(toks: list[Token]) -> str:
    """Tokens as compact type text: ``array<vec4<f32>, 4>``."""
    return "".join(t.text + (" " if t.text == "," else "") for t in toks).strip()
