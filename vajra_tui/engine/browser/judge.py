"""The browser's verdict on a crowned kernel: export it, run the export in Chromium, compare.

The kernel is exported exactly as ``--export`` would write it (into a temporary folder),
run in headless Chromium on the inputs of the session's first seed, and its outputs are
compared with the workload's float64 reference by the engine's own
:func:`vajra_tui.engine.gpu.verify.compare`. Without a browser, :func:`browser_judgement`
answers None and the caller falls back to Tint under Node (:mod:`.badge`).

Statuses (``CandidateResult.browser``): "browser-valid" (ran and matched), "browser-refused:
<why>" (the module refused this adapter: a feature or limit it lacks), "browser-rejected:
<why>" (compile, pipeline or run error, or outputs that differ), "unchecked: <why>".
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from vajra_tui.engine.browser.chromium import BrowserRun, BrowserUnavailable, ChromiumJudge, shared_judge
from vajra_tui.engine.events import CandidateResult, DeviceInfo, Diagnostic, WorkloadInfo
from vajra_tui.engine.gpu.verify import compare


def _diagnostics(run: BrowserRun) -> list[Diagnostic]:
    """Compile messages, the module's first, then each ``.wgsl`` file's (named), errors kept whole."""
    out = []
    for m in run.messages:
        kind = "" if m.get("type") == "error" else f"{m.get('type')}: "
        where = f"module {m['module']}: " if m.get("module") else ""
        out.append(Diagnostic(line=int(m.get("line") or 0), column=int(m.get("column") or 0),
                              message=f"{kind}{where}{m.get('message', '')}"))
    for name, messages in run.files.items():
        for m in messages:
            kind = "" if m.get("type") == "error" else f"{m.get('type')}: "
            out.append(Diagnostic(line=int(m.get("line") or 0), column=int(m.get("column") or 0),
                                  message=f"{kind}{name}: {m.get('message', '')}"))
    return out


def file_errors(run: BrowserRun) -> list[str]:
    """``name:line:col: message`` of every error a ``.wgsl`` file gave when compiled on its own."""
    return [f"{name}:{m.get('line')}:{m.get('column')}: {m.get('message')}"
            for name, messages in run.files.items() for m in messages if m.get("type") == "error"]


def verdict(run: BrowserRun, refs: dict[str, np.ndarray], atol: float, rtol: float,
            dtypes: dict[str, str]) -> tuple[str, str]:
    """``(status, reason)`` of one browser run against its references (one line each)."""
    if run.refused:
        return "browser-refused", f"{run.adapter} in {run.browser}: {run.refused}"
    if run.error:
        return "browser-rejected", f"{run.browser}: {run.error}"
    for name, ref in refs.items():
        got = run.outputs.get(name)
        if got is None:
            return "browser-rejected", f"{run.browser}: the module returned no output {name}"
        v = compare(got, ref, atol, rtol, dtype=dtypes.get(name, "f32"))
        if not v.passed:
            return "browser-rejected", f"{run.browser}: output {name} differs from the reference: {v.reason}"
    return "browser-valid", ""


def judge_folder(judge: ChromiumJudge, folder: Path, workload: Any, size: dict[str, int],
                 info: WorkloadInfo, seed: int) -> tuple[BrowserRun, str, str]:
    """Run ``folder``'s export of ``workload`` at ``size`` on seed ``seed``: ``(run, status, reason)``."""
    inputs = workload.checked_inputs(size, np.random.default_rng(seed))
    dtypes = {b.name: b.dtype for b in workload.bindings}
    run = judge.judge(Path(folder), info.name, inputs, dtypes)
    refs = workload.checked_references(size, inputs)
    status, reason = verdict(run, refs, info.atol, info.rtol, dtypes)
    return run, status, reason


def apply(result: CandidateResult, run: BrowserRun, status: str, reason: str) -> None:
    """What the browser said, onto the result (``browser`` keeps its one-string form)."""
    result.browser = status if not reason else f"{status}: {reason}"
    result.browser_judge = run.browser
    result.browser_adapter = run.adapter
    result.browser_limits = dict(run.limits)
    result.browser_features = list(run.features)
    result.browser_used_features = list(run.used_features)
    result.browser_messages = _diagnostics(run)
    result.browser_ms = run.median_ms


def browser_judgement(result: CandidateResult, device: DeviceInfo, info: WorkloadInfo, workload: Any,
                      size: dict[str, int], seed: int) -> tuple[bool, str]:
    """Judge ``result`` in Chromium and record it on ``result``: ``(judged, why not)``.

    ``(False, reason)`` when no browser can judge here (the caller falls back to Node);
    an export that cannot be written is judged "unchecked" with its reason.
    """
    from vajra_tui.engine.export.winner import export_winner

    try:
        judge = shared_judge()
    except BrowserUnavailable as exc:
        return False, str(exc)
    with tempfile.TemporaryDirectory(prefix="vajra-judged-") as tmp:
        try:
            export_winner(result, device, info, Path(tmp))
        except Exception as exc:  # noqa: BLE001 - the verdict is decoration: never break a session
            result.browser = f"unchecked: cannot export it: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
            return True, ""
        try:
            run, status, reason = judge_folder(judge, Path(tmp), workload, size, info, seed)
        except BrowserUnavailable as exc:
            return False, str(exc)
        except Exception as exc:  # noqa: BLE001 - a browser that died mid-run
            result.browser = f"unchecked: the browser failed: {type(exc).__name__}: {exc}"[:300]
            return True, ""
    apply(result, run, status, reason)
    return True, ""


def lock_block(result: CandidateResult) -> dict[str, Any]:
    """What a lockfile entry records of the browser's verdict (empty when none judged it)."""
    if not result.browser_judge:
        return {}
    return {"status": result.browser.split(":", 1)[0], "verdict": result.browser,
            "browser": result.browser_judge, "adapter": result.browser_adapter,
            "limits": dict(result.browser_limits), "features": list(result.browser_features),
            "used_features": list(result.browser_used_features),
            "messages": [m.model_dump() for m in result.browser_messages],
            "median_ms": result.browser_ms,
            "timing": "timestamp (software adapter)" if "(software)" in result.browser_adapter else "timestamp"}


def annotate_lock(lock_path: Path, result: CandidateResult) -> bool:
    """Add the browser's block to the lockfile entries of ``result``'s kernel; True when written.

    The lockfile's ``files`` map names the .wgsl and .ts only, so rewriting it breaks nothing.
    """
    from vajra_tui.engine.export.lockfile import dump_lock, load_lock
    from vajra_tui.engine.export.names import json_text
    from vajra_tui.engine.store.atomic import atomic_write

    block = lock_block(result)
    if not block or not Path(lock_path).is_file():
        return False
    lock = load_lock(Path(lock_path))
    hit = False
    for entry in lock.get("entries", []):
        if entry.get("kernel", {}).get("sha256") == result.source_sha256:
            entry["browser"], hit = block, True
    if hit:
        atomic_write(Path(lock_path), json_text(dump_lock(lock)))
    return hit


__all__ = ["annotate_lock", "apply", "browser_judgement", "file_errors", "judge_folder", "lock_block", "verdict"]
