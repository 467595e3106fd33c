"""VAJRA_BROWSER=off turns the browser judge off for as long as it is set, and no longer."""

from __future__ import annotations

import pytest

from vajra_tui.engine.browser import chromium
from vajra_tui.engine.browser.chromium import BrowserUnavailable, shared_judge


def test_off_is_read_on_every_call_and_never_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """A script (or a test module) that turns the judge off for one run must not leave the
    process without a browser afterwards: the off switch is not remembered as a failed start."""
    monkeypatch.setenv("VAJRA_BROWSER", "off")
    with pytest.raises(BrowserUnavailable, match="VAJRA_BROWSER=off"):
        shared_judge()
    assert "VAJRA_BROWSER=off" not in chromium._SHARED.get("reason", "")
    monkeypatch.setenv("VAJRA_BROWSER", "OFF ")
    with pytest.raises(BrowserUnavailable, match="off"):
        shared_judge()
    assert "VAJRA_BROWSER=off" not in chromium._SHARED.get("reason", "")
