"""What a recording names, checked or escaped before any of it reaches generated code.

An export is often made from a recording someone else made, and its names (bindings,
size dims, override constants, the workload, the kernel, the device) end up in a
TypeScript module an application bundles and imports. So every name has one of two
fates here, never a third:

- it sits where code is (an object type's key, a binding number, a typed array's
  element type): it must be an identifier or one of a few known words, or the export is
  refused with a :class:`UsageError` naming the recording's field (exit 2 in the CLI);
- it is data: a string literal with JSON's escapes and also U+2028/U+2029, C1 and ``<``
  escaped (:func:`js_literal`, safe inside an HTML ``<script>`` too), or comment text with
  no line terminator and no ``*/`` (:func:`comment_text`).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from vajra_tui.engine.errors import UsageError
from vajra_tui.engine.workloads.base import WORKLOAD_NAME
from vajra_tui.safe_text import one_line

# A name that becomes a key of a TS object type, a WGSL identifier, a pipeline constant:
# ASCII only, as a workload file's binding and dim names already are (workloads/base.py).
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Longer names are no kernel's: a cap keeps a hostile one from bloating every line it is on.
MAX_IDENTIFIER = 128
# Above every adapter's maxBindingsPerBindGroup (the spec's default is 1000): a larger
# @binding number is not a real kernel's.
MAX_BINDING_INDEX = 65535
# Elements of one buffer: the module does arithmetic on it as a JS number, exact up to 2**53 - 1.
MAX_ELEMENTS = 2 ** 53 - 1
# A kernel or device name in the module's header comment is cut here: it is a label for a reader.
MAX_COMMENT_TEXT = 160

# WGSL element type -> (TypedArray the module uses for it, bytes per element); f16 travels
# as its raw bits (Float16Array is not in every engine yet).
TYPED_ARRAYS = {"f32": ("Float32Array", 4), "f16": ("Uint16Array", 2), "i32": ("Int32Array", 4),
                "u32": ("Uint32Array", 4)}
ACCESS_MODES = ("read", "read_write", "inout", "scratch", "uniform")
# Bind group numbers a binding may have: the engine's own cap (WebGPU's default maxBindGroups is 4).
MAX_GROUP = 3
# A uniform's recorded contents: at most the default maxUniformBufferBindingSize.
MAX_UNIFORM_BYTES = 65536

# What may not stand in comment text: C0/C1 controls and DEL (CR, LF, NEL among them), the
# JS line terminators U+2028/U+2029, zero-width and bidi controls (they reorder what a
# reader sees), the BOM and lone surrogates.
_NOT_IN_COMMENT = re.compile(
    "[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\ud800-\udfff]+")
# Escaped inside a JS string literal beyond what JSON escapes: DEL and C1, the line
# terminators JSON allows raw, lone surrogates (no encoding writes them) and "<" (so that
# "</script>" or "<!--" in a name cannot end an inline script).
_ESCAPE_IN_JS = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff<]")
_ESCAPE_IN_JSON = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff]")


# ---- refusals --------------------------------------------------------------------
def _shown(value: object) -> str:
    """A bad value as the message quotes it: one line, short, every odd character escaped."""
    return repr(one_line(value if isinstance(value, str) else repr(value), 48))


def refuse(field: str, value: object, why: str) -> UsageError:
    """The one-line refusal of an export: which recording field, its value, what is wanted."""
    return UsageError(f"recording field {field}: {_shown(value)} {why}: nothing exported")


def identifier(value: object, field: str) -> str:
    """``value`` if it is an identifier (see :data:`IDENTIFIER`), else a refusal naming ``field``."""
    if not isinstance(value, str) or len(value) > MAX_IDENTIFIER or not IDENTIFIER.fullmatch(value):
        raise refuse(field, value, "is not an identifier (ASCII letters, digits and '_', not "
                     f"starting with a digit, at most {MAX_IDENTIFIER} characters)")
    return value


def workload_name(value: object) -> str:
    """The workload's name: it becomes ``<name>.wgsl`` and ``<name>.ts``, so never a path."""
    if not isinstance(value, str) or not WORKLOAD_NAME.match(value):
        raise UsageError(f"recording field workload.name: unknown workload {_shown(value)} (a name "
                         "is a letter, then letters, digits, '_' or '-', at most 64 in all): "
                         "nothing exported")
    return value


def _count(value: object, field: str, most: int) -> int:
    """A whole number from 0 to ``most`` (a JSON true is no number), else a refusal."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= most:
        raise refuse(field, value, f"is not a whole number from 0 to {most}")
    return value


def _choice(value: object, field: str, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise refuse(field, value, f"is not one of {', '.join(allowed)}")
    return value


def binding_row(row: object, number: int) -> dict[str, Any]:
    """One recorded binding, checked field by field: index, group (0 when a recording from
    before groups has none), name, access, dtype, elements."""
    where = f"workload.bindings[{number}]"
    if not isinstance(row, dict):
        raise refuse(where, row, "is not an object")
    for key in ("index", "name", "access", "dtype", "elements"):
        if key not in row:
            raise refuse(where, sorted(row)[:8], f"has no {key!r}")
    return {"index": _count(row["index"], f"{where}.index", MAX_BINDING_INDEX),
            "name": identifier(row["name"], f"{where}.name"),
            "access": _choice(row["access"], f"{where}.access", ACCESS_MODES),
            "dtype": _choice(row["dtype"], f"{where}.dtype", tuple(TYPED_ARRAYS)),
            "elements": _count(row["elements"], f"{where}.elements", MAX_ELEMENTS),
            "group": _count(row.get("group", 0), f"{where}.group", MAX_GROUP)}


def bindings(rows: list[Any]) -> list[dict[str, Any]]:
    """The bindings, checked: each row, no name or (group, binding) slot twice, one output at least."""
    checked = [binding_row(row, n) for n, row in enumerate(rows)]
    for key, field in (("name", "name"), ("slot", "index")):
        seen: set[Any] = set()
        for n, row in enumerate(checked):
            value = row["name"] if key == "name" else (row["group"], row["index"])
            if value in seen:
                raise refuse(f"workload.bindings[{n}].{field}", row[field], "is used by an earlier binding")
            seen.add(value)
    if not any(row["access"] in ("read_write", "inout") for row in checked):
        raise refuse("workload.bindings", [row["name"] for row in checked],
                     "has no read_write binding (the kernel's output)")
    return checked


def uniform_bytes(values: object, rows: list[dict[str, Any]]) -> dict[str, bytes]:
    """``result.uniforms`` checked: each uniform binding's recorded contents, as bytes.

    Every uniform binding needs its contents (the module fills its buffer with them), each
    a hex string of at most :data:`MAX_UNIFORM_BYTES` bytes; a name that is no uniform
    binding is refused."""
    if not isinstance(values, dict):
        raise refuse("result.uniforms", values, "is not an object of hex strings")
    wanted = [r["name"] for r in rows if r["access"] == "uniform"]
    for name in values:
        if name not in wanted:
            raise refuse("result.uniforms", name, "is no uniform binding of the workload")
    out: dict[str, bytes] = {}
    for name in wanted:
        text = values.get(name)
        if not isinstance(text, str) or not re.fullmatch(r"(?:[0-9a-fA-F]{2}){1,%d}" % MAX_UNIFORM_BYTES, text):
            raise refuse(f"result.uniforms.{name}", text, f"is not the hex of 1 to {MAX_UNIFORM_BYTES} bytes")
        out[name] = bytes.fromhex(text)
    return out


# A pass label becomes part of a file name, <workload>.<label>.wgsl: never a path.
PASS_LABEL = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")


def pass_row(row: object, number: int) -> dict[str, Any]:
    """One of ``result.passes``, checked: label (a file name part), entry (an identifier),
    grid (three workgroup counts), own (bool) and source (a string, "" for an own pass)."""
    where = f"result.passes[{number}]"
    if not isinstance(row, dict):
        raise refuse(where, row, "is not an object")
    label = row.get("label")
    if not isinstance(label, str) or not PASS_LABEL.fullmatch(label):
        raise refuse(f"{where}.label", label, "is not a pass label (a letter or '_', then letters, "
                     "digits, '_' or '-', at most 64 in all)")
    grid = row.get("grid")
    if not isinstance(grid, list) or len(grid) != 3 or any(
            isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 2 ** 31 for v in grid):
        raise refuse(f"{where}.grid", grid, "is not three workgroup counts from 1 to 2^31")
    own, source = row.get("own"), row.get("source", "")
    if not isinstance(own, bool):
        raise refuse(f"{where}.own", own, "is not true or false")
    if not isinstance(source, str) or (not own and not source.strip()):
        raise refuse(f"{where}.source", one_line(str(source), 20), "is no WGSL module for a pass of the workload's")
    checked = {"label": label, "entry": identifier(row.get("entry"), f"{where}.entry"), "grid": list(grid),
               "own": own, "source": "" if own else source}
    if "constants" in row:  # this pass's override values (an entry point run at several levels)
        values = row["constants"]
        if not isinstance(values, dict):
            raise refuse(f"{where}.constants", values, "is not an object")
        checked["constants"] = constants({identifier(k, f"{where}.constants"): v for k, v in values.items()})
    bind = row.get("bind") or {}
    if not isinstance(bind, dict):
        raise refuse(f"{where}.bind", bind, "is not an object")
    checked["bind"] = {identifier(k, f"{where}.bind"): identifier(v, f"{where}.bind.{k}") for k, v in bind.items()}
    return checked


def passes(rows: object) -> list[dict[str, Any]]:
    """``result.passes`` checked row by row; labels are file names, so none twice."""
    if not isinstance(rows, list):
        raise refuse("result.passes", rows, "is not a list")
    checked = [pass_row(row, n) for n, row in enumerate(rows)]
    seen: set[str] = set()
    for n, row in enumerate(checked):
        if row["label"].lower() in seen:  # one file on a case-insensitive disk
            raise refuse(f"result.passes[{n}].label", row["label"], "is used by an earlier pass")
        seen.add(row["label"].lower())
    if checked and not any(row["own"] for row in checked):
        raise refuse("result.passes", [r["label"] for r in checked], "has no pass of the result's own module")
    return checked


def size_dims(size: dict[str, int]) -> dict[str, int]:
    """The size's dims: identifiers (they are WGSL constants of the prelude) with their values."""
    return {identifier(name, "workload.size"): value for name, value in size.items()}


def constants(values: dict[str, Any]) -> dict[str, Any]:
    """The override constants: identifiers with finite values (a pipeline constant is a number)."""
    for name, value in values.items():
        identifier(name, "result.constants")
        if isinstance(value, float) and not math.isfinite(value):
            raise refuse(f"result.constants.{name}", value, "is not a finite number")
    return values


def recorded_names(workload_name_: object, size: dict[str, int], constants_: dict[str, Any]) -> None:
    """The workload's name, its size dims and the override constants' names, checked first:
    a refusal names the field before anything else about the result is looked at."""
    workload_name(workload_name_)
    size_dims(size)
    constants(constants_)


# ---- escaping --------------------------------------------------------------------
def _unicode_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def js_literal(value: Any) -> str:
    """``value`` as a JS/TS literal: JSON (readable, non-ASCII kept) with the extra escapes.

    Raw U+2028/U+2029 and ``<`` can only stand inside JSON's strings, so escaping them in
    the JSON text changes no structure.
    """
    return _ESCAPE_IN_JS.sub(_unicode_escape, json.dumps(value, ensure_ascii=False, allow_nan=False))


def json_text(text: str) -> str:
    """JSON text (a lockfile) with no raw line terminator, C1 or lone surrogate in its strings."""
    return _ESCAPE_IN_JSON.sub(_unicode_escape, text)


def comment_text(text: object, limit: int = MAX_COMMENT_TEXT) -> str:
    """``text`` safe in a ``//`` or ``/* */`` comment: on one line, no ``*/``, cut at ``limit``."""
    value = _NOT_IN_COMMENT.sub(" ", text if isinstance(text, str) else str(text))
    value = " ".join(value.split()).replace("*/", "* /")
    return value if len(value) <= limit else value[: limit - 1] + "…"


def template_literal(text: str) -> str:
    """``text`` as a JS template literal whose value is exactly ``text``.

    Every line terminator but LF is escaped (a literal CR is read back as LF), so are C1
    controls, and ``</`` and ``<!--`` become ``<\\/`` and ``<\\!--`` (the same value), so the
    module may also be inlined in an HTML ``<script>``.
    """
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == "`":
            out.append("\\`")
        elif ch == "$":
            out.append("\\$")
        elif ch == "\n" or ch == "\t":
            out.append(ch)
        elif ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F or ch in "\u2028\u2029":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "`" + "".join(out).replace("</", "<\\/").replace("<!--", "<\\!--") + "`"
