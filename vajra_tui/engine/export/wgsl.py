"""The exported WGSL of a kernel tuned through its ``override`` constants.

A params-search winner was timed as its source compiled with pipeline constants.
Exported for a user who may not pass those constants, the values it won with become
the declarations' defaults (``override WG: u32 = 64u;``): the same kernel either way,
since a pipeline constant only replaces a default. The TypeScript module keeps the
timed source byte for byte and passes the values as pipeline ``constants`` instead.

A ``.wgsl`` file must also compile on its own in a browser: wgpu's compiler (where the
kernel was timed) refuses ``enable subgroups;`` and Tint requires it, so the engine
leaves that directive out (admission/contract.py, ``NATIVE_IMPLICIT``) and
:func:`browser_text` puts it back, on the first line, so every line keeps its number.
"""

from __future__ import annotations

from typing import Union

import re

from vajra_tui.engine.wgsl.tokens import KEYWORD, significant_tokens, uses_subgroups

Value = Union[bool, int, float]


def literal(value: Value, wgsl_type: str = "") -> str:
    """``value`` as a WGSL literal of the declared type (abstract when none is declared)."""
    if isinstance(value, bool) or wgsl_type == "bool":
        return "true" if value else "false"
    if wgsl_type in ("f32", "f16"):
        text = repr(float(value))
        text = text if ("." in text or "e" in text or "inf" in text) else text + ".0"
        return text + ("h" if wgsl_type == "f16" else "f")
    if isinstance(value, float) and not value.is_integer():
        return repr(value)
    suffix = {"u32": "u", "i32": "i"}.get(wgsl_type, "")
    return f"{int(value)}{suffix}"


def with_defaults(source: str, constants: dict[str, Value] | None) -> str:
    """``source`` with each named ``override``'s default set to its value in ``constants``."""
    if not constants:
        return source
    toks = significant_tokens(source)
    edits: list[tuple[int, int, str]] = []
    depth = 0
    for i, t in enumerate(toks):
        if t.text in ("{", "}"):
            depth += 1 if t.text == "{" else -1
            continue
        if depth or t.kind != KEYWORD or t.text != "override" or i + 1 >= len(toks):
            continue
        name = toks[i + 1].text
        if name not in constants:
            continue
        end = next((k for k in range(i, len(toks)) if toks[k].text == ";"), None)
        if end is None:
            continue
        colon = i + 2 if i + 2 < end and toks[i + 2].text == ":" else None
        wgsl_type = toks[colon + 1].text if colon is not None and colon + 1 < end else ""
        eq = next((k for k in range(i, end) if toks[k].text == "="), None)
        start = toks[eq].offset if eq is not None else toks[end - 1].end
        edits.append((start, toks[end].offset, f"= {literal(constants[name], wgsl_type)}"
                      if eq is not None else f" = {literal(constants[name], wgsl_type)}"))
    for start, stop, text in sorted(edits, reverse=True):
        source = source[:start] + text + source[stop:]
    return source


_ENABLE = re.compile(r"^[ \t]*enable\s+([A-Za-z_][\w\s,]*?)\s*;", re.M)


def enables_in(source: str) -> list[str]:
    """The extensions ``source``'s ``enable`` directives name, in order (each once)."""
    names: list[str] = []
    for match in _ENABLE.finditer(source):
        for name in (n.strip() for n in match.group(1).split(",")):
            if name and name not in names:
                names.append(name)
    return names


def browser_enables(source: str) -> tuple[list[str], list[str]]:
    """``(all, added)``: the enables a browser needs for ``source``, and those it lacks.

    Only ``subgroups`` can be lacking: the engine writes every other directive (``f16``
    for f16 bindings, the kernel's own) into the stitched source."""
    have = enables_in(source)
    added = ["subgroups"] if uses_subgroups(source) and "subgroups" not in have else []
    return added + have, added


def browser_text(source: str, constants: dict[str, Value] | None = None) -> str:
    """``source`` as a browser compiles it: the overrides' defaults set to ``constants``
    and the missing directives put in front of the first line (so no line moves)."""
    _, added = browser_enables(source)
    prefix = "".join(f"enable {name}; " for name in added)
    return prefix + with_defaults(source, constants)
