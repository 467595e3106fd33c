"""Workgroup memory: what a kernel declares, in bytes, and zeroing it before it runs.

wgpu does not refuse a pipeline whose ``var<workgroup>`` data exceeds the
adapter's ``maxComputeWorkgroupStorageSize`` (the WebGPU spec says it must), so
the contract and the GPU worker size every declaration here, by WGSL's layout
rules, through type aliases and structs (``@align``/``@size`` included). A
declaration that cannot be sized is reported as such, never counted as zero.

WebGPU also requires workgroup memory to start zeroed. wgpu-native builds every
pipeline with ``zero_initialize_workgroup_memory: false`` (its C API has no switch
for it), and lavapipe then leaves each workgroup what the previous dispatch wrote:
a kernel could count its dispatches there, or memoize results across them.
:func:`zero_init_source` adds what browsers add: a cooperative zeroing of every
workgroup variable at the top of ``main``, then a barrier.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vajra_tui.engine.wgsl.expr import eval_int, split_args
from vajra_tui.engine.wgsl.tokens import (
    ATTR, KEYWORD, Token, find_entry_point, match_bracket, module_consts, significant_tokens,
    workgroup_size,
)

_SCALARS = {"f32": (4, 4), "i32": (4, 4), "u32": (4, 4), "bool": (4, 4), "f16": (2, 2)}
_SHORT = {"f": "f32", "i": "i32", "u": "u32", "h": "f16"}
ZERO_FN = "vajra_zero_workgroup"
LII = "vajra_lii"


@dataclass(frozen=True)
class WType:
    """A sized WGSL type: ``text`` names it in WGSL (aliases resolved)."""

    kind: str  # scalar | vector | matrix | atomic | array | struct
    size: int
    align: int
    text: str
    elem: "WType | None" = None  # array element, atomic's scalar
    count: int = 0  # array length
    members: tuple[tuple[str, "WType"], ...] = ()

    @property
    def constructible(self) -> bool:
        """Has a zero-value constructor ``T()`` (no atomics inside)."""
        if self.kind == "atomic":
            return False
        if self.kind == "array":
            return self.elem is not None and self.elem.constructible
        if self.kind == "struct":
            return all(t.constructible for _, t in self.members)
        return True


@dataclass
class WorkgroupVar:
    name: str
    bytes: int | None  # None: a type this module cannot size (``problem`` says why)
    line: int
    column: int = 1
    type: WType | None = None
    problem: str = ""
    type_text: str = ""


@dataclass
class _Struct:
    name: str
    members: list[tuple[str, list[Token], dict[str, list[Token]]]]  # name, type tokens, attributes
    line: int


@dataclass
class _Module:
    """Module-scope declarations the sizer needs: structs, aliases and integer constants."""

    structs: dict[str, _Struct] = field(default_factory=dict)
    aliases: dict[str, list[Token]] = field(default_factory=dict)
    consts: dict[str, int] = field(default_factory=dict)


def _round(value: int, to: int) -> int:
    return -(-value // to) * to


def _vector(n: int, scalar: tuple[int, int]) -> tuple[int, int]:
    size = n * scalar[0]
    return size, (2 if n == 2 else 4) * scalar[1]


def _split_shifts(toks: list[Token]) -> list[Token]:
    out: list[Token] = []
    for t in toks:
        if t.text in (">>", ">>="):
            out += [Token("punct", ">", t.line, t.column, t.offset),
                    Token("punct", t.text[1:], t.line, t.column + 1, t.offset + 1)]
        else:
            out.append(t)
    return out


def _attributes(toks: list[Token], i: int, end: int) -> tuple[dict[str, list[Token]], int]:
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


def _module(toks: list[Token], consts: dict[str, int]) -> _Module:
    mod = _Module(consts=consts)
    depth = 0
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.text in ("{", "}") and t.kind != KEYWORD:
            depth += 1 if t.text == "{" else -1
            i += 1
            continue
        if depth == 0 and t.kind == KEYWORD and t.text == "alias" and i + 2 < len(toks):
            end = next((k for k in range(i, len(toks)) if toks[k].text == ";"), len(toks))
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
                attrs, k = _attributes(part, 0, len(part))
                if k + 1 < len(part) and part[k + 1].text == ":":
                    members.append((part[k].text, part[k + 2:], attrs))
            mod.structs[toks[i + 1].text] = _Struct(toks[i + 1].text, members, t.line)
            i = close + 1
            continue
        i += 1
    return mod


class _TypeParser:
    """Size, alignment and structure of a WGSL type written as tokens (``>>`` already split)."""

    def __init__(self, toks: list[Token], mod: _Module, seen: frozenset[str] = frozenset()) -> None:
        self.toks, self.mod, self.i, self.seen = toks, mod, 0, seen

    def _next(self) -> str:
        if self.i >= len(self.toks):
            raise ValueError("incomplete type")
        text = self.toks[self.i].text
        self.i += 1
        return text

    def _expect(self, text: str) -> None:
        got = self._next()
        if got != text:
            raise ValueError(f"expected {text!r}, found {got!r}")

    def _scalar_arg(self) -> str:
        self._expect("<")
        name = self._next()
        if name in self.mod.aliases:
            inner = self._named(name)
            if inner.kind != "scalar":
                raise ValueError(f"{name} is not a scalar type")
            name = inner.text
        if name not in _SCALARS:
            raise ValueError(f"unknown scalar type {name}")
        self._expect(">")
        return name

    def parse(self) -> WType:
        name = self._next()
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
            return WType("matrix", cols * _round(col_size, col_align), col_align,
                         f"mat{cols}x{rows}<{scalar}>")
        if name == "array":
            self._expect("<")
            elem = self.parse()
            if self.i < len(self.toks) and self.toks[self.i].text == ">":
                raise ValueError("a runtime-sized array cannot live in workgroup memory")
            self._expect(",")
            depth, start = 0, self.i
            while self.i < len(self.toks) and (depth or self.toks[self.i].text not in (">", ",")):
                depth += {"(": 1, ")": -1}.get(self.toks[self.i].text, 0)
                self.i += 1
            count = eval_int(self.toks[start:self.i], self.mod.consts)
            if self.i < len(self.toks) and self.toks[self.i].text == ",":
                self.i += 1  # a trailing comma
            self._expect(">")
            if count is None:
                length = " ".join(t.text for t in self.toks[start:self.i - 1]) or "?"
                raise ValueError(f"cannot evaluate the array length {length}")
            if count <= 0:
                raise ValueError(f"array length {count}")
            stride = _round(elem.size, elem.align)
            return WType("array", count * stride, elem.align, f"array<{elem.text}, {count}>",
                         elem=elem, count=count)
        return self._named(name)

    def _named(self, name: str) -> WType:
        if name in self.seen:
            raise ValueError(f"type {name} refers to itself")
        seen = self.seen | {name}
        if name in self.mod.aliases:
            return _TypeParser(self.mod.aliases[name], self.mod, seen).parse_all()
        struct = self.mod.structs.get(name)
        if struct is None:
            raise ValueError(f"unknown type {name}")
        offset, align, members = 0, 1, []
        for member, toks, attrs in struct.members:
            t = _TypeParser(toks, self.mod, seen).parse_all()
            m_align, m_size = t.align, t.size
            if "align" in attrs:
                value = eval_int(attrs["align"], self.mod.consts)
                if value is None:
                    raise ValueError(f"cannot evaluate @align of {name}.{member}")
                m_align = value
            if "size" in attrs:
                value = eval_int(attrs["size"], self.mod.consts)
                if value is None:
                    raise ValueError(f"cannot evaluate @size of {name}.{member}")
                m_size = value
            offset = _round(offset, m_align) + m_size
            align = max(align, m_align)
            members.append((member, t))
        if not members:
            raise ValueError(f"struct {name} has no members")
        return WType("struct", _round(offset, align), align, name, members=tuple(members))

    def parse_all(self) -> WType:
        t = self.parse()
        if self.i != len(self.toks):
            raise ValueError(f"unexpected {self.toks[self.i].text!r} in a type")
        return t


def workgroup_vars(src: str, consts: dict[str, int] | None = None) -> list[WorkgroupVar]:
    """Every module-scope ``var<workgroup>`` with its size (WebGPU counts each rounded up to 16)."""
    toks = _split_shifts(significant_tokens(src))
    mod = _module(toks, module_consts(src, consts))
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
        var = WorkgroupVar(name=name, bytes=None, line=t.line, column=t.column)
        if colon < 0:
            var.problem = "has no type"
        else:
            var.type_text = src[toks[colon + 1].offset:toks[end - 1].end] if end > colon + 1 else ""
            try:
                var.type = _TypeParser(toks[colon + 1:end], mod).parse_all()
                var.bytes = _round(var.type.size, 16)
            except (ValueError, IndexError, KeyError, RecursionError) as exc:
                var.problem = str(exc) or exc.__class__.__name__
        found.append(var)
    return found


def workgroup_memory_problem(src: str, limit: int | None,
                             consts: dict[str, int] | None = None) -> tuple[str, int, int] | None:
    """(message, line, column) when the declared workgroup memory is over ``limit`` or unsizable.

    ``consts``: the values the pipeline gives the kernel's ``override``s (arrays may be sized by them).
    """
    found = workgroup_vars(src, consts)
    for var in found:
        if var.bytes is None:
            return (f"cannot size workgroup variable `{var.name}` ({var.problem}): a kernel whose "
                    "workgroup memory cannot be checked against the adapter's limit is not run",
                    var.line, var.column)
    total = sum(v.bytes or 0 for v in found)
    if limit is not None and total > limit:
        return (f"workgroup storage of {total} bytes exceeds the adapter's limit of {limit} bytes "
                "(max-compute-workgroup-storage-size)", found[0].line, found[0].column)
    return None


# ---- zero initialisation ---------------------------------------------------------
def _zero_lines(expr: str, t: WType, strided: bool, start: str, stride: int, depth: int,
                out: list[str], indent: str) -> None:
    """Statements that zero ``expr`` (of type ``t``); the outermost array is split over invocations."""
    if strided and t.constructible:
        out.append(f"{indent}{expr} = {t.text}();")
        return
    if t.kind == "atomic":
        out.append(f"{indent}atomicStore(&{expr}, 0);" if strided else
                   f"{indent}if (lii == 0u) {{ atomicStore(&{expr}, 0); }}")
        return
    if t.kind in ("scalar", "vector", "matrix") or (t.kind == "struct" and t.constructible and not strided
                                                    and not any(m.kind == "array" for _, m in t.members)):
        out.append(f"{indent}{expr} = {t.text}();" if strided else
                   f"{indent}if (lii == 0u) {{ {expr} = {t.text}(); }}")
        return
    if t.kind == "array":
        assert t.elem is not None
        i = f"vajra_i{depth}"
        if strided:
            out.append(f"{indent}for (var {i} = 0u; {i} < {t.count}u; {i} = {i} + 1u) {{")
        else:
            out.append(f"{indent}for (var {i} = {start}; {i} < {t.count}u; {i} = {i} + {stride}u) {{")
        _zero_lines(f"{expr}[{i}]", t.elem, True, start, stride, depth + 1, out, indent + "    ")
        out.append(f"{indent}}}")
        return
    if t.kind == "struct":
        for member, mt in t.members:
            _zero_lines(f"{expr}.{member}", mt, strided, start, stride, depth + 1, out, indent)
        return
    raise ValueError(f"cannot zero a {t.kind}")


def _invocation_index(toks: list[Token], src: str, entry, mod: _Module) -> str | None:
    """How ``main`` already names its local_invocation_index (a parameter or a struct member)."""
    close = match_bracket(toks, entry.params_open)
    for param in split_args(toks[entry.params_open + 1:close]):
        attrs, k = _attributes(param, 0, len(param))
        if k + 1 >= len(param) or param[k + 1].text != ":":
            continue
        name = param[k].text
        builtin = attrs.get("builtin")
        if builtin and builtin[0].text == "local_invocation_index":
            return name
        type_name = param[k + 2].text if k + 2 < len(param) else ""
        struct = mod.structs.get(type_name)
        if struct is not None:
            for member, _toks, m_attrs in struct.members:
                b = m_attrs.get("builtin")
                if b and b[0].text == "local_invocation_index":
                    return f"{name}.{member}"
    return None


def zero_init_source(src: str, consts: dict[str, int] | None = None) -> str:
    """``src`` with every workgroup variable zeroed at the top of ``main`` (WebGPU's rule).

    Invocations share the work (a strided loop over the outermost array), then
    ``workgroupBarrier()``. Only the line of ``main``'s opening brace (and of its
    parameter list, when ``local_invocation_index`` has to be added) changes, so
    compiler messages keep their line numbers. Returns ``src`` unchanged when
    there is no workgroup memory; raises ValueError when it cannot be zeroed. ``consts``: the
    pipeline's override values, which may size arrays and the workgroup.
    """
    found = workgroup_vars(src, consts)
    if not found:
        return src
    for var in found:
        if var.type is None:
            raise ValueError(f"cannot size workgroup variable `{var.name}` ({var.problem})")
    toks = _split_shifts(significant_tokens(src))
    entry = find_entry_point(toks)
    if entry is None:
        raise ValueError("no @compute entry point named `main`")
    mod = _module(toks, module_consts(src, consts))
    wg = workgroup_size(src, consts)
    total = wg[0] * wg[1] * wg[2] if wg else None
    lii = _invocation_index(toks, src, entry, mod)
    start, stride = ("lii", total) if total else ("0u", 1)
    body: list[str] = []
    for var in found:
        assert var.type is not None
        _zero_lines(var.name, var.type, False, start, stride, 0, body, "    ")
    if not total:  # an unknown workgroup size: one invocation zeroes everything
        body = ["    if (lii == 0u) {", *("    " + line for line in body), "    }"]
    helper = (f"\n\n// Added by Vajra where the runtime does not: WebGPU zeroes workgroup memory.\n"
              f"fn {ZERO_FN}(lii: u32) {{\n" + "\n".join(body) + "\n    workgroupBarrier();\n}\n")
    params_open, body_open = toks[entry.params_open], toks[entry.body_open]
    out = src[:body_open.end] + f" {ZERO_FN}({lii or LII});" + src[body_open.end:]
    if lii is None:
        added = f"@builtin(local_invocation_index) {LII}: u32, "
        out = out[:params_open.end] + added + out[params_open.end:]
    return out.rstrip("\n") + helper
