"""Rewrite Naga's IR vocabulary into the WGSL a model wrote.

Naga's validator speaks about its IR: ``Expression [76]``, ``Call to [0]``,
``Scalar(Scalar { kind: Sint, width: 4 })``. A model cannot act on handles, but
it can act on the source text a handle came from, which the error's own labels
reveal (``naga::ir::Expression [76]`` under ``i < 4u``). Unresolvable handles
are dropped rather than guessed.
"""

from __future__ import annotations

import re

from vajra_tui.engine.wgsl.naga_text import NagaLabel

__all__ = ["humanize", "scope", "expression_ids", "split_operator", "call_parts", "OPERATORS"]

OPERATORS = {
    "Add": "+", "Subtract": "-", "Multiply": "*", "Divide": "/", "Modulo": "%",
    "Equal": "==", "NotEqual": "!=", "Less": "<", "LessEqual": "<=", "Greater": ">",
    "GreaterEqual": ">=", "And": "&", "ExclusiveOr": "^", "InclusiveOr": "|",
    "LogicalAnd": "&&", "LogicalOr": "||", "ShiftLeft": "<<", "ShiftRight": ">>",
}
BUILTIN_TYPES = {name: "vec3<u32>" for name in (
    "local_invocation_id", "global_invocation_id", "workgroup_id", "num_workgroups")}
BUILTIN_TYPES.update(local_invocation_index="u32", subgroup_size="u32", subgroup_invocation_id="u32")
_SIZES = {"Bi": "2", "Tri": "3", "Quad": "4"}
_TEMPLATE = re.compile(r"(?:vec[234]|mat[234]x[234]|array|ptr|atomic|bitcast)\s*<")
_TYPE_RULES: list[tuple[re.Pattern[str], object]] = [
    (re.compile(r"Scalar \{ kind: (\w+), width: (\d+) \}"), lambda m: {
        "Sint": f"i{8 * int(m[2])}", "Uint": f"u{8 * int(m[2])}", "Float": f"f{8 * int(m[2])}",
        "Bool": "bool", "AbstractInt": "{AbstractInt}", "AbstractFloat": "{AbstractFloat}",
    }.get(m[1], m[1])),
    (re.compile(r"\bScalar\(([\w{}]+)\)"), r"\1"),
    (re.compile(r"Vector \{ size: (\w+), scalar: ([\w{}]+) \}"),
     lambda m: f"vec{_SIZES.get(m[1], m[1])}<{m[2]}>"),
    (re.compile(r"Matrix \{ columns: (\w+), rows: (\w+), scalar: ([\w{}]+) \}"),
     lambda m: f"mat{_SIZES.get(m[1], m[1])}x{_SIZES.get(m[2], m[2])}<{m[3]}>"),
    (re.compile(r"\bAtomic\((\w+)\)"), r"atomic<\1>"),
    (re.compile(r"Value\(([^()]+)\)"), r"\1"),
    (re.compile(r"StorageAccess\((?:LOAD \| STORE|STORE \| LOAD)\)"), "read_write"),
    (re.compile(r"StorageAccess\(LOAD\)"), "read"),
    (re.compile(r"StorageAccess\(STORE\)"), "write"),
    (re.compile(r"Storage \{ access: (\w+) \}"), r"`storage, \1`"),
    (re.compile(r"Capabilities\((\w+)\)"), r"`\1`"),
    (re.compile(r"GlobalUse\(([A-Z |]+)\)"), lambda m: m[1].lower().replace(" | ", " and ")),
    (re.compile(r"address space (WorkGroup|Uniform|Function|Private|Storage|Handle)\b"),
     lambda m: f"address space `{m[1].lower()}`"),
]


def _types(text: str) -> str:
    for _ in range(4):  # nested: Vector { scalar: Scalar { .. } } resolves inside out
        for pattern, repl in _TYPE_RULES:
            text = pattern.sub(repl, text)  # type: ignore[call-overload]
    return text


def expression_ids(labels: list[NagaLabel]) -> dict[int, str]:
    """Expression handle -> the source its label covers."""
    out = {}
    for lb in labels:
        m = re.fullmatch(r"naga::ir::Expression \[(\d+)\]", lb.text)
        if m and lb.snippet:
            out[int(m[1])] = lb.snippet
    return out


def _top_level(text: str) -> list[tuple[int, str]]:
    """(offset, char) of characters outside brackets and ``vec3<...>`` templates."""
    out, depth, i = [], 0, 0
    while i < len(text):
        m = _TEMPLATE.match(text, i)
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            j, d = m.end(), 1
            while j < len(text) and d:
                d += {"<": 1, ">": -1}.get(text[j], 0)
                j += 1
            i = j
            continue
        ch = text[i]
        depth += 1 if ch in "([" else -1 if ch in ")]" else 0
        if depth == 0 and ch not in ")]":
            out.append((i, ch))
        i += 1
    return out


def split_operator(text: str, symbol: str) -> tuple[str, str] | None:
    """``a + b * c`` split at its last top-level ``symbol``: the operands of that operator."""
    found = None
    for i, _ in _top_level(text):
        if i > 0 and text.startswith(symbol, i) and text[i - 1] not in "<>=!&|+-*/%^" \
                and text[i + len(symbol):i + len(symbol) + 1] not in ("<", ">", "=", "&", "|"):
            found = i
    if found is None:
        return None
    lhs, rhs = text[:found].strip(), text[found + len(symbol):].strip()
    return (lhs, rhs) if lhs and rhs else None


def call_parts(text: str) -> tuple[str, list[str]] | None:
    """``f(a, g(b))`` -> ("f", ["a", "g(b)"])."""
    m = re.match(r"\s*([A-Za-z_]\w*)\s*(?:<[^()]*>)?\s*\(", text)
    if not m or not text.rstrip().endswith(")"):
        return None
    inner = text[m.end():text.rstrip().rindex(")")]
    args, start = [], 0
    for i, ch in _top_level(inner) + [(len(inner), ",")]:
        if ch == ",":
            args.append(inner[start:i].strip())
            start = i + 1
    return m[1], [a for a in args if a]


def _params(source: str, name: str) -> list[str]:
    m = re.search(rf"\bfn\s+{re.escape(name)}\s*\(([^)]*)\)", source)
    return [p.strip() for p in m[1].split(",") if p.strip()] if m else []


def humanize(cause: str, labels: list[NagaLabel], source: str = "") -> str | None:
    """One ``= ...`` cause in WGSL words; None when it says nothing new (``Expression [6] is invalid``)."""
    ids = expression_ids(labels)
    text = _types(cause)
    if re.fullmatch(r"Expression \[\d+\] is invalid", text):
        return None
    call = next((call_parts(lb.snippet) for lb in labels if lb.text == "invalid function call"), None)
    expr = next((lb.snippet for lb in labels if lb.text.startswith("naga::ir::Expression")), "")
    m = re.fullmatch(r"Operation (\w+) can't work with \[(\d+)\] \(of type (.+?)\) "
                     r"and \[(\d+)\] \(of type (.+)\)", text)
    if m:
        sym = OPERATORS.get(m[1], m[1])
        parts = split_operator(expr, sym) if expr else None
        lhs, rhs = parts or (ids.get(int(m[2]), ""), ids.get(int(m[4]), ""))
        left = f"`{lhs}` ({m[3]})" if lhs else m[3]
        right = f"`{rhs}` ({m[5]})" if rhs else m[5]
        return f"operator `{sym}` can't work with {left} and {right}"
    m = re.fullmatch(r"Call to \[\d+\] is invalid", text)
    if m:
        return f"call to `{call[0]}` is invalid" if call else "a function call is invalid"
    m = re.fullmatch(r"Argument (\d+) value \[(\d+)\] doesn't match the type \[\d+\]", text)
    if m:
        k = int(m[1])
        arg = call[1][k] if call and k < len(call[1]) else ids.get(int(m[2]), "")
        params = _params(source, call[0]) if call else []
        where = f"parameter `{params[k]}`" if k < len(params) else "the parameter's type"
        return f"argument {k}{f' (`{arg}`)' if arg else ''} doesn't match {where}" + \
            (f" of `{call[0]}`" if call else "")
    if re.fullmatch(r"The `return` expression None does not match the declared return type Some\(.*\)", text):
        return ("a `return` without a value (or no `return` at the end) "
                "in a function declared to return a value")
    m = re.fullmatch(r"The `return` expression Some\(\[(\d+)\]\) "
                     r"does not match the declared return type None", text)
    if m:
        what = ids.get(int(m[1]))
        return f"returns {f'`{what}`' if what else 'a value'} from a function declared without a return type"
    m = re.fullmatch(r"The pointer \[\d+\] doesn't relate to a valid destination for a store", text)
    if m:
        target = next((lb.snippet for lb in labels if "writing to this location" in lb.text), "")
        return (f"cannot write to `{target}`" if target else "cannot write here") + \
            ": it is not writable (a `read` binding, a `let`, a constant or a parameter)"
    if re.fullmatch(r"The `if` condition \[\d+\] is not a boolean scalar", text):
        return "a condition (of an `if`, `while`, `for` or `break if`) is not a `bool`"
    m = re.fullmatch(r"Accessing index (\d+) is out of \[\d+\] bounds", text)
    if m:
        base = expr[:expr.rfind("[")].strip() if "[" in expr else ""
        return f"constant index out of bounds{f' of `{base}`' if base else ''}"
    if re.fullmatch(r"Accessing with index \[\d+\] can't be done", text):
        idx = expr[expr.rfind("[") + 1:expr.rfind("]")].strip() if expr.endswith("]") else ""
        return f"{f'`{idx}`' if idx else 'the index'} can't be used as an index (use an i32 or u32)"
    m = re.fullmatch(r"Global variable \[\d+\] is used incorrectly as (.+)", text)
    if m:
        decl = next((lb.snippet for lb in labels if lb.text.startswith("naga::ir::GlobalVariable")), "")
        name = re.search(r"var(?:<[^>]*>)?\s+(\w+)", decl)
        return f"global variable {f'`{name[1]}`' if name else ''} is used for {m[1]}, " \
               "which its declaration does not allow".replace("  ", " ")
    m = re.fullmatch(r"Shader entry point's workgroup size (\[[\d, ]+\]) \((\d+) total invocations\) must be "
                     r"less or equal to the per-dimension limit `[^`]*` of (\[[\d, ]+\]) and the total "
                     r"invocation limit `[^`]*` of (\d+)", text)
    if m:
        return f"@workgroup_size {m[1]} ({m[2]} invocations) exceeds this adapter's limits: at most " \
               f"{m[3]} per dimension and {m[4]} invocations per workgroup"
    m = re.fullmatch(r"Built-in type for (\w+) is invalid\. Found (.+)", text)
    if m:
        name = re.sub(r"(?<!^)(?=[A-Z])", "_", m[1]).lower()
        want = BUILTIN_TYPES.get(name)
        return f"`@builtin({name})` has type {m[2]}" + (f"; it must be {want}" if want else "")
    if re.fullmatch(r"Argument (\d+) varying error", text):
        return f"entry point parameter {text.split()[1]} is invalid"
    containers = {"Function": "in this function", "GlobalVariable": "this global variable"}
    text = re.sub(r"naga::ir::(Function|GlobalVariable|Type) \[\d+\]",
                  lambda m: containers.get(m[1], "this type"), text)
    text = re.sub(r",? has type \[\d+\]", "", text)
    text = re.sub(r"not met by \[\d+\]", "not met by its type", text)
    text = re.sub(r"naga::ir::Expression \[(\d+)\]",
                  lambda m: f"`{ids[int(m[1])]}`" if int(m[1]) in ids else "an expression", text)
    text = re.sub(r"\bSome\(\[(\d+)\]\)",
                  lambda m: f"`{ids[int(m[1])]}`" if int(m[1]) in ids else "a value", text)
    return re.sub(r"\s?\[\d+\]", "", text)


def scope(headline: str) -> str:
    """``Function [1] 'g' is invalid`` -> "in function `g`"; "" for the entry point."""
    m = re.fullmatch(r"(Function|Global variable|Type|Constant|Override) \[\d+\] '([^']*)' is invalid",
                     headline)
    if m:
        kind = {"Function": "in function"}.get(m[1], m[1].lower())
        return f"{kind} `{m[2]}`" if m[2] else f"a {m[1].lower()}"
    m = re.fullmatch(r"Entry point (\w+) at \w+ is invalid", headline)
    if m:
        return "" if m[1] == "main" else f"in entry point `{m[1]}`"
    return _types(headline)
