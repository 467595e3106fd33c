"""A verified kernel verified once more with its lanes reordered (wgsl/lanes.py says why).

A kernel whose outputs change when its invocations trade places within the workgroup
depends on which of them run together: a race on workgroup memory that the adapter's
lockstep chunks hid. Such a kernel verified on lavapipe and in the browser's SwiftShader,
and was crowned; before a crown (browser/crown.py) it is now rejected, with the seed and the
outputs that changed, and the crown passes on. The reordered copy is compiled and dispatched
once, on the run's fresh seed, then released: a winner pays for it once, other kernels never.
A kernel the rewrite does not apply to, or whose rewrite does not build, is not judged here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from vajra_tui.engine.events import Notice
from vajra_tui.engine.gpu.client import WorkerCrashed, WorkerError, WorkerTimeout
from vajra_tui.engine.gpu.protocol import Compile, Drop, PassSpec, Verify
from vajra_tui.engine.wgsl.consteval import ConstEvalError
from vajra_tui.engine.wgsl.lanes import reorder_lanes
from vajra_tui.engine.wgsl.tokens import read_workgroup_size

if TYPE_CHECKING:
    from vajra_tui.engine.admission.contract import Stitched
    from vajra_tui.engine.events import CandidateResult

SUFFIX = "~lanes"
DROP_TIMEOUT_S = 30.0


def _reordered(source: str, entry: str, constants: dict[str, Any] | None) -> str | None:
    try:
        size = read_workgroup_size(source, {k: int(v) for k, v in (constants or {}).items()
                                            if isinstance(v, (int, bool))}, entry)
    except (ConstEvalError, ValueError):
        return None
    return reorder_lanes(source, entry, size)


def reordered_request(request: Compile) -> Compile | None:
    """``request`` with every pass's lanes reordered, under its own id; None when no pass can be."""
    first = _reordered(request.source, request.entry, request.constants)
    more = [(spec, _reordered(spec.source, spec.entry, spec.constants)) for spec in request.more]
    if first is None and not any(src for _, src in more):
        return None
    return replace(request, cid=request.cid + SUFFIX, source=first or request.source,
                   more=[replace(spec, source=src) if src else spec for spec, src in more])


RACE = ("with its lanes reordered within each workgroup, {reason}: its result depends on which "
        "invocations run together (a race on workgroup memory; a workgroupBarrier() missing?)")


async def lanes_reordered_agree(client: Any, session: Any, result: "CandidateResult", st: "Stitched",
                                seed: int) -> bool:
    """False (the result failed, said) when the reordered kernel does not verify on ``seed``."""
    request = reordered_request(st.compile_request(result.id))
    if request is None:
        return True
    timeout = session.deadline_for(result.id)
    try:
        built = await client.request(request, max(timeout, 60.0))
        verdict = await client.request(Verify(cid=request.cid, seed=seed), timeout) if built.compiled else None
    except WorkerTimeout:  # slower reordered (its loads no longer side by side), not judged
        session.emit(Notice(level="warning", message=(
            f"{result.name}: with its lanes reordered it ran past its {timeout:.1f} s deadline; "
            "its lanes' independence was not judged")))
        return True  # the worker was replaced with this kernel's pipelines built again
    except (WorkerCrashed, WorkerError):
        return True  # said nothing either way: the kernel as written verified
    finally:
        try:
            await client.request(Drop(cid=request.cid), DROP_TIMEOUT_S)
        except (WorkerTimeout, WorkerCrashed, WorkerError):
            pass
    if verdict is None or verdict.passed:
        return True
    result.max_rel_error = verdict.max_rel_error
    result.worst_index = verdict.worst_index
    return session.fail(result, "rejected", f"seed {seed} " + RACE.format(reason=verdict.reason))


__all__ = ["SUFFIX", "lanes_reordered_agree", "reordered_request"]
