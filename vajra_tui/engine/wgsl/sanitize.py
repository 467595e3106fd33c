"""Uniformity sanitizer: make early-return kernels legal for Tint (browsers).

Models write ``if (row >= M || col >= N) { return; }`` before a
``workgroupBarrier()``. Naga takes it; Tint rejects it and GPUs can hang. We
replace the return with a ``_vajra_active`` flag, keep every barrier (and the
loops/ifs holding them) reached by all invocations, and guard the work that
follows with ``if (_vajra_active) { ... }``.

Two guard policies:

* ``cooperative=True`` (default): inactive invocations still do workgroup-memory
  work (tile loads, reductions) and only global side effects (storage stores,
  atomics, returns) are guarded. This is what a bounds-checked kernel means and
  makes the classic tiled SGEMM correct on ragged edges, which the original
  early-return kernel is not.
* ``cooperative=False`` (strict): everything but declarations and barriers is
  guarded, exactly preserving the original per-invocation semantics (right for
  reductions that rely on zero-initialised workgroup memory for inactive lanes).

A repair is only returned when re-analysis of the result is clean; otherwise the
source comes back unchanged with ``repaired=False`` and the findings.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from vajra_tui.engine.events import Diagnostic
from vajra_tui.engine.wgsl import stmts as ws
from vajra_tui.engine.wgsl.tile_check import check_tile_header
from vajra_tui.engine.wgsl.tokens import compute_entries
from vajra_tui.engine.wgsl.uniformity import Analysis

__all__ = ["SanitizeResult", "sanitize", "check_tile_header"]


@dataclass
class SanitizeResult:
    source: str  # repaired source, or the original when nothing to do / cannot repair
    findings: list[Diagnostic] = field(default_factory=list)  # located in the ORIGINAL source
    diff: str = ""  # unified diff original -> repaired, '' if unchanged
    repaired: bool = False


class _Unrepairable(Exception):
    pass


def sanitize(src: str, prelude: str = "", cooperative: bool = True) -> SanitizeResult:
    """Find barriers in non-uniform control flow in ``main`` and repair early returns.

    ``prelude`` (optional) lets the analysis see the engine's storage bindings
    (loads from read_write storage are non-uniform, as in Tint).
    """
    try:
        entries = compute_entries(src)
    except Exception:  # noqa: BLE001 - not tokenizable by us: Naga/Tint will say why
        entries = []
    if entries and "main" not in entries:
        return _other_entries(src, prelude, entries)
    try:
        an = Analysis(src, prelude)
    except Exception:  # not parseable by us: Naga/Tint will say why
        return SanitizeResult(src)
    if not an.findings:
        return SanitizeResult(src)
    findings = _diagnostics(an)
    try:
        new = _Repair(Analysis(src, prelude, exits=False), cooperative).run()
        if Analysis(new, prelude).findings:
            raise _Unrepairable("still non-uniform after rewrite")
    except Exception:
        return SanitizeResult(src, findings)
    diff = "".join(difflib.unified_diff(
        src.splitlines(keepends=True), new.splitlines(keepends=True), "original", "sanitized"))
    return SanitizeResult(new, findings, diff, True)


def _other_entries(src: str, prelude: str, entries: list[str]) -> SanitizeResult:
    """A kernel as written names its entry points (several, in a multi-pass module): each is
    analysed, and a finding is reported, never repaired (the rewrite knows one entry point)."""
    findings: list[Diagnostic] = []
    for entry in entries:
        try:
            findings += _diagnostics(Analysis(src, prelude, entry))
        except Exception:  # noqa: BLE001 - not parseable by us: Naga/Tint will say why
            continue
    return SanitizeResult(src, findings)


def _diagnostics(an: Analysis) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for f in an.findings:
        b, at = an.toks[f.barrier], an.toks[f.at]
        out.append(Diagnostic(line=b.line, column=b.column,
                              message=f"'{b.text}' must only be called from uniform control flow"))
        value = f" '{f.value}'" if f.value else ""
        if f.cause == "return":
            note = f"note: early return at {at.line}:{at.column} depends on possibly non-uniform value{value}"
        else:
            note = f"note: control flow at {at.line}:{at.column} depends on possibly non-uniform value{value}"
        out.append(Diagnostic(line=at.line, column=at.column, message=note))
    return out


class _Repair:
    """Plans text edits (offset, end, text) over the original source and applies them."""

    def __init__(self, an: Analysis, cooperative: bool) -> None:
        self.an, self.toks, self.src = an, an.toks, an.src
        self.cooperative = cooperative
        self.flag = "_vajra_active"
        while any(t.text == self.flag for t in self.toks):
            self.flag += "_"
        self.edits: list[tuple[int, int, str]] = []
        first_line = self.toks[an.body[0].start] if an.body else self.toks[an.fn.body_close]
        self.unit = self._indent_of(first_line.offset) or "  "

    # ---- planning ----------------------------------------------------------------
    def run(self) -> str:
        body = self.an.body
        first = next((i for i, s in enumerate(body) if self._early_return(s)
                      and self.an.tainted_name(*s.clauses[0].cond)
                      and any(self.an.first_barrier(t.start, t.end) >= 0 for t in body[i + 1:])), None)
        if first is None:
            raise _Unrepairable("no top-level early return to rewrite")
        s0 = self.toks[body[first].start]
        indent = self._indent_of(s0.offset)
        sep = "\n" + indent if indent is not None else " "
        self.edits.append((s0.offset, s0.offset, f"var {self.flag}: bool = true;{sep}"))
        self._guard_list(body[first:], top=True)
        return self._apply()

    def _early_return(self, s: ws.Stmt) -> bool:
        if s.kind != "if" or len(s.clauses) != 1 or not s.clauses[0].body:
            return False
        inner = s.clauses[0].body
        last = inner[-1]
        if last.kind != "return" or self.toks[last.start + 1].text != ";":
            return False
        return not any(t.kind in ("return", "discard") for t in ws.walk(inner[:-1])) and \
            self.an.first_barrier(s.start, s.end) < 0

    def _guard_list(self, stmts: list[ws.Stmt], top: bool = False) -> None:
        segment: list[ws.Stmt] = []
        for s in stmts:
            if top and self._early_return(s):
                ret = s.clauses[0].body[-1]
                a, b = self.toks[ret.start].offset, self.toks[ret.end].end
                text = f"{self.flag} = false;"
                self.edits.append((a, b, text if s.clauses[0].open >= 0 else "{ " + text + " }"))
                kind = "guard" if len(s.clauses[0].body) > 1 and segment else "keep"
            else:
                kind = self._classify(s)
            if kind == "guard":
                segment.append(s)
                continue
            self._wrap(segment)
            segment = []
            if kind == "recurse":
                for c in s.clauses:
                    if c.open < 0:
                        raise _Unrepairable("barrier in a brace-less body")
                    self._guard_list(c.body)
        self._wrap(segment)

    def _classify(self, s: ws.Stmt) -> str:
        an = self.an
        if s.kind == "decl":
            if self._has_global_effect(s):
                raise _Unrepairable("declaration with a side effect after the early return")
            return "keep"
        if an.first_barrier(s.start, s.end) >= 0:
            if s.kind == "simple":
                return "keep"
            if s.kind in ("block", "continuing"):
                return "recurse"
            if s.kind == "if" and not any(c.cond and an.tainted_name(*c.cond) for c in s.clauses):
                return "recurse"
            if s.kind in ("for", "while", "loop") and not an.header_tainted(s) \
                    and an.loop_exit(s) is None:
                return "recurse"
            raise _Unrepairable(f"barrier inside non-uniform {s.kind}")
        if s.kind in ("break", "continue") or self._loop_jump(s):
            return "keep"
        if not self.cooperative:
            return "guard"
        return "guard" if self._has_global_effect(s) else "keep"

    def _loop_jump(self, s: ws.Stmt) -> bool:
        """A break/continue of the enclosing loop sits in ``s`` (guarding it would desync)."""
        if s.kind in ("for", "while", "loop"):
            return False
        return any(c.kind in ("break", "continue") or self._loop_jump(c) for a in s.clauses for c in a.body)

    def _has_global_effect(self, s: ws.Stmt) -> bool:
        an, toks = self.an, self.toks
        for st in ws.walk([s]):
            if st.kind in ("return", "discard"):
                return True
            if st.kind == "simple":
                a = an.assignment(st)
                if a and a[0] not in an.locals | an.workgroup_vars | {"_", self.flag}:
                    return True
            for i in range(st.start, st.end + 1):
                t = toks[i]
                if t.kind != "ident" or toks[i + 1].text != "(":
                    continue
                if t.text.startswith("atomic") and t.text != "atomicLoad":
                    if not (toks[i + 2].text == "&" and toks[i + 3].text in an.workgroup_vars):
                        return True
                elif t.text == "textureStore" or (t.text in an.user_fns and st.kind == "simple"
                                                 and i == st.start):
                    return True
        return False

    # ---- text --------------------------------------------------------------------
    def _indent_of(self, offset: int) -> str | None:
        """Leading whitespace of the line at ``offset`` if only whitespace precedes it."""
        ls = self.src.rfind("\n", 0, offset) + 1
        prefix = self.src[ls:offset]
        return prefix if prefix.strip() == "" else None

    def _wrap(self, seg: list[ws.Stmt]) -> None:
        if not seg:
            return
        a, b = self.toks[seg[0].start].offset, self.toks[seg[-1].end].end
        indent = self._indent_of(a)
        eol = self.src.find("\n", b)
        tail = self.src[b:eol if eol >= 0 else len(self.src)].strip()
        if indent is None or eol < 0 or (tail and not tail.startswith("//")):
            self.edits.append((a, a, f"if ({self.flag}) {{ "))
            self.edits.append((b, b, " }"))
            return
        ls = a - len(indent)
        self.edits.append((ls, ls, f"{indent}if ({self.flag}) {{\n"))
        pos = ls
        while pos <= eol:
            nl = self.src.find("\n", pos)
            if self.src[pos:nl].strip():
                self.edits.append((pos, pos, self.unit))
            pos = nl + 1
        self.edits.append((eol + 1, eol + 1, f"{indent}}}\n"))

    def _apply(self) -> str:
        out, pos = [], 0
        for a, b, text in sorted(self.edits, key=lambda e: (e[0], e[1])):
            if a < pos:
                raise _Unrepairable("overlapping edits")
            out.append(self.src[pos:a] + text)
            pos = b
        out.append(self.src[pos:])
        return "".join(out)

