"""The "browser-valid" badge of a crowned kernel: does Tint (Chrome's WGSL compiler) take it?

The engine compiles with Naga; browsers compile with Tint, which is stricter
(uniformity analysis above all). :func:`browser_badge` runs the stitched
source through :func:`vajra_tui.engine.browser.tint.tint_check` (Dawn under Node) and
never raises: without Node, or without a Dawn adapter, the badge says
"unchecked" and why.
"""

from __future__ import annotations

from typing import Any, Literal

from vajra_tui.engine.browser import tint
from vajra_tui.engine.admission.contract import PRELUDE_END

BadgeStatus = Literal["browser-valid", "tint-rejected", "unchecked"]


def _prelude_lines(stitched: str) -> int:
    """Lines before the candidate's first line (0 when the marker is absent)."""
    for number, text in enumerate(stitched.splitlines(), 1):
        if text.strip() == PRELUDE_END:
            return number
    return 0


SUBGROUPS_DIRECTIVE = "enable subgroups;\n"
_NEEDS_SUBGROUPS = "without extension 'subgroups'"


def _only_missing_subgroups(result: tint.TintResult) -> bool:
    """Naga refuses `enable subgroups;` and Tint requires it: the one known disagreement."""
    errors = [m for m in result.messages if not m.message.startswith("note:")]
    return bool(errors) and all(_NEEDS_SUBGROUPS in m.message for m in errors)


def browser_badge(stitched: str, timeout: float = 60) -> dict[str, Any]:
    """``{status, messages, reason, adapter}`` for one stitched kernel.

    ``status`` is "browser-valid" (Tint compiled it and built its pipeline),
    "tint-rejected" (``messages`` says why, each with the stitched ``line`` and
    the candidate's own ``candidate_line``, 0 inside the prelude) or
    "unchecked" (``reason`` says why no check ran, e.g. "node not found").
    """
    badge: dict[str, Any] = {"status": "unchecked", "messages": [], "reason": "", "adapter": ""}
    if not stitched.strip():
        badge["reason"] = "no kernel source"
        return badge
    if not tint.node_available():
        badge["reason"] = "node not found"
        return badge
    try:
        result = tint.tint_check(stitched, timeout=timeout)
    except Exception as exc:  # the badge is decoration: it must never break a session
        badge["reason"] = f"tint check failed: {type(exc).__name__}: {exc}"[:300]
        return badge
    if not result.available:
        badge["reason"] = result.reason or "tint check unavailable"
        return badge
    offset = _prelude_lines(stitched)
    if _only_missing_subgroups(result):
        retry = tint.tint_check(SUBGROUPS_DIRECTIVE + stitched, timeout=timeout)
        if retry.available and retry.ok:
            badge.update(status="browser-valid", adapter=retry.adapter,
                         reason="with `enable subgroups;` and the 'subgroups' feature (as the TS export does)")
            return badge
        if retry.available and any("subgroups" in m.message for m in retry.messages):
            badge.update(status="unchecked", adapter=retry.adapter,
                         reason="uses subgroups, which this Dawn adapter lacks; browsers also need "
                                "`enable subgroups;`, which wgpu's compiler rejects")
            return badge
    badge["adapter"] = result.adapter
    badge["messages"] = [
        {"line": m.line, "column": m.column, "message": m.message,
         "candidate_line": max(0, m.line - offset) if m.line > 0 else 0}
        for m in result.messages
    ]
    badge["status"] = "browser-valid" if result.ok else "tint-rejected"
    if not result.ok:
        first = next((m["message"] for m in badge["messages"]), "rejected")
        badge["reason"] = f"Tint: {first}"[:300]
    return badge


__all__ = ["BadgeStatus", "browser_badge"]
