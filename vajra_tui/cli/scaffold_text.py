"""The text of a scaffolded workload file: what ``vajra-tui new-workload`` read, written as Python.

Everything Vajra could read from the kernel (bindings, struct members, entry points,
workgroup sizes, template names) is written out as it is; everything only the user
knows (inputs, the reference, sizes, tolerances) is a stub that raises
``NotImplementedError("TODO: ...")`` when called, so the file imports at once and
fails only where it is still unfinished, naming what is missing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

TODO = "TODO"


@dataclass(frozen=True)
class Buffer:
    """One resource binding as the workload declares it (access: read, read_write, uniform)."""

    group: int
    binding: int
    name: str
    access: str
    dtype: str = "f32"
    wgsl_type: str = ""
    note: str = ""  # what the type means for buffer_len (vec4 counts, a guessed dtype)
    struct: str = ""
    fields: tuple[tuple[str, str], ...] = ()
    field_dims: dict[str, str] = field(default_factory=dict)  # uniform field -> dim it carries


@dataclass(frozen=True)
class Entry:
    """A compute entry point, the module it is in, and its workgroup size as Python expressions."""

    name: str
    source_var: str  # KERNEL, KERNEL_2, ...
    workgroup: tuple[str, ...]  # per axis: "16", 'params["WG"]', ... or "" (not readable)
    wgsl_size: str = "?"  # the @workgroup_size arguments as the kernel writes them
    # per axis x, y, z: the dim its guards bound it by ("" unread), None when the kernel does not say
    covers: tuple[str, ...] | None = None
    axes_used: tuple[str, ...] = ()  # the global_invocation_id axes the entry reads


@dataclass(frozen=True)
class Kernel:
    var: str  # the Python name the file reads it into
    path_expr: str  # Python expression of its path, relative to the workload file
    shown: str  # its file name, for comments


@dataclass(frozen=True)
class Scaffold:
    name: str
    out_name: str
    kernels: tuple[Kernel, ...]
    buffers: tuple[Buffer, ...]
    entries: tuple[Entry, ...]
    dims: tuple[str, ...]
    dims_guessed: bool  # True when no uniform field looked like a size: ("N",)
    defines: tuple[str, ...]  # template names the workload must give values to


def py_str(text: str) -> str:
    """A Python string literal of ``text``, double-quoted where that needs no escaping."""
    literal = repr(text)
    if literal.startswith("'") and '"' not in text:
        literal = '"' + literal[1:-1] + '"'
    return literal


def count_todos(text: str) -> int:
    """How many places of the written file are left for the user (one per marked line)."""
    return sum(1 for line in text.splitlines() if TODO in line)


def render(s: Scaffold) -> str:
    """The whole workload file."""
    parts = [_head(s), _stubs(s), _workload(s)]
    return "\n\n\n".join(parts).rstrip() + "\n"


def _head(s: Scaffold) -> str:
    names = ", ".join(k.shown for k in s.kernels)
    imports = "Binding, Pass, Workload" if len(s.entries) > 1 else "Binding, Workload"
    reads = "\n".join(f"{k.var} = {k.path_expr}.read_text(encoding=\"utf-8\")" for k in s.kernels)
    return f'''"""A Vajra workload for {names}, scaffolded by `vajra-tui new-workload`.

Complete each place marked to do (README "Your own kernels"), then:

    vajra-tui bench -w {s.out_name}
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vajra_tui import {imports}

{reads}


def todo(what: str) -> None:
    """Stands in for a value only you know: raises until you replace it."""
    raise NotImplementedError(f"TODO: {{what}}")


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)'''


def _storage(s: Scaffold) -> list[Buffer]:
    return [b for b in s.buffers if b.access != "uniform"]


def _stubs(s: Scaffold) -> str:
    storage = _storage(s)
    inputs = [b for b in storage if b.access == "read"]
    outputs = [b for b in storage if b.access == "read_write"]
    lens = "\n".join(f"    #   {py_str(b.name)}: ...,  # {b.wgsl_type}{'; ' + b.note if b.note else ''}"
                     for b in storage)
    made = "\n".join(f"    #   {py_str(b.name)}: {_example(b)}," for b in inputs) or "    #   (no read-only input: see the read_write bindings' notes)"
    out_names = ", ".join(b.name for b in outputs)
    blocks = [f'''def buffer_len(size: dict[str, int]) -> dict[str, int]:
    # TODO: elements of each storage buffer at this size (dims: {", ".join(s.dims)}):
{lens}
    raise NotImplementedError("TODO: buffer_len: elements of {", ".join(b.name for b in storage)}")''',
              f'''def make_inputs(size: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    # TODO: one array per input, of its binding's dtype, buffer_len(size)[name] elements, e.g.
    # n = buffer_len(size)
{made}
    # (a read_write binding you make "inout" gets its initial contents here too)
    raise NotImplementedError("TODO: make_inputs: the inputs' contents")''',
              f'''def reference(size: dict[str, int], inputs: dict[str, np.ndarray]):
    # TODO: what the kernel leaves in {out_names}, computed in float64 from inputs (integer outputs as
    # integer arrays); a dict {{"{outputs[0].name if outputs else 'OUT'}": ...}} keyed by output name when there are several
    raise NotImplementedError("TODO: reference: the expected {out_names}")''',
              '''def flops(size: dict[str, int]) -> float:
    # TODO: floating-point operations of one run (0.0 for pure data movement: judged by GB/s)
    raise NotImplementedError("TODO: flops: operations per run")''']
    if s.defines:
        values = "\n".join(f"        {py_str(n)}: todo({py_str(f'the value of template name {n}')}),"
                           for n in s.defines)
        blocks.append(f'''def defines(size: dict[str, int]) -> dict[str, object]:
    # TODO: a value for each template name of the kernel ({{{{NAME}}}}, #ifdef NAME) at this size
    return {{
{values}
    }}''')
    return "\n\n\n".join(blocks)


def _example(b: Buffer) -> str:
    """An input of the binding's dtype: random normals for floats, small integers for integers."""
    numpy = {"f32": "float32", "f16": "float16", "i32": "int32", "u32": "uint32"}[b.dtype]
    if b.dtype in ("i32", "u32"):
        return f"rng.integers(0, 100, n[{py_str(b.name)}], dtype=np.{numpy})"
    return f"rng.standard_normal(n[{py_str(b.name)}]).astype(np.{numpy})"


def _binding(b: Buffer) -> str:
    group = f", group={b.group}" if b.group else ""
    if b.access == "uniform":
        return _uniform(b, group)
    text = f"        Binding({b.binding}, {py_str(b.name)}, {py_str(b.access)}, {py_str(b.dtype)}{group}),"
    notes = [b.wgsl_type] + ([b.note] if b.note else [])
    if b.access == "read_write":
        notes.append('TODO: "inout" if it holds an input, fill=0 if it accumulates')
    return f"{text}  # {'; '.join(notes)}"


def _uniform(b: Buffer, group: str) -> str:
    fields = ", ".join(f"({py_str(n)}, {py_str(t)})" for n, t in b.fields)
    fields = f"({fields},)" if len(b.fields) == 1 else f"({fields})"
    pairs = [f"{py_str(n)}: " + (f"size[{py_str(b.field_dims[n])}]" if n in b.field_dims
                                 else f"todo({py_str(n + ' value')})") for n, _ in b.fields]
    values = ", ".join(pairs)
    missing = [n for n, _ in b.fields if n not in b.field_dims]
    why = (f"TODO: the values of {', '.join(missing)}" if missing else "TODO: check each value")
    if not b.struct:
        why += f"; the kernel's uniform is a bare {b.wgsl_type}: one member of that type, same bytes"
    struct = f", struct={py_str(b.struct)}" if b.struct else ""
    if len(values) > 60:  # one member a line
        values = "\n" + "".join(f"                    {v},\n" for v in pairs) + "                "
    return (f"        Binding({b.binding}, {py_str(b.name)}, \"uniform\"{group}{struct},\n"
            f"                fields={fields},\n"
            f"                values=lambda size, params: {{{values}}}),  # {why}")


def _grid(e: Entry, dims: tuple[str, ...]) -> tuple[str, str]:
    """``lambda size, params: (...)`` and its comment.

    Each axis covers the dim the kernel's own guards bound it by (``row < params.M`` for
    ``let row = gid.x``). A one-axis kernel with no such guard gets the first dim, marked as
    a guess. Otherwise the grid is a ``todo(...)`` that raises when the workload is run:
    guessing from the order of the dims (a matmul's M, K, N put K along x) verifies nothing
    and mis-times whatever it happens to cover.
    """
    wg = list(e.workgroup) + ["1"] * (3 - len(e.workgroup))
    if e.covers is not None:
        axes, said = list(e.covers), ", ".join(f"{a} covers {d}" for a, d in zip("xyz", e.covers) if d)
        why = f"from the kernel's guards on the output's index: {said}; check"
    elif set(e.axes_used) <= {"x"} and wg[1:] == ["1", "1"] and dims:
        axes, why = [dims[0], "", ""], f"guessed: one invocation per element of {dims[0]} along x"
    else:
        wx, wy = (w or "?" for w in wg[:2])
        wanted = (f"grid= of entry {e.name} (@workgroup_size({e.wgsl_size})): workgroups along x, y, z; "
                  f"say which dim of the output each axis covers, e.g. (ceil_div(size[\"COLS\"], {wx}), "
                  f"ceil_div(size[\"ROWS\"], {wy}), 1) for ROWS x COLS outputs, one per invocation")
        return (f"lambda size, params: todo({py_str(wanted)})",
                "  # TODO: new-workload could not tell which dim each axis covers")
    parts = []
    for dim, size in zip(axes, wg):
        if not dim:
            parts.append("1")
        elif not size:
            parts.append(f"ceil_div(size[{py_str(dim)}], todo(\"the workgroup size\"))")
        else:
            parts.append(f"ceil_div(size[{py_str(dim)}], {size})")
    return (f"lambda size, params: ({', '.join(parts)})",
            f"  # TODO: workgroups along x, y, z for {e.name}'s @workgroup_size({e.wgsl_size}); {why}")


def _dispatch(s: Scaffold) -> list[str]:
    if len(s.entries) == 1:
        e = s.entries[0]
        grid, why = _grid(e, s.dims)
        return [f"    entry={py_str(e.name)},", f"    grid={grid},{why}"]
    lines = ["    passes=(  # TODO: the order they run in (here: as found in the source)"]
    shared = {e.name for e in s.entries if sum(o.name == e.name for o in s.entries) > 1}
    for number, e in enumerate(s.entries, 1):
        source = f", source={e.source_var}" if e.source_var != "KERNEL" else ""
        # one entry name in two modules: each pass needs a name of its own (its time is shown by it)
        label = f", name={py_str(f'{e.name}_{number}')}" if e.name in shared else ""
        lines.append(f"        Pass(entry={py_str(e.name)}{source}{label},")
        grid, why = _grid(e, s.dims)
        lines.append(f"             grid={grid}),{why}")
    lines.append("    ),")
    return lines


def _workload(s: Scaffold) -> str:
    integer = all(b.dtype in ("i32", "u32") for b in _storage(s) if b.access == "read_write")
    dims = ", ".join(py_str(d) for d in s.dims) + ("," if len(s.dims) == 1 else "")
    seed = ", ".join(f"{py_str(d)}: 256" for d in s.dims)
    whence = "guessed: no uniform field looked like a size" if s.dims_guessed else "from the uniform fields"
    lines = ["WORKLOAD = Workload(",
             f"    name={py_str(s.name)},",
             f"    summary=\"TODO: one line: what {s.name} computes\",",
             f"    dims=({dims}),  # TODO: the size constants, in the order --size fills them ({whence})",
             f"    presets={{\"seed\": {{{seed}}}}},  # TODO: a small size that checks fast; \"large\" optional",
             "    bindings=(",
             *[_binding(b) for b in s.buffers],
             "    ),",
             "    buffer_len=buffer_len,",
             "    make_inputs=make_inputs,",
             "    reference=reference,",
             "    flops=flops,",
             "    baseline=KERNEL,",
             *_dispatch(s)]
    if s.defines:
        lines.append("    defines=defines,")
    if integer:
        lines.append("    atol=0.0,  # TODO: integer outputs compare exactly (atol=0, rtol=0); check")
        lines.append("    rtol=0.0,")
    else:
        lines.append("    atol=1e-4,  # TODO: the absolute tolerance (a float, or a function of the size)")
    lines.append(")")
    return "\n".join(lines)
