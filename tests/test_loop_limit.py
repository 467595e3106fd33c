"""Mesa's llvmpipe ends an invocation's loops after 65,535 steps in all, without an error.

Found by hand: attention's built-in baseline at B=1,H=1,S=200,D=128 causal was rejected on
lavapipe ("4064 of 25600 elements never written"), and so was softmax's at a vocabulary's
width (2 x 50257). Both baselines walked one element a step; they now walk 16 or 32 a step
through a fixed inner loop, which llvmpipe unrolls. A kernel that still loops past the limit
fails there as before, and the run says once why it may have (engine/gpu/loop_limit.py).
On a GPU the long-looping kernel verifies, and these tests say so instead.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vajra_tui.engine.candidate import Candidate
from vajra_tui.engine.events import Notice
from vajra_tui.engine.gpu.loop_limit import applies_to
from vajra_tui.engine.gpu.protocol import Drop
from vajra_tui.engine.workloads import get_workload

os.environ.setdefault("VAJRA_CACHE_DIR", "/tmp/vcache-loop-limit-tests")

# softmax as its baseline was written before: three walks of one column a step, so a row of
# 30,000 columns takes 90,000 loop steps
ONE_A_STEP = (Path(__file__).parent / "kernels" / "softmax_one_column_a_step.wgsl").read_text(encoding="utf-8")


async def _session(client, workload: str, spec: str, events: list | None = None, w=None):
    from vajra_tui.engine.session import Session
    from vajra_tui.settings import TimingSettings

    w = w or get_workload(workload)
    sink = events.append if events is not None else (lambda e: None)
    s = Session(w, w.size(spec), client, sink, TimingSettings(warmup=0, reps=1))
    await s.start(calibrate=False)
    return s


@pytest.mark.parametrize("workload,spec", [
    ("attention", "B=1,H=1,S=200,D=128,MASK=2"),   # rejected before: rows past 168 unwritten
    ("attention", "B=1,H=1,S=600,D=64,MASK=1"),    # 116k steps a row before
    ("attention", "B=1,H=1,S=45,D=40,MASK=2"),     # D off the 32-wide step
    ("softmax", "2x50257"),                        # a GPT-2 vocabulary: 150k steps a row before
    ("layernorm", "ROWS=2,COLS=32003"),            # 96k steps a row before, and an odd width
])
async def test_built_in_baselines_verify_past_the_loop_limit(gpu, workload, spec):
    s = await _session(gpu, workload, spec)
    cand = s.baseline_candidate()
    ok = await s.admit(cand)
    r = s.results[cand.id]
    assert ok, f"{workload} at {spec}: {r.status} {r.reason}"
    await s.client.request(Drop(cid=cand.id), 30.0)


async def test_a_kernel_past_the_limit_is_told_once_on_llvmpipe(gpu):
    events: list = []
    s = await _session(gpu, "softmax", "2x30000", events)
    results = []
    second = ONE_A_STEP.replace("var m = X[base];", "var m = -3.0e38;").replace("c = 1u", "c = 0u")
    for n, source in (("long1", ONE_A_STEP), ("long2", second)):
        await s.admit(Candidate(id=n, name=n, source=source))
        results.append(s.results[n])
    notes = [e for e in events if isinstance(e, Notice) and "65,535" in e.message]
    if not applies_to(s.device):  # a GPU: no limit, the kernel is right
        assert [r.status for r in results] == ["verified", "verified"], [r.reason for r in results]
        assert not notes
        return
    assert [r.status for r in results] == ["rejected", "rejected"], [r.reason for r in results]
    assert "never written" in results[0].reason
    assert len(notes) == 1 and "llvmpipe" in notes[0].message and notes[0].level == "warning"


async def test_a_baseline_past_the_limit_says_why_in_its_line(gpu, tmp_path):
    from vajra_tui.engine.session import BaselineError

    path = tmp_path / "long_softmax.py"
    path.write_text("import dataclasses\n"
                    "from vajra_tui.engine.workloads.softmax import WORKLOAD as SOFTMAX\n"
                    f"WORKLOAD = dataclasses.replace(SOFTMAX, name='long_softmax', baseline={ONE_A_STEP!r})\n")
    s = await _session(gpu, "", "2x30000", w=get_workload(str(path)))
    if not applies_to(s.device):
        assert (await s.run_baseline(time=False)).status == "verified"
        return
    with pytest.raises(BaselineError) as err:
        await s.run_baseline(time=False)
    line = str(err.value)
    assert line.startswith("baseline rejected: seed") and "\n" not in line
    assert "llvmpipe" in line and "65,535 steps" in line
