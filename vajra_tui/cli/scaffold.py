"""``vajra-tui new-workload kernel.wgsl``: a workload file for a published kernel, to complete.

A kernel written for someone else's engine already says most of what a workload
declares: its bindings (group, number, access, element type), its uniform struct's
members, its entry points and workgroup sizes, its template names. This reads them
with the project's WGSL front end (tokens, never regexes over code) and writes a
Python file that imports at once; what only the user knows is left as stubs that
raise ``NotImplementedError("TODO: ...")`` (the text itself is ``scaffold_text``).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from vajra_tui.cli.scaffold_text import Buffer, Entry, Kernel, Scaffold, count_todos, py_str, render
from vajra_tui.engine.errors import UsageError
from vajra_tui.engine.run.kernel_file import read_kernel_file
from vajra_tui.engine.wgsl.consteval import ConstEvalError, evaluate
from vajra_tui.engine.wgsl.expr import split_args
from vajra_tui.engine.wgsl.lexer import IDENT, NUMBER, significant_tokens
from vajra_tui.engine.wgsl.primitives import int_literal, match_bracket
from vajra_tui.engine.wgsl.tokens import (
    ATTR, BindingDecl, FunctionSpan, find_functions, override_names, storage_bindings, typed_consts,
)
from vajra_tui.engine.wgsl.template import JS_ARITHMETIC, JS_PLACEHOLDER, placeholders
from vajra_tui.engine.wgsl.writes import first_write
from vajra_tui.engine.workloads.base import RESERVED, WORKLOAD_NAME
from vajra_tui.engine.workloads.uniforms import UniformError, check_fields, read_struct
from vajra_tui.safe_text import one_line

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_]\w*)\s*\}\}")
DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(\w+)(.*)$", re.M)
TUNE = re.compile(r"^[ \t]*//[ \t]*tune[ \t]*:[ \t]*([A-Za-z_]\w*)", re.M | re.I)
SIZE_WORDS = {"m", "n", "k", "width", "height", "depth", "size", "rows", "cols", "len", "length",
              "count", "batch", "channels"}
SCALARS = {"f32", "u32", "i32", "f16"}
SHORT_VECTORS = {"f": "f32", "u": "u32", "i": "i32", "h": "f16"}  # vec4f, vec2u, ...
AXES = ("x", "y", "z")
ARITH = {"+", "-", "*", "/", "%", ".", "<<", ">>", "&", "|", "^", "["}


def new_workload(args: argparse.Namespace) -> int:
    """Read the kernels, write the new file atomically (never over an existing one), say what is left."""
    kernels = list(args.kernels)
    out = args.out or kernels[0].with_suffix(".py")
    _check_out(out)
    name = args.name if args.name is not None else _default_name(kernels[0])
    if not WORKLOAD_NAME.match(name):
        raise UsageError(f"--name {name!r}: want a letter, then letters, digits, '_' or '-' (64 at most)")
    sources = [(path, read_kernel_file(path)) for path in kernels]
    scaffold = build(sources, out, name)
    text = render(scaffold)
    write_new(out, text)
    todos = count_todos(text)
    entries = ", ".join(e.name for e in scaffold.entries)
    print(f"wrote {one_line(out)}: workload {name!r} for {', '.join(one_line(p) for p in kernels)} "
          f"({len(scaffold.buffers)} bindings; {'entries' if len(scaffold.entries) > 1 else 'entry'} "
          f"{entries}); {todos} TODOs left "
          f"(grep -n TODO {one_line(out)})", file=sys.stderr)
    return 0


def _check_out(out: Path) -> None:
    if out.suffix != ".py":
        raise UsageError(f"--out {one_line(out)}: a workload file ends in .py")
    if out.is_dir():
        raise UsageError(f"--out {one_line(out)} is a directory; give a file name")
    if out.exists() or out.is_symlink():
        raise UsageError(f"{one_line(out)} exists; new-workload never overwrites a file (choose another --out)")


def _default_name(kernel: Path) -> str:
    name = re.sub(r"[^A-Za-z0-9_-]", "_", kernel.stem)
    return (name if name[:1].isalpha() else f"k{name}")[:64]


def write_new(path: Path, text: str) -> None:
    """Write ``text`` beside ``path`` first, then link it into place: a file that appeared
    meanwhile is never replaced, and no half-written file is ever seen."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise UsageError(f"{one_line(path)} exists; new-workload never overwrites a file") from None
        except OSError:  # a file system without hard links: the check just made is what there is
            if path.exists():
                raise UsageError(f"{one_line(path)} exists; new-workload never overwrites a file") from None
            os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _umask() -> int:
    from vajra_tui.engine.store.atomic import current_umask

    return current_umask()


# ---- reading the kernels -------------------------------------------------------------------

def neutral(src: str) -> str:
    """The source with template syntax made plain WGSL for the front end, every line kept:
    ``{{WG}}`` and ``${WG}`` read as the name ``WG``, ``${WG * 2}`` as ``(WG * 2)``, a ``#ifdef``
    line as an empty one (both branches stay)."""
    plain = PLACEHOLDER.sub(lambda m: m.group(1), src)
    plain = JS_PLACEHOLDER.sub(lambda m: f"({m.group(1).strip()})" if JS_ARITHMETIC.fullmatch(m.group(1).strip())
                               else "0", plain)
    return DIRECTIVE.sub("", plain)


def _refuse_resource(shown: str, d: BindingDecl) -> None:
    kind = "sampler" if d.type_text.startswith("sampler") else "texture"
    raise UsageError(f"{shown}:{d.line}: `{d.name}` is a {kind}; Vajra runs storage and uniform buffers "
                     f"only ({kind}s are not supported yet)")


def element(type_text: str) -> tuple[str, str]:
    """(dtype, note) of a storage type: ``array<vec4<f32>>`` is f32, counted in f32 elements."""
    t = re.sub(r"\s+", "", type_text)
    inner = t[6:-1] if t.startswith("array<") and t.endswith(">") else t
    depth, cut = 0, len(inner)
    for k, ch in enumerate(inner):
        depth += (ch == "<") - (ch == ">")
        if ch == "," and depth == 0:
            cut = k
            break
    elem = inner[:cut]
    atomic = re.fullmatch(r"atomic<(\w+)>", elem)
    elem = atomic.group(1) if atomic else elem
    vec = re.fullmatch(r"vec([234])(?:<(\w+)>|([fuih]))", elem)
    scalar = (vec.group(2) or SHORT_VECTORS.get(vec.group(3) or "", "")) if vec else elem
    if scalar not in SCALARS:
        return "f32", f"TODO: element type {elem}: pick the dtype whose elements buffer_len counts"
    if vec:
        n = vec.group(1)
        return scalar, f"dtype {scalar}: buffer_len counts {scalar} elements ({n} per vec{n})"
    return scalar, "atomic: the dtype is its integer type" if atomic else ""


_STATEMENT_PLACEHOLDER = re.compile(r"^[ \t]*\{\{\s*[A-Za-z_]\w*\s*\}\}[ \t]*;?[ \t]*$", re.M)


def _buffers(sources: list[tuple[str, str]]) -> list[Buffer]:
    """One Buffer per (group, binding) slot, first declaration first; textures refused, and
    two modules that put different buffers at one slot too (a workload has one binding table)."""
    found: dict[tuple[int, int], Buffer] = {}
    first: dict[tuple[int, int], tuple[str, BindingDecl]] = {}
    for shown, src in sources:
        for d in storage_bindings(src, include_all=True):
            if d.address_space == "handle":
                _refuse_resource(shown, d)
            if d.address_space not in ("storage", "uniform"):
                continue
            slot = (d.group, d.binding)
            if slot in found:  # within one file: #ifdef branches may declare a slot twice
                if first[slot][0] != shown:
                    _same_buffer(first[slot], (shown, d))
                continue
            found[slot], first[slot] = _buffer(shown, d, sources), (shown, d)
    buffers = sorted(found.values(), key=lambda b: (b.group, b.binding))
    inputs = [_read_only_if_unwritten(b, sources) for b in buffers]
    return inputs if any(b.access == "read_write" for b in inputs) else buffers


def _read_only_if_unwritten(b: Buffer, sources: list[tuple[str, str]]) -> Buffer:
    """A buffer declared read_write that no module writes is an input (gpu.cpp's llm.c
    kernels declare every buffer read_write): scaffolded as "read", which Vajra binds as the
    kernel declares it and holds to being read only. A placeholder alone on its line may be
    code that writes it (burn pastes a loop into ``{{ prng_loop }}``): then it stays an output."""
    if b.access != "read_write" or any(_STATEMENT_PLACEHOLDER.search(src) for _, src in sources):
        return b
    for _, src in sources:
        names = {d.name for d in storage_bindings(src) if (d.group, d.binding) == (b.group, b.binding)}
        if any(first_write(src, name) is not None for name in names):
            return b
    note = "declared read_write, never written: an input" + (f"; {b.note}" if b.note else "")
    return replace(b, access="read", note=note)


def _same_buffer(was: tuple[str, BindingDecl], now: tuple[str, BindingDecl]) -> None:
    """Two declarations of one slot must be one buffer: same address space and type."""
    (a_file, a), (b_file, b) = was, now
    if (a.address_space, _squeezed(a.type_text)) != (b.address_space, _squeezed(b.type_text)):
        raise UsageError(f"{a_file}:{a.line} and {b_file}:{b.line} both bind @group({a.group}) @binding({a.binding}), "
                         f"as different buffers ({_declared(a)}, {_declared(b)}): a workload has one table of "
                         "bindings, so these modules cannot be the passes of one workload")


def _squeezed(type_text: str) -> str:
    return re.sub(r"\s+", "", type_text)


def _declared(d: BindingDecl) -> str:
    access = f", {d.access}" if d.access else ""
    return f"`{d.name}`: var<{d.address_space}{access}> {_squeezed(d.type_text)}"


def _buffer(shown: str, d: BindingDecl, sources: list[tuple[str, str]]) -> Buffer:
    if d.address_space == "storage":
        dtype, note = element(d.type_text)
        return Buffer(d.group, d.binding, d.name, d.access or "read", dtype, d.type_text, note)
    text = re.sub(r"\s+", "", d.type_text)
    named = re.fullmatch(r"[A-Za-z_]\w*", text) is not None and text not in SCALARS
    try:
        if named:
            found = next((m for _, src in sources if (m := read_struct(src, text)) is not None), None)
            if found is None:
                raise UsageError(f"{shown}:{d.line}: `{d.name}` is a uniform {text}, a struct no given "
                                 "file declares")
            fields = tuple(found)
        else:  # a bare vec4<u32>: a struct of that one member lays out the same bytes
            fields = ((d.name, text),)
        check_fields(d.name, fields)
    except UniformError as exc:  # a struct Vajra cannot lay out as the kernel does: said now, not on import
        raise UsageError(f"{shown}:{d.line}: {exc}") from None
    return Buffer(d.group, d.binding, d.name, "uniform", wgsl_type=text, struct=text if named else "",
                  fields=fields)


def _size_dims(buffers: list[Buffer]) -> tuple[list[Buffer], list[str]]:
    """Uniform fields that look like sizes become dims (``M``; ``width`` as ``WIDTH``)."""
    dims: list[str] = []
    taken = {b.name for b in buffers} | RESERVED
    out = []
    for b in buffers:
        carried = {}
        for member, kind in b.fields:
            looks = re.fullmatch(r"[A-Z][A-Z0-9_]*", member) or member.lower() in SIZE_WORDS
            dim = member.upper()
            if kind in ("u32", "i32") and looks and dim not in taken and dim not in dims:
                dims.append(dim)
            if dim in dims and kind in ("u32", "i32") and looks:
                carried[member] = dim
        out.append(replace(b, field_dims=carried) if carried else b)
    return out, dims


def _axis(arg: list, names: dict[str, set[str]], known: dict) -> str:
    """One @workgroup_size argument as a Python expression (over size and params), or ''."""
    if len(arg) == 1 and arg[0].kind == NUMBER:
        value = int_literal(arg[0].text)
        return "" if value is None else str(value)
    if len(arg) == 1 and arg[0].kind == IDENT:
        word = arg[0].text
        if word in names["override"] or word in names["tune"]:
            default = getattr(known.get(word), "value", None)
            return f"params.get({py_str(word)}, {default})" if isinstance(default, int) else f"params[{py_str(word)}]"
        if word in names["dims"]:
            return f"size[{py_str(word)}]"
        if word in names["template"]:
            return f"defines(size)[{py_str(word)}]"
    try:
        return str(int(evaluate(arg, known).value))
    except (ConstEvalError, ValueError, TypeError):
        return ""


def _workgroup(f: FunctionSpan, toks: list, names: dict[str, set[str]], known: dict) -> Entry:
    """The entry point with its ``@workgroup_size`` read axis by axis (KERNEL for its module: set later)."""
    for i in range(f.start, f.params_open):
        if toks[i].kind == ATTR and toks[i + 1].text == "workgroup_size" and toks[i + 2].text == "(":
            args = [a for a in split_args(toks[i + 3:match_bracket(toks, i + 2)]) if a][:3]
            shown = ", ".join("".join(t.text for t in a) for a in args)
            return Entry(f.name, "KERNEL", tuple(_axis(a, names, known) for a in args) or ("",), shown)
    return Entry(f.name, "KERNEL", ("",), "?")


class _Covers:
    """Which dim each ``global_invocation_id`` axis covers, as the kernel's own guards say.

    A grid guessed from the order of the dims is wrong for most 2-D kernels (a matmul's
    ``M, K, N`` put K along x), so an axis gets a dim only when a name that indexes an
    output is that axis (``let row = gid.x;``, or ``gid.x`` itself) and is compared with
    the dim (``row < params.M``, ``gid.x >= N``). Anything less is left to the user.
    """

    def __init__(self, toks: list, f: FunctionSpan, dims: set[str], members: dict[tuple[str, str], str],
                 outputs: set[str]) -> None:
        self.toks, self.dims, self.members = toks, dims, members
        self.gid = next((toks[i + 5].text for i in range(f.params_open, f.body_open - 5)
                         if toks[i].kind == ATTR and toks[i + 1].text == "builtin"
                         and toks[i + 3].text == "global_invocation_id"), None)
        self.alias: dict[str, str] = {}
        self.used: set[str] = set()
        self.indexing: set[str] = set()
        self.bounds: dict[str, str] = {}
        if self.gid is not None:
            self._read(range(f.body_open, f.body_close), outputs)

    def _at(self, j: int) -> str:
        """Token ``j``'s text, "" past either end (a kernel cut short is read, never indexed past)."""
        return self.toks[j].text if 0 <= j < len(self.toks) else ""

    def _ref(self, j: int) -> tuple[str, int] | None:
        """(axis, next index) when token ``j`` starts ``gid.x`` or an alias of one."""
        at = self._at
        if at(j) == self.gid and at(j + 1) == "." and at(j + 2) in AXES:
            return at(j + 2), j + 3
        return (self.alias[at(j)], j + 1) if at(j) in self.alias else None

    def _dim(self, j: int) -> tuple[str, int] | None:
        """(dim, next index) when token ``j`` starts a dim: ``N``, or a uniform member carrying one."""
        at = self._at
        if at(j + 1) == "." and (at(j), at(j + 2)) in self.members:
            return self.members[(at(j), at(j + 2))], j + 3
        return (at(j), j + 1) if at(j) in self.dims and self.toks[j].kind == IDENT else None

    def _read(self, span: range, outputs: set[str]) -> None:
        t, at = self.toks, self._at
        for j in span:
            if at(j) in ("let", "var") and t[j + 1].kind == IDENT:  # let row: u32 = gid.x;
                k = j + 2 + (2 if at(j + 2) == ":" else 0)
                if at(k) == "=" and at(k + 4) == ";" and (ref := self._ref(k + 1)) and ref[1] == k + 4:
                    self.alias[at(j + 1)] = ref[0]
            if (ref := self._ref(j)) is not None:
                self.used.add(ref[0])
            if at(j) in outputs and at(j + 1) == "[":
                self.indexing |= {r[0] for k in range(j + 2, match_bracket(t, j + 1)) if (r := self._ref(k))}
            if at(j - 1) in ARITH:
                continue
            for first, ops, second in ((self._ref, ("<", ">="), self._dim), (self._dim, (">", "<="), self._ref)):
                a = first(j)
                b = second(a[1] + 1) if a is not None and at(a[1]) in ops else None
                if a is not None and b is not None and at(b[1]) not in ARITH:
                    axis, dim = (a[0], b[0]) if first == self._ref else (b[0], a[0])
                    self.bounds.setdefault(axis, dim)

    def axes(self) -> tuple[str, ...] | None:
        """Per axis the dim it covers ("" for an axis the kernel never reads), or None."""
        known = {a: d for a, d in self.bounds.items() if a in self.indexing}
        if not self.used or not self.used <= known.keys():
            return None
        return tuple(known.get(a, "") for a in AXES)


def _entries(sources: list[tuple[str, str]], names: dict[str, set[str]], buffers: list[Buffer]) -> list[Entry]:
    entries = []
    members = {(b.name, m): d for b in buffers for m, d in b.field_dims.items()}
    outputs = {b.name for b in buffers if b.access == "read_write"}
    for number, (_, src) in enumerate(sources):
        toks = significant_tokens(src)
        known = typed_consts(toks)
        local = {**names, "override": set(override_names(toks))}
        var = "KERNEL" if number == 0 else f"KERNEL_{number + 1}"
        for f in find_functions(toks):
            if "compute" in f.attributes:
                covers = _Covers(toks, f, names["dims"], members, outputs)
                entries.append(replace(_workgroup(f, toks, local, known), source_var=var, covers=covers.axes(),
                                       axes_used=tuple(sorted(covers.used))))
    return entries


def _kernel_expr(kernel: Path, out: Path) -> str:
    """The kernel's path relative to the workload file's folder, as Python."""
    try:
        rel = Path(os.path.relpath(kernel.resolve(), out.resolve().parent)).as_posix()
    except ValueError:  # another drive (Windows): the absolute path is all there is
        return f"Path({py_str(kernel.resolve().as_posix())})"
    if "/" not in rel:
        return f"Path(__file__).with_name({py_str(rel)})"
    return f"(Path(__file__).parent / {py_str(rel)})"


def build(files: list[tuple[Path, str]], out: Path, name: str) -> Scaffold:
    """Everything the kernels say, as the scaffold the file is written from."""
    shown = ", ".join(one_line(p) for p, _ in files)
    sources = [(one_line(p), neutral(src)) for p, src in files]
    buffers, dims = _size_dims(_buffers(sources))
    if not any(b.access == "read_write" for b in buffers):
        raise UsageError(f"{shown}: no read_write storage buffer: a workload verifies at least one output")
    template = list(dict.fromkeys(n for _, src in files for n in placeholders(src)))
    tuned = {m.group(1) for _, src in files for m in TUNE.finditer(src)}
    overrides = {n for _, src in sources for n in override_names(src)}
    guessed = not dims
    dims = dims or ["N"]
    names = {"dims": set(dims), "tune": tuned, "template": set(template)}
    entries = _entries(sources, names, buffers)
    if not entries:
        raise UsageError(f"{shown}: no @compute entry point: a workload dispatches at least one")
    defines = tuple(n for n in template if n not in dims and n not in tuned and n not in overrides)
    kernels = tuple(Kernel("KERNEL" if i == 0 else f"KERNEL_{i + 1}", _kernel_expr(p, out), p.name)
                    for i, (p, _) in enumerate(files))
    return Scaffold(name, out.name, kernels, tuple(buffers), tuple(entries), tuple(dims), guessed, defines)
