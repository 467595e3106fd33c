"""Workgroup memory: what a kernel declares, in bytes, and zeroing it before it runs.

wgpu does not refuse a pipeline whose ``var<workgroup>`` data exceeds the
adapter's ``maxComputeWorkgroupStorageSize`` (the WebGPU spec says it must), so
the contract and the GPU worker size every declaration here, by WGSL's layout
rules, through type aliases and structs (``@align``/``@size`` included). A
declaration that cannot be sized is reported as such, never counted as zero. As in
WebGPU, each entry point counts the variables it uses (itself or through the functions
it calls), so the passes of one module are held to the limit one at a time.

WebGPU also requires workgroup memory to start zeroed. wgpu-native builds every
pipeline with ``zero_initialize_workgroup_memory: false`` (its C API has no switch
for it), and lavapipe then leaves each workgroup what the previous dispatch wrote:
a kernel could count its dispatches there, or memoize results across them.
:func:`zero_init_source` adds what browsers add: a cooperative zeroing of every
workgroup variable the entry point uses, at its top, then a barrier.
"""

from __future__ import annotations

from dataclasses import dataclass

from vajra_tui.engine.wgsl.consteval import ConstEvalError
from vajra_tui.engine.wgsl.expr import split_args
from vajra_tui.engine.wgsl.layout import (  # noqa: F401 - WType is part of this module's interface
    Module, TypeParser, WType, attributes, read_module, round_up, split_shifts,
)
from vajra_tui.engine.wgsl.tokens import (
    IDENT, KEYWORD, FunctionSpan, Token, find_entry_point, find_functions, match_bracket, read_workgroup_size,
    semicolons_after, significant_tokens, typed_consts,
)

ZERO_FN = "vajra_zero_workgroup"
MAX_TYPE_TOKENS = 4096
"""Tokens one ``var<workgroup>`` type may have (real ones have a dozen): each declaration's
type is read once, so a file of unfinished declarations stays linear."""
LII = "vajra_lii"


@dataclass
class WorkgroupVar:
    name: str
    bytes: int | None  # None: a type this module cannot size (``problem`` says why)
    line: int
    column: int = 1
    type: WType | None = None
    problem: str = ""
    type_text: str = ""


def names_reached(toks: list[Token], entry: str,
                  functions: dict[str, FunctionSpan] | None = None) -> set[str] | None:
    """Every identifier that entry point ``entry`` names, itself or through the functions it
    calls (WGSL has no recursion, so the call graph is a tree to walk); None without ``entry``.

    A pipeline holds the workgroup variables its entry point uses statically, not the
    module's: two passes of one module may each use a large array of its own.
    ``functions``: the module's functions by name, when the caller has found them already.
    """
    functions = functions if functions is not None else {f.name: f for f in find_functions(toks)}
    if entry not in functions:
        return None
    names: set[str] = set()
    todo, seen = [entry], {entry}
    while todo:
        f = functions[todo.pop()]
        for t in toks[f.params_open:f.body_close + 1]:
            if t.kind != IDENT:
                continue
            names.add(t.text)
            if t.text in functions and t.text not in seen:
                seen.add(t.text)
                todo.append(t.text)
    return names


def _declared(src: str, consts: dict[str, int] | None) -> tuple[list[Token], list[WorkgroupVar]]:
    """The module's tokens and every module-scope ``var<workgroup>`` with its size (WebGPU
    counts each rounded up to 16), read once for all the entry points asked about."""
    toks = split_shifts(significant_tokens(src))
    mod = read_module(toks, typed_consts(src, consts))
    found, depth = [], 0
    semis = semicolons_after(toks)
    for i, t in enumerate(toks):
        if t.text in ("{", "}"):
            depth += 1 if t.text == "{" else -1
            continue
        if depth or t.kind != KEYWORD or t.text != "var" or i + 4 >= len(toks):
            continue
        if [x.text for x in toks[i + 1:i + 4]] != ["<", "workgroup", ">"]:
            continue
        name = toks[i + 4].text
        end = semis[i]
        colon = next((k for k in range(i, min(end, i + 8)) if toks[k].text == ":"), -1)
        var = WorkgroupVar(name=name, bytes=None, line=t.line, column=t.column)
        if colon < 0:
            var.problem = "has no type"
        else:
            var.type_text = src[toks[colon + 1].offset:toks[end - 1].end] \
                if colon + 1 < end <= colon + MAX_TYPE_TOKENS else ""
            try:
                if end - colon > MAX_TYPE_TOKENS:
                    raise ValueError(f"a type of {end - colon - 1} tokens, over the {MAX_TYPE_TOKENS} "
                                     "this front end reads")
                var.type = TypeParser(toks[colon + 1:end], mod).parse_all()
                var.bytes = round_up(var.type.size, 16)
            except (ValueError, IndexError, KeyError, RecursionError) as exc:
                var.problem = str(exc) or exc.__class__.__name__
        found.append(var)
    return toks, found


def _used(toks: list[Token], found: list[WorkgroupVar], entry: str,
          functions: dict[str, FunctionSpan] | None = None) -> list[WorkgroupVar]:
    """The variables of ``found`` that ``entry`` uses (all when the module has no such entry)."""
    reached = names_reached(toks, entry, functions)
    return found if reached is None else [v for v in found if v.name in reached]


def workgroup_vars(src: str, consts: dict[str, int] | None = None, entry: str = "") -> list[WorkgroupVar]:
    """Every module-scope ``var<workgroup>`` with its size (WebGPU counts each rounded up to 16);
    with ``entry``, only those that entry point uses (all when the module has no such entry)."""
    toks, found = _declared(src, consts)
    return _used(toks, found, entry) if entry else found


def _per_entry(toks: list[Token], found: list[WorkgroupVar]) -> list[tuple[str, list[WorkgroupVar]]]:
    functions = {f.name: f for f in find_functions(toks)}
    entries = [name for name, f in functions.items() if "compute" in f.attributes]
    if not entries:
        return [("", found)]
    return [(name, _used(toks, found, name, functions)) for name in entries]


def entry_storage(src: str, consts: dict[str, int] | None = None) -> list[tuple[str, list[WorkgroupVar]]]:
    """(entry point, the workgroup variables it uses) for each ``@compute`` entry; one unnamed
    entry holding every variable when the module declares none (a body not yet stitched)."""
    return _per_entry(*_declared(src, consts))


def workgroup_memory_problem(src: str, limit: int | None, consts: dict[str, int] | None = None,
                             entry: str = "") -> tuple[str, int, int] | None:
    """(message, line, column) when an entry point's workgroup memory is over ``limit``, or when
    a declaration cannot be sized. Each entry point counts what it uses (``entry``: that one only).

    ``consts``: the values the pipeline gives the kernel's ``override``s (arrays may be sized by them).
    """
    toks, every = _declared(src, consts)
    for var in every:
        if var.bytes is None:
            return (f"cannot size workgroup variable `{var.name}` ({var.problem}): a kernel whose "
                    "workgroup memory cannot be checked against the adapter's limit is not run",
                    var.line, var.column)
    per_entry = [(entry, _used(toks, every, entry))] if entry else _per_entry(toks, every)
    for name, found in per_entry:
        total = sum(v.bytes or 0 for v in found)
        if limit is not None and total > limit:
            where = f" in entry point `{name}`" if name and len(per_entry) > 1 or entry else ""
            return (f"workgroup storage of {total} bytes{where} exceeds the adapter's limit of {limit} bytes "
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


def _invocation_index(toks: list[Token], src: str, entry, mod: Module) -> str | None:
    """How ``main`` already names its local_invocation_index (a parameter or a struct member)."""
    close = match_bracket(toks, entry.params_open)
    for param in split_args(toks[entry.params_open + 1:close]):
        attrs, k = attributes(param, 0, len(param))
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


def zero_init_source(src: str, consts: dict[str, int] | None = None, entry_name: str = "main") -> str:
    """``src`` with every workgroup variable that ``entry_name`` uses zeroed at its top (WebGPU's
    rule); the others stay out of that pipeline, as they would without the zeroing.

    Invocations share the work (a strided loop over the outermost array), then
    ``workgroupBarrier()``. Only the line of ``main``'s opening brace (and of its
    parameter list, when ``local_invocation_index`` has to be added) changes, so
    compiler messages keep their line numbers. Returns ``src`` unchanged when
    there is no workgroup memory; raises ValueError when it cannot be zeroed. ``consts``: the
    pipeline's override values, which may size arrays and the workgroup.
    """
    found = workgroup_vars(src, consts, entry_name)
    if not found:
        return src
    for var in found:
        if var.type is None:
            raise ValueError(f"cannot size workgroup variable `{var.name}` ({var.problem})")
    toks = split_shifts(significant_tokens(src))
    entry = find_entry_point(toks, entry_name)
    if entry is None:
        raise ValueError(f"no @compute entry point named `{entry_name}`")
    mod = read_module(toks, typed_consts(src, consts))
    try:
        wg = read_workgroup_size(src, consts, entry_name)
        total: int | None = wg[0] * wg[1] * wg[2]
    except ConstEvalError:  # stitching refuses these; were one to get here, it is still zeroed right
        total = None
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
