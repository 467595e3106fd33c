"""A crowned kernel's browser verdict, given once and told on every surface.

The first judge is the kernel's export run in headless Chromium and verified there
(browser/judge.py); where no browser exists here, Tint under Node (Dawn) checks that it
compiles (browser/badge.py). Either way the verdict lands on the kernel's result and is
told again as ``CandidateFinished``, so the table, the report and recordings agree.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any, Callable

from vajra_tui.engine.browser import sidecar
from vajra_tui.engine.events import CandidateFinished, CandidateResult, DeviceInfo, Diagnostic, Event, Notice
from vajra_tui.engine.events import WorkloadInfo


async def judge_in_browser(result: CandidateResult, emit: Callable[[Event], None], *, device: DeviceInfo | None,
                           info: WorkloadInfo | None, workload: Any, size: dict[str, int], seed: int) -> CandidateResult:
    """``result``'s browser verdict (kept if it has one already), told through ``emit``;
    warnings where it is not valid. The session hands over what the judges need, so this
    module depends on events, never on the session."""
    from vajra_tui.engine.browser.badge import browser_badge
    from vajra_tui.engine.browser.judge import browser_judgement

    if result.browser or not result.stitched_source:
        return result
    judged, no_browser = await asyncio.to_thread(browser_judgement, result, device, info, workload, size, seed)
    if judged:
        if not result.browser.startswith(("browser-valid", "unchecked")):
            emit(Notice(level="warning", message=f"{result.name}: {result.browser}"))
        emit(CandidateFinished(result=result))
        return result
    from vajra_tui.engine.export.wgsl import with_defaults

    badge = await asyncio.to_thread(browser_badge, with_defaults(result.stitched_source, result.constants))
    status = badge["status"]
    result.browser_judge = "node/dawn (Tint)" if status != "unchecked" else ""
    result.browser = status if status != "unchecked" else f"unchecked: {why_unchecked(badge['reason'], no_browser)}"
    result.browser_diagnostics = [
        Diagnostic(line=max(m["candidate_line"], 1), column=max(m["column"], 1), message=m["message"])
        for m in badge["messages"]]
    if status == "tint-rejected":
        emit(Notice(level="warning", message=f"{result.name} is not browser-valid: {badge['reason']}"))
    emit(CandidateFinished(result=result))
    return result


# the advice, with what it installs in brackets and the joint to the alternative after it
SETUP_NODE = re.compile(re.escape(sidecar.SETUP_NODE) + r"(?: \([^)]*\))?(?:, or |; |, )?")


def why_unchecked(node_reason: str, no_browser: str) -> str:
    """Why neither judge ran: Node's reason, then Chromium's in brackets. Both may end in the
    same advice (setup-node installs Dawn and, with it, the transpiler Chromium's judge needs),
    which one message says once."""
    if SETUP_NODE.search(node_reason) and SETUP_NODE.search(no_browser):
        no_browser = SETUP_NODE.sub("", no_browser).rstrip(" :;,")
    return f"{node_reason} ({no_browser})" if no_browser else node_reason
