"""Shared fixtures: isolated user dirs, and one real GPU worker per test module."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

KERNELS = Path(__file__).parent / "kernels"
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
# The browser-check sidecar that `vajra-tui setup-node` installed (scripts/setup.sh runs it):
# found where the user's cache is, even though each test gets a cache dir of its own.
if not os.environ.get("VAJRA_NODE_DIR"):
    import platformdirs

    os.environ["VAJRA_NODE_DIR"] = str(Path(os.environ.get("VAJRA_CACHE_DIR")
                                            or platformdirs.user_cache_dir("vajra-tui")) / "node")


@pytest.fixture(autouse=True)
def user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Keep tests away from the real user's config, data and cache (calibration is shared per run)."""
    base = tmp_path_factory.getbasetemp()
    monkeypatch.setenv("VAJRA_CACHE_DIR", str(base / "cache"))
    monkeypatch.setenv("VAJRA_DATA_DIR", str(base / "data"))
    monkeypatch.setenv("VAJRA_CONFIG_DIR", str(base / "config"))
    for key in ("NEBIUS_API_KEY", "TAVILY_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    return base


@pytest.fixture(scope="module")
def gpu():
    """A real worker process on the machine's adapter (lavapipe without a GPU)."""
    from vajra_tui.engine.gpu.client import GPUClient

    os.environ.setdefault("VAJRA_CACHE_DIR", "/tmp/vajra-test-cache")
    client = GPUClient()
    client.start()
    yield client
    client.close()


def kernel(name: str) -> str:
    return (KERNELS / name).read_text()


_NODE_WORDS = ("node", "npm", "tint", "dawn", "tsx")


def on_first_verification(session, action) -> list[str]:
    """Call ``action()`` when ``session`` first verifies a candidate (not its baseline): how the
    lane tests kill a worker or an actor mid-run. The list gets the candidate's id."""
    from vajra_tui.engine.events import StageChanged

    forward, hit = session._sink, []

    def sink(event) -> None:
        if isinstance(event, StageChanged) and event.stage == "verifying" and event.id != "baseline" \
                and not hit:
            hit.append(event.id)
            action()
        forward(event)

    session._sink = sink
    return hit


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    """One line that says why the browser (Node/Dawn) tests skipped and what brings them back."""
    skipped = terminalreporter.stats.get("skipped", [])
    browser = [r for r in skipped if any(w in str(r.longrepr).lower() for w in _NODE_WORDS)]
    if browser:
        terminalreporter.write_line(
            f"{len(browser)} browser-check tests skipped (Node.js/npm or Dawn unavailable here): "
            "install Node.js 18+ with npm, then run scripts/setup.sh to bring them back")


def child_pythonpath() -> str:
    """PYTHONPATH for a child process: this checkout first, then the parent's own entries
    (a GPU host's carried packages live there; replacing them left the child without pydantic)."""
    parts = [str(Path(__file__).resolve().parents[1])]
    parts += [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return os.pathsep.join(parts)
