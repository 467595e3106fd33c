"""The structural queries the engine asks of WGSL, over the lexer's tokens.

Candidates come from language models, so headers, bindings and workgroup sizes
must be read from tokens (comments and strings of look-alike text ignored),
never by regexes over raw source. Lines and columns are 1-based, like Tint's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vajra_tui.engine.wgsl.expr import ConstEvalError, Value, evaluate, split_args
from vajra_tui.engine.wgsl.consteval import MAX_EXPR_TOKENS, typed
from vajra_tui.engine.wgsl.lexer import (  # noqa: F401 - the lexer's names are part of this module's interface
    ATTR, BLOCK_COMMENT, ERROR, IDENT, KEYWORD, KEYWORDS, LINE_COMMENT, NEWLINE, NUMBER, PUNCT, TRIVIA, WS,
    Token, significant, significant_tokens, tokenize,
)
from vajra_tui.engine.wgsl.primitives import MAX_LITERAL_DIGITS, int_literal, match_bracket

# "// tile: 64x64", "// Tile: 64 x 64  (each workgroup computes a block)", "// tile: COLS x 1".
# Case and spacing are free and a trailing remark is allowed; a value is a number or a name.
TILE_HEADER = re.compile(
    r"^\s*tile\s*:\s*(-?\d+|[A-Za-z_]\w*)(?:\s*[xX×*,]\s*(-?\d+|[A-Za-z_]\w*))?(?!\w)", re.I)


@dataclass(frozen=True, slots=True)
class BindingDecl:
    """One ``@group(g) @binding(b) var<space, access> name : type;`` declaration (line: first attribute)."""

    group: int
    binding: int
    address_space: str
    access: str
    name: str
    type_text: str
    line: int


@dataclass(frozen=True, slots=True)
class FunctionSpan:
    """A ``fn``: attribute names, and token indices into the *significant* token list."""

    name: str
    attributes: tuple[str, ...]
    start: int  # index of the first attribute '@' (or 'fn')
    params_open: int
    body_open: int
    body_close: int
    line: int


def _attr_name(toks: list[Token], i: int) -> str:
    return toks[i + 1].text if i + 1 < len(toks) and toks[i].kind == ATTR else ""


def attributes_before(toks: list[Token], i: int) -> list[tuple[str, int]]:
    """Attributes (name, index of '@') directly preceding token ``i``, in order."""
    found: list[tuple[str, int]] = []
    # Walk forward from the previous ';' / '}' / '{' to collect a clean attribute run.
    k = i - 1
    while k >= 0 and not (toks[k].kind == PUNCT and toks[k].text in (";", "}", "{")):
        k -= 1
    j = k + 1
    while j < i:
        if toks[j].kind != ATTR:
            return []
        name = _attr_name(toks, j)
        found.append((name, j))
        j += 2
        if j < i and toks[j].text == "(":
            j = match_bracket(toks, j) + 1
            if j == 0:
                return []
    return found


def find_functions(src: str | list[Token]) -> list[FunctionSpan]:
    """Every module-scope ``fn`` with its attributes and body span."""
    toks = significant_tokens(src) if isinstance(src, str) else src
    out: list[FunctionSpan] = []
    i, depth = 0, 0
    while i < len(toks):
        t = toks[i]
        if t.text == "{":
            depth += 1
        elif t.text == "}":
            depth -= 1
        elif t.kind == KEYWORD and t.text == "fn" and depth == 0 and i + 2 < len(toks):
            attrs = attributes_before(toks, i)
            p_open = i + 2
            p_close = match_bracket(toks, p_open) if toks[p_open].text == "(" else -1
            b_open = next((k for k in range(max(p_close, i), len(toks)) if toks[k].text == "{"), -1)
            b_close = match_bracket(toks, b_open) if b_open >= 0 and p_close >= 0 else -1
            if b_close < 0:
                break
            start = attrs[0][1] if attrs else i
            out.append(FunctionSpan(toks[i + 1].text, tuple(a for a, _ in attrs), start,
                                    p_open, b_open, b_close, t.line))
            i = b_close + 1
            continue
        i += 1
    return out


def find_entry_point(src: str | list[Token], name: str = "main", stage: str = "compute") -> FunctionSpan | None:
    """The ``@compute fn name`` (any name when ``name`` is empty)."""
    for f in find_functions(src):
        if stage in f.attributes and (not name or f.name == name):
            return f
    return None


def has_compute_entry(src: str, name: str = "main") -> bool:
    """True when ``src`` declares ``@compute ... fn name(...)``."""
    return find_entry_point(src, name) is not None


def module_consts(src: str | list[Token], given: dict[str, int] | None = None) -> dict[str, int]:
    """Integer values of module-scope ``const``/``override`` declarations we can evaluate.

    ``given`` (size constants, the values a pipeline sets ``override``s to) wins in the
    result. An ``override`` takes its given value, and later declarations derived from it
    see that value; a ``const`` keeps its declared one for what derives from it.
    """
    found = typed_consts(src, given)
    return {name: v.value for name, v in found.items() if isinstance(v, Value)}


def typed_consts(src: str | list[Token], given: dict[str, int] | None = None) -> dict[str, Value | ConstEvalError]:
    """Like :func:`module_consts`, with WGSL types, and the reason for each declaration that
    could not be evaluated (so a size derived from it is refused naming why).

    A given value with no declaration here is a size constant: ``u32``, as the prelude
    declares it.
    """
    toks = significant_tokens(src) if isinstance(src, str) else src
    given = dict(given or {})
    given_typed = {name: _given(value, "u32", name) for name, value in given.items()}
    known: dict[str, Value | ConstEvalError] = dict(given_typed)
    consts: dict[str, Value | ConstEvalError] = {}
    semis: list[int] | None = None  # built at the first declaration
    depth = 0
    for i, t in enumerate(toks):
        if t.text in ("{", "}"):
            depth += 1 if t.text == "{" else -1
        elif depth == 0 and t.kind == KEYWORD and t.text in ("const", "override") and i + 1 < len(toks):
            name = toks[i + 1].text
            declared = toks[i + 3].text if i + 3 < len(toks) and toks[i + 2].text == ":" else ""
            if t.text == "override" and name in given:
                consts[name] = known[name] = given_typed[name] = _given(given[name], declared or "i32", name)
                continue
            if semis is None:
                semis = semicolons_after(toks)
            end = semis[i]
            eq = next((k for k in range(i, min(end, i + MAX_DECLARATION_HEAD)) if toks[k].text == "="), -1)
            if eq > 0 and end - eq - 1 > MAX_EXPR_TOKENS:
                consts[name] = known[name] = ConstEvalError(
                    f"an initializer of {end - eq - 1} tokens, over the {MAX_EXPR_TOKENS} this front end evaluates")
            elif eq > 0:
                consts[name] = known[name] = _declared(toks[eq + 1:end], known, declared,
                                                       t.text == "override")
    return {**consts, **given_typed}


MAX_DECLARATION_HEAD = 32
"""Tokens between ``const``/``override`` and its ``=`` (name and type): a longer type is no
integer, and the bound keeps a file of unfinished declarations linear."""


def semicolons_after(toks: list[Token]) -> list[int]:
    """For each token, the index of the first ``;`` at or after it (``len(toks)`` when none):
    one pass, so finding each declaration's end never rescans the file."""
    out = [len(toks)] * (len(toks) + 1)
    for k in range(len(toks) - 1, -1, -1):
        out[k] = k if toks[k].text == ";" else out[k + 1]
    return out


def _given(value: int, type_: str, name: str) -> Value | ConstEvalError:
    if type_ not in ("u32", "i32"):
        return ConstEvalError(f"`{name}` is a {type_}, not an integer this front end evaluates")
    try:
        return typed(value, type_)
    except ConstEvalError as exc:
        return ConstEvalError(f"`{name}` = {exc}")


def _declared(toks: list[Token], known: dict[str, Value | ConstEvalError], type_: str,
              override: bool) -> Value | ConstEvalError:
    """A declaration's value in its declared type (an ``override``'s abstract one is i32)."""
    try:
        value = evaluate(toks, known)
        if type_ and type_ not in ("u32", "i32"):
            return ConstEvalError(f"a {type_}, not an integer this front end evaluates")
        target = type_ or ("i32" if override and value.type == "abstract" else value.type)
        if value.type == target:
            return value
        if value.type != "abstract":
            return ConstEvalError(f"{value} is a {value.type}, declared {target}")
        return typed(value.value, target)
    except ConstEvalError as exc:
        return exc


def override_names(src: str | list[Token]) -> list[str]:
    """Names of the module-scope ``override`` declarations, in order."""
    toks = significant_tokens(src) if isinstance(src, str) else src
    names, depth = [], 0
    for i, t in enumerate(toks):
        if t.text in ("{", "}"):
            depth += 1 if t.text == "{" else -1
        elif depth == 0 and t.kind == KEYWORD and t.text == "override" and i + 1 < len(toks):
            names.append(toks[i + 1].text)
    return names


def pipeline_constants(src: str, values: dict[str, float]) -> dict[str, float]:
    """``values`` (by override name) keyed as WebGPU's pipeline ``constants`` want them: an
    ``override`` declared with ``@id(N)`` is set by the key "N" alone, its name is refused
    ("unknown pipeline-overridable constant"); any other by its name."""
    keys = override_ids(src)
    return {keys.get(name, name): value for name, value in values.items()}


def override_ids(src: str | list[Token]) -> dict[str, str]:
    """Each module-scope ``override`` that has an ``@id(N)``: name -> "N"."""
    toks = significant_tokens(src) if isinstance(src, str) else src
    ids, depth = {}, 0
    for i, t in enumerate(toks):
        if t.text in ("{", "}"):
            depth += 1 if t.text == "{" else -1
        elif depth == 0 and t.kind == KEYWORD and t.text == "override" and i + 1 < len(toks):
            at = dict(attributes_before(toks, i)).get("id")
            number = int_literal(toks[at + 3].text) if at is not None and at + 4 < len(toks) \
                and toks[at + 4].text == ")" else None
            if number is not None:
                ids[toks[i + 1].text] = str(number)
    return ids


MAX_WORKGROUP_INVOCATIONS = 65536
"""A sanity cap on a workgroup's invocations before the compiler is asked: no GPU runs
more than a few thousand, and a larger product is only a number too big to carry around."""


def workgroup_size(src: str, consts: dict[str, int] | None = None,
                   entry: str = "main") -> tuple[int, int, int] | None:
    """``@workgroup_size`` of the compute entry ``main`` (or the first compute entry).

    Arguments may be literals or constant expressions over ``const`` names declared
    in ``src`` or given in ``consts`` (``consts`` wins). None when absent or unresolvable
    (:func:`read_workgroup_size` says why); values below 1 are returned as they are, for
    callers that rule such configurations out themselves.
    """
    try:
        dims = _evaluated_dims(src, consts, entry) + [1, 1]
    except ConstEvalError:
        return None
    return dims[0], dims[1], dims[2]


def read_workgroup_size(src: str, consts: dict[str, int] | None = None,
                        entry: str = "main") -> tuple[int, int, int]:
    """The workgroup size of the compute entry ``entry`` (the first compute entry when the
    module has no ``entry``), evaluated as WGSL does; raises ConstEvalError saying what is
    wrong (absent, not evaluable, a dimension below 1, over MAX_WORKGROUP_INVOCATIONS)."""
    return _checked_dims(_evaluated_dims(src, consts, entry))


def compute_entries(src: str | list[Token]) -> list[str]:
    """The names of the module's ``@compute`` functions, in source order."""
    return [f.name for f in find_functions(src) if "compute" in f.attributes]


def _evaluated_dims(src: str, consts: dict[str, int] | None, name: str = "main") -> list[int]:
    toks = significant_tokens(src)
    entry = find_entry_point(toks, name) or find_entry_point(toks, name="")
    if entry is None:
        raise ConstEvalError("no @compute entry point")
    known = typed_consts(toks, consts)
    i = entry.start
    while i < entry.params_open:
        if toks[i].kind == ATTR and _attr_name(toks, i) == "workgroup_size" and toks[i + 2].text == "(":
            close = match_bracket(toks, i + 2)
            args = split_args(toks[i + 3:close])
            if not 1 <= len(args) <= 3:
                raise ConstEvalError(f"@workgroup_size takes 1 to 3 values, not {len(args)}")
            return [evaluate(a, known).value for a in args]
        i += 1
    raise ConstEvalError("no @workgroup_size on the entry point")


def _checked_dims(vals: list[int]) -> tuple[int, int, int]:
    dims = vals + [1] * (3 - len(vals))
    for axis, value in zip("xyz", dims):
        if value < 1:
            raise ConstEvalError(f"@workgroup_size {axis} is {value}: each dimension must be at least 1")
        if value > MAX_WORKGROUP_INVOCATIONS:
            raise ConstEvalError(f"@workgroup_size {axis} is {value}, over the {MAX_WORKGROUP_INVOCATIONS} "
                                 "invocations any GPU runs in a workgroup")
    total = dims[0] * dims[1] * dims[2]
    if total > MAX_WORKGROUP_INVOCATIONS:
        raise ConstEvalError(f"@workgroup_size has {total} invocations, over the {MAX_WORKGROUP_INVOCATIONS} "
                             "any GPU runs in a workgroup")
    return dims[0], dims[1], dims[2]


def storage_bindings(src: str, include_all: bool = False) -> list[BindingDecl]:
    """``var<storage, ...>`` declarations with ``@group``/``@binding`` (all resource vars if ``include_all``).

    Storage access defaults to ``read`` as in WGSL; non-storage spaces get access ''.
    """
    toks = significant_tokens(src)
    out: list[BindingDecl] = []
    depth = 0
    for i, t in enumerate(toks):
        if t.text in ("{", "}"):
            depth += 1 if t.text == "{" else -1
            continue
        if depth or t.kind != KEYWORD or t.text != "var":
            continue
        attrs = dict(attributes_before(toks, i))
        if "group" not in attrs or "binding" not in attrs:
            continue
        group = int_literal(toks[attrs["group"] + 3].text)
        binding = int_literal(toks[attrs["binding"] + 3].text)
        j, space, access = i + 1, "handle", ""
        if j < len(toks) and toks[j].text == "<":
            close = next((k for k in range(j, len(toks)) if toks[k].text in (">", ">>", ";")), j)
            parts = [toks[k].text for k in range(j + 1, close) if toks[k].text != ","]
            space = parts[0] if parts else ""
            access = parts[1] if len(parts) > 1 else ("read" if space == "storage" else "")
            j = close + 1
        if j + 1 >= len(toks) or toks[j + 1].text != ":" or group is None or binding is None:
            continue
        end = next((k for k in range(j, len(toks)) if toks[k].text == ";"), len(toks) - 1)
        type_text = src[toks[j + 2].offset:toks[end].offset].strip() if end > j + 2 else ""
        if include_all or space == "storage":
            first = min(attrs.values())  # the declaration starts at its first attribute
            out.append(BindingDecl(group, binding, space, access, toks[j].text, type_text, toks[first].line))
    return out


def tile_header(src: str) -> tuple[int, int] | None:
    """The first ``// tile: AxB`` (or ``// tile: A`` -> (A, 1)) line comment, if any."""
    for t in tokenize(src):
        if t.kind == LINE_COMMENT:
            m = TILE_HEADER.match(t.text[2:])
            if m:
                first, second = m.group(1), m.group(2) or "1"
                if not (_is_int(first) and _is_int(second)):
                    return None  # names a size constant: only the engine can resolve it
                return int(first), int(second)
    return None


def _is_int(text: str) -> bool:
    """A tile value written as a number short enough to convert (a longer one is no tile)."""
    return text.lstrip("-").isdigit() and len(text.lstrip("-").lstrip("0")) <= MAX_LITERAL_DIGITS


def tile_header_line(src: str) -> int | None:
    """1-based line of the tile header comment (for diagnostics)."""
    for t in tokenize(src):
        if t.kind == LINE_COMMENT and TILE_HEADER.match(t.text[2:]):
            return t.line
    return None


def uses_subgroups(src: str) -> bool:
    """Calls a subgroup built-in or reads a subgroup builtin value (comments do not count)."""
    return any(t.kind == IDENT and t.text.startswith("subgroup") for t in tokenize(src))
