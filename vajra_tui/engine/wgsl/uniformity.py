"""Tint-style uniformity analysis of a compute entry point (a conservative subset).

Naga accepts barriers in non-uniform control flow; Tint rejects them and real
GPUs may hang. We taint values derived from per-invocation builtins (and loads
of workgroup / read_write storage memory, as Tint does), then find barriers
reached after a non-uniform ``return`` or inside non-uniform ``if``/loops.
"""

from __future__ import annotations

from dataclasses import dataclass

from vajra_tui.engine.wgsl import stmts as ws
from vajra_tui.engine.wgsl.tokens import (
    IDENT, FunctionSpan, Token, find_entry_point, find_functions, match_bracket, significant_tokens,
    storage_bindings,
)

NONUNIFORM_BUILTINS = frozenset({
    "local_invocation_id", "global_invocation_id", "local_invocation_index",
    "subgroup_invocation_id", "sample_index", "position", "front_facing", "sample_mask",
})
BARRIERS = frozenset({"workgroupBarrier", "storageBarrier", "textureBarrier", "workgroupUniformLoad"})
ASSIGN_OPS = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "++", "--"})


@dataclass(frozen=True)
class Finding:
    """A barrier reached in non-uniform control flow, and why."""

    barrier: int  # significant-token index of the barrier call's name
    cause: str  # 'return' | 'if' | 'loop'
    at: int  # token index of the early return, or of the non-uniform condition
    value: str  # the non-uniform name the condition depends on ('' if unknown)


class Analysis:
    """Taint + findings for one source; holds the parse for the rewriter."""

    def __init__(self, src: str, prelude: str = "", entry: str = "main", exits: bool = True) -> None:
        """``exits=False`` ignores the control taint of non-uniform returns (what a
        repaired kernel will see), for planning the rewrite."""
        self.src, self.exits = src, exits
        self.toks: list[Token] = significant_tokens(src)
        fn = find_entry_point(self.toks, entry)
        if fn is None:
            raise ws.ParseError(f"no @compute fn {entry}")
        self.fn: FunctionSpan = fn
        self.body = ws.parse_block(self.toks, fn.body_open)
        self.workgroup_vars, self.rw_storage = self._module_vars(prelude)
        self.barrier_fns = self._barrier_fns()
        self.user_fns = {f.name for f in find_functions(self.toks)}
        self.locals: set[str] = set()
        self.tainted: set[str] = self._params()
        for s in ws.walk(self.body):
            if s.kind == "decl":
                self.locals.add(self.toks[s.start + 1].text)
            if s.kind == "for" and s.header and self.toks[s.header[0]].text in ("var", "let"):
                self.locals.add(self.toks[s.header[0] + 1].text)
        for _ in range(8):  # taint to a fixpoint (loops carry values backwards)
            before = len(self.tainted)
            self._exit = False
            self._taint(self.body, False)
            if len(self.tainted) == before:
                break
        self.findings: list[Finding] = []
        self._exit_at: int | None = None
        self._exit_val = ""
        self._report(self.body, None, "")

    # ---- facts about the module -------------------------------------------------
    def _module_vars(self, prelude: str) -> tuple[set[str], set[str]]:
        wg, rw = set(), set()
        depth = 0
        for i, t in enumerate(self.toks):
            if t.text in ("{", "}"):
                depth += 1 if t.text == "{" else -1
            elif depth == 0 and t.text == "var" and self.toks[i + 1].text == "<":
                space = self.toks[i + 2].text
                close = next(k for k in range(i, len(self.toks)) if self.toks[k].text in (">", ">>"))
                if space == "workgroup":
                    wg.add(self.toks[close + 1].text)
        for b in storage_bindings(self.src + "\n" + prelude):
            if b.access != "read":
                rw.add(b.name)
        return wg, rw

    def _barrier_fns(self) -> set[str]:
        names = set(BARRIERS)
        fns = [f for f in find_functions(self.toks) if f.name != self.fn.name]
        for _ in range(len(fns) + 1):
            new = {f.name for f in fns if self.first_barrier(f.body_open, f.body_close, names) >= 0}
            if new <= names:
                break
            names |= new
        return names

    def _params(self) -> set[str]:
        toks, out = self.toks, set()
        structs = self._nonuniform_structs()
        close = match_bracket(toks, self.fn.params_open)
        for i in range(self.fn.params_open + 1, close):
            if toks[i].text == "builtin" and toks[i + 2].text in NONUNIFORM_BUILTINS:
                j = match_bracket(toks, i + 1) + 1
                out.add(toks[j].text)
            elif toks[i].text == ":" and toks[i + 1].text in structs:
                out.add(toks[i - 1].text)
        return out

    def _nonuniform_structs(self) -> set[str]:
        out = set()
        for i, t in enumerate(self.toks):
            if t.text == "struct" and i + 2 < len(self.toks):
                close = match_bracket(self.toks, i + 2)
                if any(self.toks[k].text in NONUNIFORM_BUILTINS for k in range(i, close)):
                    out.add(self.toks[i + 1].text)
        return out

    # ---- token queries -------------------------------------------------------------
    def first_barrier(self, a: int, b: int, names: set[str] | None = None) -> int:
        """Index of the first barrier call within tokens a..b, -1 if none."""
        names = names or self.barrier_fns
        for i in range(a, b + 1):
            t = self.toks[i]
            if t.kind == IDENT and t.text in names and self.toks[i + 1].text == "(":
                return i
        return -1

    def tainted_name(self, a: int, b: int) -> str:
        """First non-uniform name read in tokens a..b ('' when the range is uniform)."""
        bad = self.tainted | self.workgroup_vars | self.rw_storage
        i = a
        while i <= b:
            t = self.toks[i]
            if t.text == "workgroupUniformLoad" and self.toks[i + 1].text == "(":
                i = match_bracket(self.toks, i + 1) + 1
                continue
            if t.kind == IDENT and t.text in bad and self.toks[i - 1].text != ".":
                return t.text
            i += 1
        return ""

    def assignment(self, s: ws.Stmt) -> tuple[str, int] | None:
        """(root name, operator index) of a simple assignment / increment statement."""
        depth = 0
        for i in range(s.start, s.end + 1):
            t = self.toks[i].text
            if t in ("(", "["):
                depth += 1
            elif t in (")", "]"):
                depth -= 1
            elif depth == 0 and t in ASSIGN_OPS:
                return self.lvalue_root(i), i
        return None

    def lvalue_root(self, op: int) -> str:
        """Root variable written by the assignment whose operator is at ``op``."""
        i, root = op - 1, ""
        while i >= self.fn.body_open:
            t = self.toks[i]
            if t.text == "]":
                i = self._open_of(i) - 1
                continue
            if t.kind == IDENT or t.text == "_":
                root = t.text
                if self.toks[i - 1].text == ".":
                    i -= 2
                    continue
            elif t.text == ")":
                i = self._open_of(i) - 1
                continue
            break
        return root

    def _open_of(self, close: int) -> int:
        depth = 0
        for i in range(close, -1, -1):
            t = self.toks[i].text
            depth += t in (")", "]")
            depth -= t in ("(", "[")
            if depth == 0:
                return i
        return 0

    # ---- passes ---------------------------------------------------------------------
    def _taint(self, stmts: list[ws.Stmt], ctrl: bool) -> None:
        for s in stmts:
            ctrl = ctrl or self._exit
            if s.kind == "decl":
                eq = next((k for k in range(s.start, s.end) if self.toks[k].text == "="), -1)
                if ctrl or (eq > 0 and self.tainted_name(eq + 1, s.end)):
                    self.tainted.add(self.toks[s.start + 1].text)
            elif s.kind == "simple":
                a = self.assignment(s)
                if a and a[0] in self.locals and (ctrl or self.tainted_name(a[1] + 1, s.end)):
                    self.tainted.add(a[0])
            elif s.kind in ("return", "discard") and ctrl:
                self._exit = self.exits
            elif s.kind == "if":
                arm_ctrl = ctrl
                for c in s.clauses:
                    if c.cond and self.tainted_name(*c.cond):
                        arm_ctrl = True
                    self._taint(c.body, arm_ctrl)
            elif s.clauses:
                hdr = bool(s.header and self.tainted_name(*s.header))
                init, cond, upd = ws.for_parts(self.toks, s)
                self._taint([p for p in (init, upd) if p], ctrl)
                if s.kind == "for":
                    hdr = bool(cond and self.tainted_name(*cond))
                loop_ctrl = ctrl or hdr or self.loop_exit(s) is not None
                self._taint(s.body, loop_ctrl)
                if upd:
                    self._taint([upd], loop_ctrl)

    def header_tainted(self, s: ws.Stmt) -> str:
        """Non-uniform name in a loop's condition / switch selector ('' when uniform)."""
        rng = ws.for_parts(self.toks, s)[1] if s.kind == "for" else s.header
        return self.tainted_name(*rng) if rng else ""

    def loop_exit(self, loop: ws.Stmt) -> int | None:
        """Condition index of a non-uniform break/continue in ``loop`` (not nested loops)."""
        if loop.kind not in ("for", "while", "loop"):
            return None

        def scan(stmts: list[ws.Stmt], cond: int | None) -> int | None:
            for s in stmts:
                if s.kind in ("break", "continue") and cond is not None:
                    return cond
                if s.kind == "break" and self.toks[s.start + 1].text == "if":
                    if self.tainted_name(s.start + 2, s.end):
                        return s.start + 2
                if s.kind == "if":
                    c2 = cond
                    for c in s.clauses:
                        if c.cond and self.tainted_name(*c.cond):
                            c2 = c2 if c2 is not None else c.cond[0]
                        hit = scan(c.body, c2)
                        if hit is not None:
                            return hit
                elif s.kind in ("block", "continuing"):
                    hit = scan(s.body, cond)
                    if hit is not None:
                        return hit
            return None

        return scan(loop.body, None)

    def _report(self, stmts: list[ws.Stmt], ctrl: int | None, val: str) -> None:
        for s in stmts:
            if s.kind in ("return", "discard"):
                if ctrl is not None and self._exit_at is None:
                    self._exit_at, self._exit_val = s.start, val
                continue
            if s.kind == "if":
                c_ctrl, c_val = ctrl, val
                for c in s.clauses:
                    name = self.tainted_name(*c.cond) if c.cond else ""
                    if name and c_ctrl is None and c.cond:
                        c_ctrl, c_val = c.cond[0], name
                    self._report(c.body, c_ctrl, c_val)
                continue
            if s.kind in ("for", "while", "loop", "block", "continuing"):
                l_ctrl, l_val = ctrl, val
                if s.header and ctrl is None and s.kind != "for":
                    name = self.tainted_name(*s.header)
                    l_ctrl, l_val = (s.header[0], name) if name else (None, "")
                cond = ws.for_parts(self.toks, s)[1]
                if s.kind == "for" and ctrl is None and cond and self.tainted_name(*cond):
                    l_ctrl, l_val = cond[0], self.tainted_name(*cond)
                ex = self.loop_exit(s)
                if l_ctrl is None and ex is not None:
                    l_ctrl, l_val = ex, self.tainted_name(ex, ex + 40)
                self._report(s.body, l_ctrl, l_val)
                continue
            if s.kind == "switch" and ctrl is None and s.header:
                name = self.tainted_name(*s.header)
                ctrl, val = (s.header[0], name) if name else (None, "")
                b = self.first_barrier(s.start, s.end)
                if b >= 0 and ctrl is not None and self._exit_at is None:
                    self._add(Finding(b, "if", ctrl, val))
                ctrl, val = None, ""
            b = self.first_barrier(s.start, s.end)
            if b >= 0:
                if self._exit_at is not None:
                    self._add(Finding(b, "return", self._exit_at, self._exit_val))
                elif ctrl is not None:
                    self._add(Finding(b, "if", ctrl, val))

    def _add(self, f: Finding) -> None:
        if all((g.cause, g.at) != (f.cause, f.at) for g in self.findings):
            self.findings.append(f)
