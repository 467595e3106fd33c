"""A kernel with its lanes reordered within each workgroup: races that lockstep adapters hide.

CPU adapters (lavapipe, SwiftShader) run a workgroup's invocations a SIMD chunk at a time,
each chunk to the next barrier before the next chunk starts, the lanes of one chunk in
lockstep. A reduction whose last steps skip ``workgroupBarrier()`` ("warp-synchronous",
undefined behaviour in WGSL) therefore verifies there, and in the browser's SwiftShader
too, and was crowned; on a GPU that schedules lanes independently it reads stale values.

The rewrite gives each invocation another invocation's place: the kernel sees logical ids
(``local_invocation_id``, ``local_invocation_index``, ``global_invocation_id``) whose lanes
0, 1, 2 ... sit in different physical chunks. A race-free kernel computes exactly what it
computed before (it sees only logical ids, and barriers order memory whoever runs first);
one that relied on neighbouring lanes running together now reads what was not yet written.

Kernels this cannot reorder are left alone (``None``): subgroup operations and
``subgroup_invocation_id`` are physical by definition (``subgroup_size`` is only a number,
and a kernel that branches on it is reordered like any other), and an entry point that
takes its builtins in a struct is not rewritten.
"""

from __future__ import annotations

from vajra_tui.engine.wgsl.expr import split_args
from vajra_tui.engine.wgsl.lexer import IDENT, significant_tokens
from vajra_tui.engine.wgsl.primitives import match_bracket
from vajra_tui.engine.wgsl.tokens import find_entry_point

REORDERED = ("local_invocation_id", "local_invocation_index", "global_invocation_id")
PHYSICAL_ONLY = ("subgroup_invocation_id",)
CHUNK = 8  # lanes a CPU adapter runs in lockstep (lavapipe on AVX2: 8; SwiftShader: 4)


def lane_order(count: int) -> tuple[int, str]:
    """How ``count`` lanes are dealt out: the stride (1: reversed) and the WGSL of the map.

    Physical lane ``p = q * k + r`` becomes logical lane ``r * (count / k) + q``: logical
    neighbours land ``count / k`` physical lanes apart, in different chunks."""
    for k in (CHUNK, CHUNK // 2):
        if count % k == 0 and count >= 2 * k:
            return k, f"(vajra_p % {k}u) * {count // k}u + vajra_p / {k}u"
    return 1, f"{count - 1}u - vajra_p"


def reorder_lanes(source: str, entry: str, workgroup: tuple[int, int, int]) -> str | None:
    """``source`` with ``entry``'s lanes reordered (module docstring), or None where it cannot be."""
    toks = significant_tokens(source)
    if any(t.kind == IDENT and (t.text in PHYSICAL_ONLY or _subgroup_call(t.text)) for t in toks):
        return None
    if not _shares_workgroup_memory(toks):
        return None  # lanes that share nothing cannot race on it: no second build for naive kernels
    fn = find_entry_point(toks, entry)
    count = workgroup[0] * workgroup[1] * workgroup[2]
    if fn is None or count < 2:
        return None
    close = match_bracket(toks, fn.params_open)
    params = _builtin_params(toks[fn.params_open + 1:close])
    if params is None or not any(b in params for b in REORDERED):
        return None
    edits = [(tok.offset, tok.end, f"vajra_phys_{builtin}") for builtin, tok in params.items() if builtin in REORDERED]
    body = toks[fn.body_open]
    edits.append((body.end, body.end, _prologue({b: t.text for b, t in params.items()}, workgroup, count)))
    out = source
    for start, end, text in sorted(edits, reverse=True):
        out = out[:start] + text + out[end:]
    return out


def _shares_workgroup_memory(toks: list) -> bool:
    """Declares a ``var<workgroup>``: what invocations of one workgroup share."""
    return any(t.text == "var" and k + 2 < len(toks) and toks[k + 1].text == "<" and toks[k + 2].text == "workgroup"
               for k, t in enumerate(toks))


def _subgroup_call(name: str) -> bool:
    """A subgroup or quad built-in function (``subgroupAdd``, ``quadBroadcast``): physical lanes."""
    return (name.startswith("subgroup") and name not in ("subgroups", "subgroup_size")) or name.startswith("quad")


def _builtin_params(toks: list) -> dict | None:
    """builtin name -> the parameter's name token; None for a struct parameter (not rewritten).

    A compute entry point takes only builtins, or structs of them."""
    found = {}
    for param in split_args(toks):
        builtin = next((param[k + 3].text for k, t in enumerate(param[:-3])
                        if t.text == "@" and param[k + 1].text == "builtin"), None)
        colon = next((k for k, t in enumerate(param) if t.text == ":"), -1)
        if builtin is None or colon < 1:
            return None
        found[builtin] = param[colon - 1]
    return found


def _prologue(names: dict[str, str], wg: tuple[int, int, int], count: int) -> str:
    """The logical ids, declared under the parameters' own names at the top of the body."""
    x, y, z = wg
    size = f"vec3<u32>({x}u, {y}u, {z}u)"
    if "local_invocation_id" in names:
        phys = f"vajra_phys_local_invocation_id.x + {x}u * (vajra_phys_local_invocation_id.y + " \
               f"{y}u * vajra_phys_local_invocation_id.z)"
    elif "local_invocation_index" in names:
        phys = "vajra_phys_local_invocation_index"
    else:
        g = f"(vajra_phys_global_invocation_id % {size})"
        phys = f"{g}.x + {x}u * ({g}.y + {y}u * {g}.z)"
    _, order = lane_order(count)
    lines = [f"let vajra_p: u32 = {phys};", f"let vajra_l: u32 = {order};",
             f"let vajra_lid = vec3<u32>(vajra_l % {x}u, (vajra_l / {x}u) % {y}u, vajra_l / {x * y}u);"]
    if "local_invocation_id" in names:
        lines.append(f"let {names['local_invocation_id']} = vajra_lid;")
    if "local_invocation_index" in names:
        lines.append(f"let {names['local_invocation_index']} = vajra_l;")
    if "global_invocation_id" in names:
        lines.append(f"let {names['global_invocation_id']} = "
                     f"(vajra_phys_global_invocation_id / {size}) * {size} + vajra_lid;")
    return "\n    " + "\n    ".join(lines) + "\n"


__all__ = ["REORDERED", "lane_order", "reorder_lanes"]
