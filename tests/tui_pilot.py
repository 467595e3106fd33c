"""What the TUI tests share: a run kept away from the user's folders and keys, and waiting
on a condition with the pilot (the app keeps running while the test waits)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

import pytest


def isolate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Config, data and cache under ``tmp_path``; no model or Tavily key, no theme; cwd there."""
    for name in ("VAJRA_CONFIG_DIR", "VAJRA_DATA_DIR", "VAJRA_CACHE_DIR"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    for name in ("NEBIUS_API_KEY", "TAVILY_API_KEY", "VAJRA_THEME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


async def wait_for(pilot: Any, condition: Callable[[], bool], what: str, timeout: float = 90.0) -> None:
    """Pause the pilot until ``condition()`` holds; fail naming ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.05)
