"""What the loaders check of a workload they import, and how an import failing is said in one line.

A workload's declaration is checked when it is built (``declaration.py``); here is what
a loader adds: that the name it was looked up by holds a ``Workload`` at all
(:func:`as_workload`), that its cheap functions answer at the seed size
(:func:`static_check`), and that whatever importing a file raised becomes one line at
the file's own line (:func:`import_error`: ``mine.py:12: flops: missing``), a field's own
keyword line when it has one (``mine.py:31: rtoll: is no Workload field``). Split from
``loader.py``, whose registry and file loaders both use them.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import io
import re
import tokenize
import traceback
from pathlib import Path
from typing import Any, Callable

from vajra_tui.engine.workloads.base import Workload, WorkloadError
from vajra_tui.engine.workloads.errors import raised

# Workload's fields: an unknown keyword is matched against them ("did you mean 'atol'?").
FIELDS = tuple(f.name for f in dataclasses.fields(Workload))


def as_workload(obj: object, where: str, attr: str) -> Workload:
    """``obj`` (the module's ``attr``) when it is a Workload; else one line saying what it is."""
    if obj is None:
        raise WorkloadError(attr, "not defined: a workload file defines a module-level "
                            f"{attr} = vajra_tui.Workload(...)", where)
    if not isinstance(obj, Workload):
        raise WorkloadError(attr, f"is a {type(obj).__name__}, not a vajra_tui.Workload", where)
    return obj


def static_check(w: Workload, where: str) -> Workload:
    """What the functions return at the seed size, cheaply: lengths, grid, FLOPs, atol, bytes.

    Inputs and the reference are checked where they are computed (the GPU worker), at
    the size that runs.
    """
    try:
        seed = w.size("seed")
        w.checked_lengths(seed)
        if w.output_grid is not None:
            grid = _value("output_grid", w.output_grid, seed)
            if (not isinstance(grid, (tuple, list)) or len(grid) != 2
                    or not all(isinstance(v, (int,)) and not isinstance(v, bool) and v >= 1 for v in grid)):
                raise WorkloadError("output_grid", f"returned {grid!r}: want (x, y), two positive integers")
        for field_name, fn in (("flops", w.flops), ("atol", w.tolerance), ("bytes", w.bytes)):
            if fn is None:
                continue
            value = _value(field_name, fn, seed)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0 \
                    or value == float("inf"):
                raise WorkloadError(field_name, f"returned {value!r}: want a finite number >= 0")
    except WorkloadError as exc:
        raise exc.located(where) from None
    return w


def _value(field_name: str, fn: Callable[[Any], Any], size: dict[str, int]) -> Any:
    try:
        value = fn(size)
    except Exception as exc:  # noqa: BLE001
        raise WorkloadError(field_name, raised(exc)) from None
    try:  # numpy scalars count as numbers
        return value.item() if hasattr(value, "item") and not isinstance(value, (tuple, list)) else value
    except (TypeError, ValueError):
        return value


def import_error(exc: BaseException, path: Path, shown: str) -> WorkloadError:
    """One line for whatever importing the file raised, at the file's own line when known
    (``mine.py:12: flops: missing``)."""
    if isinstance(exc, SyntaxError):
        binary = not_text(path)  # Python's words for it: "source code string cannot contain null bytes"
        if binary is not None:
            return WorkloadError("", binary, shown)
        return WorkloadError("", f"syntax error: {exc.msg}", f"{shown}:{exc.lineno}" if exc.lineno else shown)
    line = next((f.lineno for f in reversed(traceback.extract_tb(exc.__traceback__))
                 if Path(f.filename).resolve() == path), None)
    if isinstance(exc, WorkloadError):  # a declaration check: at the field's own keyword when it has one
        line = keyword_line(path, line, exc.field) or line
        return exc.located(f"{shown}:{line}" if line else shown)
    where = f"{shown}:{line}" if line else shown
    if isinstance(exc, TypeError):
        text = str(exc)
        missing = re.search(r"missing \d+ required (?:keyword-only |positional )?arguments?: (.*)", text)
        unknown = re.search(r"unexpected keyword argument '(\w+)'", text)
        binding = "Binding" in text
        if missing:
            names = re.findall(r"'(\w+)'", missing.group(1))
            what = "bindings" if binding else (names[0] if names else "")
            return WorkloadError(what, f"missing (a {'Binding' if binding else 'Workload'} needs "
                                 f"{', '.join(names)})", where)
        if unknown:
            near = difflib.get_close_matches(unknown.group(1), FIELDS, 1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            line = keyword_line(path, line, unknown.group(1)) or line  # the misspelt keyword's own line
            where = f"{shown}:{line}" if line else shown
            return WorkloadError(unknown.group(1), f"is no Workload field{hint}", where)
    return WorkloadError("", f"importing it {raised(exc)}", where)


def not_text(path: Path) -> str | None:
    """Why the file is no Python source text (NUL bytes, or bytes its encoding cannot
    decode: UTF-8 unless a coding line says otherwise), or None when it is text."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    nul = data.find(b"\0")
    if nul >= 0:
        return f"holds NUL bytes (the first is byte {nul + 1}): a binary file, not Python source in UTF-8 text"
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:  # its first lines are not UTF-8 either (or name an unknown coding)
        encoding = "utf-8"
    try:
        data.decode(encoding)
    except UnicodeDecodeError as exc:
        byte = f"byte {exc.start + 1} is {data[exc.start]:#04x}"
        if encoding.startswith("utf-8"):
            return f"not UTF-8 text ({byte}): a workload file is Python source in UTF-8"
        return f"not {encoding} text, as its coding line says ({byte})"
    except LookupError:
        return None
    return None


def keyword_line(path: Path, line: int | None, name: str) -> int | None:
    """The line of keyword ``name=`` in the call that spans ``line`` (where the traceback put a
    multi-line ``Workload(...)``: its first line), the innermost such call; None when none has it."""
    if not line or not name:
        return None
    try:
        tree = ast.parse(path.read_bytes(), str(path))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    best: tuple[int, int] | None = None  # (the call's span in lines, the keyword's line)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.lineno <= line <= (node.end_lineno or node.lineno):
            continue
        for kw in node.keywords:
            if kw.arg == name:
                span = (node.end_lineno or node.lineno) - node.lineno
                if best is None or span < best[0]:
                    best = (span, kw.lineno)
    return best[1] if best else None
