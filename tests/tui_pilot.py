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


@pytest.fixture
def shared_roofline(_isolated: None, user_dirs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A live run's cache folder is this test run's shared one (conftest's ``user_dirs``), not
    the test's own: the roofline an earlier run measured is reused after its quick copy check,
    as a user's second run reuses it. A fresh calibration costs ~5 CPU-seconds on lavapipe, and
    nothing here is about calibrating; config, data and the working folder stay the test's own.
    Runs after the requesting module's ``_isolated`` fixture (which calls :func:`isolate`)."""
    monkeypatch.setenv("VAJRA_CACHE_DIR", str(user_dirs / "cache"))


@pytest.fixture(scope="module")
def adapter() -> Any:
    """This machine's adapter (a DeviceInfo), probed once for the module the way the picker
    probes it (a subprocess that loads the driver) and handed to each live run's picker: these
    tests drive a run, not the probe, so each need not pay a process start for the same answer."""
    from vajra_tui.tui.app import probe_adapter

    return probe_adapter()


async def wait_for(pilot: Any, condition: Callable[[], bool], what: str, timeout: float = 90.0) -> None:
    """Pause the pilot until ``condition()`` holds; fail naming ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.05)
