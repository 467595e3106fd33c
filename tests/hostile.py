"""Hostile text: what a model, a server, a recording or a file name may carry.

Escape sequences a terminal acts on (an OSC 52 clipboard write, window-title
changes, a screen wipe, a cursor-position query, 8-bit C1 controls, BEL) and
Rich/Textual markup that is either interpreted (``[link=...]``, ``[@click=...]``)
or malformed enough to raise ``MarkupError`` (``[/oops]``, ``[bold``). Each carries
a marker, so a test can tell that the text arrived (as data) and that none of
its control codes did.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from vajra_tui.engine.events import (
    Calibration, CalibrationReady, CandidateFinished, CandidateQueued, CandidateResult, CandidateSource,
    CompileFinished, DeviceInfo, Diagnostic, DispatchTimed, GenerationStarted, GroundingResult,
    ModelFailover, Notice, RankingReady, SanitizerRewrite, SessionFinished, SessionStarted, StageChanged,
    StreamDelta, VerificationFinished, WorkloadInfo,
)
from vajra_tui.engine.store.record import Recorder

OSC52 = "\x1b]52;c;UFdORUQ=\x07"  # put "PWNED" on the clipboard
TITLE = "\x1b]0;PWNED-TITLE\x07"  # window title (BEL-terminated)
TITLE_ST = "\x1b]2;PWNED-TITLE2\x1b\\"  # window title (ST-terminated)
WIPE = "\x1b[2J\x1b[H"  # clear the screen, cursor home
QUERY = "\x1b[6n"  # ask the terminal for the cursor position (it answers on stdin)
C1 = "\x9b31m\x9d0;C1-TITLE\x9c"  # 8-bit CSI and OSC
BEL = "\x07\x07"
MARKUP = ("[/oops]", "[link=https://evil.example/x]click me[/link]", "[bold", "[@click=app.quit]bye[/]",
          "[/]", "[red on black]")

CORPUS = [
    f"OSC52-MARK{OSC52}",
    f"TITLE-MARK{TITLE}{TITLE_ST}",
    f"WIPE-MARK{WIPE}{QUERY}",
    f"C1-MARK{C1}{BEL}",
    *(f"MARKUP-MARK {m}" for m in MARKUP),
]
ONE = "".join(CORPUS)  # every attack in one string
NAME = f"k{OSC52}{TITLE}[/oops][bold"  # a name for a candidate


def kernel_path(folder: Path) -> Path:
    """A kernel file whose path reads ``.../[/oops]...`` and whose name holds escapes."""
    (folder / "[").mkdir(parents=True, exist_ok=True)
    return folder / "[" / f"oops]{OSC52}{TITLE}[bold.wgsl"
# Control characters no data may put on a terminal: C0 but tab/newline/CR, DEL, C1.
CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# The attacks themselves as they would appear in terminal output.
ATTACKS = (b"\x1b]52;", b"\x1b]0;", b"\x1b]2;", b"\x1b]8;", b"\x1b[2J", b"\x1b[6n", b"\xc2\x9b", b"\xc2\x9d",
           b"\xc2\x9c")


def controls_in(text: str) -> list[str]:
    """The control characters ``text`` holds (empty for clean text)."""
    return CONTROL.findall(text)


def attacks_in(output: bytes) -> list[bytes]:
    """Which attack sequences appear in raw terminal output."""
    found = [a for a in ATTACKS if a in output]
    # BEL is only ever Textual's own terminator of its pointer-shape request (OSC 22)
    if re.sub(rb"\x1b\]22;[a-z-]*\x07", b"", output).count(b"\x07"):
        found.append(b"\x07")
    return found


def hostile_recording(path: Path, text: str = ONE) -> Path:
    """A recording (real events, written by the real Recorder) with ``text`` in every text field."""
    device = DeviceInfo(name=f"GPU {text}", vendor=text, backend="vulkan", driver=text, adapter_type="cpu",
                        software=True, features=[text])
    workload = WorkloadInfo(name="sgemm", size={"M": 64, "N": 64, "K": 64}, flops=2 * 64 ** 3,
                            min_bytes=3 * 4 * 64 * 64, output_grid=[64, 64], atol=1e-4)
    source = f"// {text}\n@compute @workgroup_size(1)\nfn main() {{ let x = ; }}\n"
    diag = Diagnostic(line=3, column=29, message=f"expected expression {text}", source_line=source.splitlines()[2],
                      notes=[text])
    kernel = f"// {text}\nfn main() {{}}\n"
    good = CandidateResult(id="good", name=f"good {NAME}", status="verified", origin=f"file: {text}",
                           strategy="A", params={text: text}, median_ms=0.5, iqr_ms=0.02, p25_ms=0.49,
                           p75_ms=0.51, min_ms=0.48, max_ms=0.52, times_ms=[0.48, 0.49, 0.5, 0.51, 0.52], timing="wall",
                           gflops=1.0, gbps=1.0, intensity=1.0, pct_of_roofline=10.0, regime="memory",
                           speedup=2.0, workgroup_size=[16, 16, 1], grid=[4, 4, 1],
                           source=kernel, stitched_source=kernel,
                           source_sha256=hashlib.sha256(kernel.encode()).hexdigest(), batch=1, warmup=1, browser=text,
                           browser_invalid=text)
    base = good.model_copy(update={"id": "baseline", "name": "baseline", "speedup": 1.0, "median_ms": 1.0,
                                   "times_ms": [1.0, 1.0, 1.0], "iqr_ms": 0.0, "p25_ms": 1.0, "p75_ms": 1.0,
                                   "min_ms": 1.0, "max_ms": 1.0,  # every number agrees (store/consistency.py)
                                   "browser": "", "browser_invalid": "", "strategy": "baseline"})
    bad = CandidateResult(id="bad", name=NAME, status="compile_error", reason=f"3:29: {text}", origin=text,
                          strategy="user", diagnostics=[diag], source=source, raw_reply=text,
                          rewrites=[f"--- a\n+++ b\n-{text}\n+{text}\n"])
    dead = CandidateResult(id=f"dead {NAME}", name=f"dead {NAME}", status="no_kernel", reason=text, raw_reply=text)
    events = [
        SessionStarted(device=device, workload=workload, source_mode=text, tool_version=text),
        CalibrationReady(calibration=Calibration(copy_gbps=5.0, fma_gflops=40.0, launch_floor_ms=0.02,
                                                 driver=text), cached=False),
        Notice(level="warning", message=f"warning {text}"),
        GenerationStarted(generation=1, source=text),
        GroundingResult(query=text, results=[{"url": text, "title": text, "content": text}]),
        GroundingResult(query=text, error=text),
    ]
    for cid, name in (("baseline", "baseline"), ("good", good.name), ("bad", NAME), (dead.id, dead.name)):
        events.append(CandidateQueued(id=cid, name=name, strategy="A", origin=text, params={text: text}))
    events += [
        StreamDelta(id="bad", kind="reasoning", text=f"thinking {text}"),
        StreamDelta(id="bad", kind="content", text=f"answer {text}"),
        ModelFailover(id="bad", from_model=text, to_model=text, reason=f"HTTP 500: {text}"),
        SanitizerRewrite(id="bad", findings=[diag], diff=f"-{text}\n+{text}\n", repaired=True),
        StageChanged(id="bad", stage="compiling", detail=text),
        CandidateSource(id="bad", source=source, stitched_source=source, workgroup_size=[1, 1, 1], grid=[1, 1, 1]),
        CompileFinished(id="bad", ok=False, diagnostics=[diag]),
        CandidateFinished(result=bad),
        CandidateFinished(result=dead),
        CandidateSource(id="good", source=good.source, stitched_source=good.stitched_source,
                        workgroup_size=[16, 16, 1], grid=[4, 4, 1]),
        VerificationFinished(id="good", seed=1, passed=True, max_rel_error=0.0, worst_index=0, reason=text),
        DispatchTimed(id="good", round=0, ms=0.5, method="wall"),
        CandidateFinished(result=base),
        CandidateFinished(result=good),
        Notice(level="error", message=f"error {text}"),
        RankingReady(generation=1, ranked_ids=["good", "baseline"], winner_id="good", headline=f"won {text}",
                     baseline_median_ms=1.0, final=True),
        SessionFinished(ok=True),
    ]
    recorder = Recorder(path, label=text)
    for event in events:
        recorder(event)
    return recorder.close()
