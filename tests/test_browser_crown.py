"""A kernel right here and wrong in the browser is not crowned under the default limits.

A held-out workload file crowned a reduction that reads past the end of its input: lavapipe
returns 0 for such reads, so it verified, while Chromium's Tint clamps the index to the
last element and the export gave a wrong sum. The browser said so, as a warning under a
crown. Now its verdict makes the kernel not portable: the report shows it as the fastest
kernel here, and the crown passes on. Real engine, lavapipe, headless Chromium.
"""

from __future__ import annotations

import numpy as np
import pytest

import vajra_tui
from vajra_tui import Binding, Workload
from vajra_tui.engine.browser.find import find_browser
from vajra_tui.engine.browser.transpile import find_transpiler
from vajra_tui.engine.events import CandidateFinished
from vajra_tui.engine.store.record import read_recording

pytestmark = pytest.mark.browser_judge  # the judge runs here: these tests assert its verdict (conftest.py)

N = 4096

ADD_ONE = Workload(
    name="add_one_oob", summary="y = x + 1", dims=("N",), presets={"seed": {"N": N}},
    bindings=(Binding(0, "x", "read"), Binding(1, "y", "read_write")),
    buffer_len=lambda s: {"x": s["N"], "y": s["N"]},
    make_inputs=lambda s, rng: {"x": rng.uniform(1.0, 2.0, s["N"]).astype(np.float32)},
    reference=lambda s, i: i["x"].astype(np.float64) + 1.0,
    flops=lambda s: float(s["N"]),
    output_grid=lambda s: (s["N"], 1),
    atol=1e-6,
    baseline="""
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < N) {
        var acc = 0.0;
        for (var k = 0u; k < 2000u; k++) { acc += sin(x[(g.x + k) % N]) * 1e-30; }  // slow: the kernel below wins
        y[g.x] = x[g.x] + 1.0 + acc;
    }
}
""",
)

# Adds x[i + N], past the end of x: 0 where out-of-range reads give 0, x[N - 1] (1 to 2) where
# the index is clamped, as Chromium's Tint does.
PAST_THE_END = """
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if (g.x < N) { y[g.x] = x[g.x] + 1.0 + x[g.x + N]; }
}
"""


def test_a_kernel_the_browser_gets_wrong_is_not_crowned(tmp_path):
    if not find_browser().ok or not find_transpiler()[0]:
        pytest.skip("no headless Chromium or no TypeScript transpiler here")
    report = vajra_tui.bench(ADD_ONE, {"past_the_end": PAST_THE_END}, warmup=1, reps=5, record=tmp_path / "r.jsonl")
    mine = next(r for r in report.results if r.name == "past_the_end")
    assert report.winner is None or report.winner.name != "past_the_end", report.headline
    if mine.status != "verified":  # an adapter that clamps here too: wrong here, never a candidate
        return
    _, events = read_recording(tmp_path / "r.jsonl")
    told = [e.result for e in events if isinstance(e, CandidateFinished) and e.result.id == mine.id]
    assert told[-1].portable is False, "the recording ends with the mark, as the report does"
    assert mine.browser.startswith("browser-rejected"), mine.browser
    assert mine.portable is False and any("wrong in the browser" in p for p in mine.portability), mine.portability
    assert "past_the_end" in report.headline and "not portable: wrong in the browser" in report.headline


def test_under_adapter_limits_the_browsers_verdict_stays_a_warning():
    if not find_browser().ok or not find_transpiler()[0]:
        pytest.skip("no headless Chromium or no TypeScript transpiler here")
    report = vajra_tui.bench(ADD_ONE, {"past_the_end": PAST_THE_END}, warmup=1, reps=5, limits="adapter")
    mine = next(r for r in report.results if r.name == "past_the_end")
    if mine.status != "verified":
        return
    assert mine.browser.startswith("browser-rejected") and mine.portable is not False
    if report.winner is not None:  # it beat the baseline's slow loop: crowned, with the warning
        assert report.winner.name == "past_the_end"
