"""Browser-compiler check: run a stitched WGSL module through Dawn (Tint) via Node.

wgpu-py compiles with Naga, which accepts kernels that browsers reject (most
often non-uniform barriers). ``vajra_tui/node/tint_check.mjs`` uses the npm
``webgpu`` package (Dawn) on its OpenGL ES backend, so it works without a GPU.
Everything here degrades to ``available=False`` with a reason; nothing raises.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from vajra_tui.engine.events import Diagnostic

from vajra_tui.engine.browser import sidecar


@dataclass
class TintResult:
    """Outcome of one Tint check; ``ok`` is only meaningful when ``available``."""

    available: bool
    ok: bool = False
    messages: list[Diagnostic] = field(default_factory=list)
    reason: str = ""
    adapter: str = ""


def node_available() -> bool:
    """True when a ``node`` executable is on PATH."""
    return shutil.which("node") is not None


def ensure_node_modules() -> Path | None:
    """The sidecar folder when Dawn is installed (``vajra-tui setup-node``), else None.

    Never installs: an implicit ``npm ci`` here once stalled a check for ten minutes
    offline and wrote 144 MB into site-packages (see :mod:`vajra_tui.engine.browser.sidecar`).
    """
    return sidecar.ready()


def _diag(m: dict) -> Diagnostic:
    kind = str(m.get("type", "error"))
    text = str(m.get("message", ""))
    if kind != "error":
        text = f"{'note' if kind == 'info' else kind}: {text}"
    return Diagnostic(line=int(m.get("line") or 0), column=int(m.get("column") or 0), message=text)


def _background() -> None:
    os.nice(10)


def tint_check(stitched_wgsl: str, timeout: float = 60) -> TintResult:
    """Compile ``stitched_wgsl`` (prelude included) with Tint and create its pipeline.

    Messages keep Tint's order: the error first, then its ``note:`` lines
    (e.g. where the non-uniform value came from). Line numbers refer to the
    stitched source; the caller maps them back to the candidate.
    """
    node = shutil.which("node")
    if node is None:
        return TintResult(available=False, reason="node is not installed")
    folder = ensure_node_modules()
    if folder is None:  # said at once, offline or not: nothing is installed behind the user's back
        return TintResult(available=False, reason=sidecar.UNAVAILABLE)
    env = dict(os.environ)
    env.setdefault("EGL_PLATFORM", "surfaceless")
    try:
        proc = subprocess.run(  # a background check: never compete with an interactive UI
            [node, str(folder / "tint_check.mjs")], input=stitched_wgsl, capture_output=True, text=True,
            cwd=folder, env=env, timeout=timeout, check=False, preexec_fn=_background,
        )
    except subprocess.TimeoutExpired:
        return TintResult(available=False, reason=f"tint check timed out after {timeout:.0f}s")
    except OSError as exc:
        return TintResult(available=False, reason=f"cannot run node: {exc}")
    data = None
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("{"):
            try:
                data = json.loads(line)
                break
            except json.JSONDecodeError:
                continue
    if not isinstance(data, dict):
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        return TintResult(available=False, reason="tint_check gave no result: " + " | ".join(tail))
    if data.get("unavailable"):
        return TintResult(available=False, reason=str(data.get("error", "no adapter"))[:500])
    return TintResult(
        available=True,
        ok=bool(data.get("ok")),
        messages=[_diag(m) for m in data.get("messages", []) if isinstance(m, dict)],
        adapter=str(data.get("adapter", "")),
    )
