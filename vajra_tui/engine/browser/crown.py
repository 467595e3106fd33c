"""The crown goes to a kernel the browser runs right, under the default (portable) limits.

A kernel can verify here and still be wrong in a browser: it leans on behaviour WebGPU
leaves to the implementation (a read past the end of a buffer gives 0 on one adapter and
the buffer's last element on Tint's clamped index), or a race that one adapter hides. The
crowned kernel's export runs in Chromium (browser/verdict.py); when the browser rejects it
(wrong outputs, or a module it cannot compile) it is not portable, the report shows it as
the fastest kernel here, and the crown passes to the next one, judged the same way. Under
``--limits adapter`` the user asked for this adapter's own rules: the verdict stays a warning.
Before either, a winner must compute the same with its lanes reordered (lanes_disagree):
one that does not is rejected, under any limits, and the crown passes on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vajra_tui.engine.events import CandidateFinished, Notice
from vajra_tui.engine.timing.ranking import Ranking

if TYPE_CHECKING:
    from vajra_tui.engine.session import Session

CROWN_TRIES = 3  # winners the browser may turn down before the crown is left where it is
NOT_PORTABLE = ("browser-rejected", "tint-rejected")
WRONG = "wrong in the browser"


async def crown_in_browser(session: "Session", ranking: Ranking, generation: int) -> Ranking:
    """``ranking`` with its winner judged in the browser; a rejected winner gives the crown
    to the next kernel of the same pool (a new ranking, told as ``RankingReady``)."""
    for _ in range(CROWN_TRIES):
        winner = ranking.winner
        # the winner; else the kernel the headline names within noise, or the fastest beside a
        # baseline that won (a user may still export it): whichever kernel leads
        top = winner or ranking.undecided or next((r for r in ranking.ranked if r.id != "baseline"), None)
        if top is not None and await lanes_disagree(session, top.id):  # rejected, said: never crowned
            ranking = session.standings(generation, [r.id for r in ranking.ranked if r.id != top.id], final=True)
            continue
        if winner is None or not await judged_in_browser(session, winner.id):
            return ranking
        ranking = session.standings(generation, [r.id for r in ranking.ranked], final=True)
        after = ranking.winner.name if ranking.winner else ("the baseline" if ranking.baseline_won else "no kernel")
        session.emit(Notice(level="warning", message=f"{winner.name} runs here but not in the browser: "
                                                     f"the crown passes to {after}"))
    return ranking


async def lanes_disagree(session: "Session", cid: str) -> bool:
    """Whether the kernel about to be crowned fails with its lanes reordered (admission/
    lane_order.py: a race that lockstep adapters hide); then it is rejected, said. Judged
    once per kernel, and only for a crown: every finalist's check quadrupled the time of
    lavapipe's attention tests."""
    from vajra_tui.engine.admission.lane_order import lanes_reordered_agree

    if cid in session.lanes_judged:
        return False
    if await lanes_reordered_agree(session.client, session, session.results[cid], session.stitched[cid],
                                   session.fresh_seed):
        session.lanes_judged.add(cid)
        return False
    return True


async def judged_in_browser(session: "Session", cid: str) -> bool:
    """Give ``cid`` its browser verdict; True when that verdict makes it not portable (and it
    is marked so), under the portable limits only."""
    judged = await session.check_browser(cid)
    if session.limits == "adapter" or not judged.browser.startswith(NOT_PORTABLE):
        return False
    if judged.portable is not False or not any(p.startswith(WRONG) for p in judged.portability):
        judged.portable = False
        judged.portability = [*judged.portability, f"{WRONG} ({judged.browser})"]
        session.emit(CandidateFinished(result=judged))  # told again: a recording replays the mark
    return True
