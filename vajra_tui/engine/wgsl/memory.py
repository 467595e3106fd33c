"""Workgroup memory a kernel declares, in bytes, by WGSL's layout rules.

wgpu does not refuse a pipeline whose ``var<workgroup>`` data exceeds the
adapter's ``maxComputeWorkgroupStorageSize`` (the WebGPU spec says it must), so
the contract checks it here before anything runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from .expr import eval_int
from .tokens import KEYWORD, Token, module_consts, significant, tokenize

_SCALARS = {"f32": (4, 4), "i32": (4, 4), "u32": (4, 4), "bool": (4, 4), "f16": (2, 2)}
_SHORT = {"f": "f32", "i": "i32", "u": "u32", "h": "f16"}


@dataclass
class WorkgroupVar:
    name: str
    bytes: int | None  # None: a type this module cannot size (a struct, say)
    line: int


def _round(value: int, to: int) -> int:
    return -(-value // to) * to


def _vector(n: int, scalar: tuple[int, int]) -> tuple[int, int]:
    size = n * scalar[0]
    return size, (2 if n == 2 else 4) * scalar[1]


class _TypeParser:
    """Size and alignment of a WGSL type written as tokens (``>>`` already split)."""

    def __init__(self, toks: list[Token], consts: dict[str, int]) -> None:
        self.toks, self.consts, self.i = toks, consts, 0

    def _next(self) -> str:
        text = self.toks[self.i].text
        self.i += 1
        return text

    def _expect(self, text: str) -> None:
        if self._next() != text:
            raise ValueError(text)

    def parse(self) -> tuple[int, int]:
        name = self._next()
        if name in _SCALARS:
            return _SCALARS[name]
        if name == "atomic":
            self._expect("<")
            inner = self.parse()
            self._expect(">")
            return inner
        if name.startswith("vec") and len(name) >= 4 and name[3] in "234":
            n = int(name[3])
            if len(name) == 5 and name[4] in _SHORT:
                return _vector(n, _SCALARS[_SHORT[name[4]]])
            self._expect("<")
            scalar = self.parse()
            self._expect(">")
            return _vector(n, scalar)
        if name.startswith("mat") and len(name) >= 6:
            cols, rows = int(name[3]), int(name[5])
            scalar = _SCALARS[_SHORT[name[6]]] if len(name) == 7 else None
            if scalar is None:
                self._expect("<")
                scalar = self.parse()
                self._expect(">")
            col_size, col_align = _vector(rows, scalar)
            return cols * _round(col_size, col_align), col_align
        if name == "array":
            self._expect("<")
            size, align = self.parse()
            self._expect(",")
            depth, start = 0, self.i
            while depth or self.toks[self.i].text != ">":
                depth += {"(": 1, ")": -1}.get(self.toks[self.i].text, 0)
                self.i += 1
            count = eval_int(self.toks[start:self.i], self.consts)
            self._expect(">")
            if count is None:
                raise ValueError("array length")
            return count * _round(size, align), align
        raise ValueError(name)


def _split_shifts(toks: list[Token]) -> list[Token]:
    out: list[Token] = []
    for t in toks:
        if t.text in (">>", ">>="):
            out += [Token("punct", ">", t.line, t.column, t.offset),
                     Token("punct", t.text[1:], t.line, t.column + 1, t.offset + 1)]
        else:
            out.append(t)
    return out


def workgroup_vars(src: str, consts: dict[str, int] | None = None) -> list[WorkgroupVar]:
    """Every module-scope ``var<workgroup>`` with its size (WebGPU counts each rounded up to 16)."""
    toks = _split_shifts(significant(tokenize(src)))
    known = {**module_consts(src), **(consts or {})}
    found, depth = [], 0
    for i, t in enumerate(toks):
        if t.text in ("{", "}"):
            depth += 1 if t.text == "{" else -1
            continue
        if depth or t.kind != KEYWORD or t.text != "var" or i + 4 >= len(toks):
            continue
        if [x.text for x in toks[i + 1:i + 4]] != ["<", "workgroup", ">"]:
            continue
        name = toks[i + 4].text
        end = next((k for k in range(i, len(toks)) if toks[k].text == ";"), len(toks))
        colon = next((k for k in range(i, end) if toks[k].text == ":"), -1)
        size = None
        if colon > 0:
            try:
                size = _round(_TypeParser(toks[colon + 1:end] + toks[end:end + 1], known).parse()[0], 16)
            except (ValueError, IndexError, KeyError):
                size = None
        found.append(WorkgroupVar(name=name, bytes=size, line=t.line))
    return found
