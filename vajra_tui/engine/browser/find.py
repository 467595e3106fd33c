"""Which Chromium judges exports: Playwright's managed browser, else a system one.

A user who ran ``playwright install chromium`` has a browser Playwright knows how to
drive; CI and Debian machines have the ``chromium`` package (``scripts/setup.sh``
installs it). ``VAJRA_BROWSER`` names an executable (or ``off`` to never use one).
Nothing here downloads anything: a missing browser is said, with how to get one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

SYSTEM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
HOW_TO_GET = ("no Chromium found: install it (Debian/Ubuntu: apt-get install chromium; "
              "or scripts/setup.sh), or set VAJRA_BROWSER=/path/to/chrome")


@dataclass(frozen=True)
class Found:
    """A browser executable and where it came from ("playwright", "system", "VAJRA_BROWSER")."""

    path: str = ""
    origin: str = ""
    version: str = ""
    reason: str = ""  # why none was found (path is then "")

    @property
    def ok(self) -> bool:
        return bool(self.path)

    def describe(self) -> str:
        """One line for doctor and for the reasons of skipped checks."""
        if not self.ok:
            return self.reason
        return f"{self.version or 'a Chromium'} ({self.origin}: {self.path})"


def playwright_available() -> bool:
    """Whether playwright-python is importable (the library that drives the browser)."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return False
    return True


def _managed() -> str:
    """Playwright's own Chromium where one was installed with ``playwright install``, else ""."""
    if not playwright_available():
        return ""
    from playwright.sync_api import sync_playwright

    try:
        with sync_playwright() as p:
            path = p.chromium.executable_path
    except Exception:  # noqa: BLE001 - a broken driver means "no managed browser", never a crash
        return ""
    return path if path and Path(path).is_file() else ""


def version_of(path: str, timeout: float = 20.0) -> str:
    """``Chromium 156.0.8078.114`` from ``--version`` (the first two words that say it), else ""."""
    try:
        proc = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=timeout,
                              check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    words = proc.stdout.strip().split()
    numbered = [i for i, w in enumerate(words) if w[:1].isdigit()]
    return " ".join(words[: numbered[0] + 1]) if numbered else proc.stdout.strip()[:80]


OFF_REASON = "the browser judge is off (VAJRA_BROWSER=off)"


def browser_off() -> bool:
    """Whether VAJRA_BROWSER turns the judge off (read each time: it may change in a process)."""
    return os.environ.get("VAJRA_BROWSER", "").strip().lower() in ("off", "none", "0", "no")


def find_browser(check_version: bool = True) -> Found:
    """The browser the judge would start; ``Found.reason`` says why there is none."""
    wanted = os.environ.get("VAJRA_BROWSER", "").strip()
    if browser_off():
        return Found(reason=OFF_REASON)
    if not playwright_available():
        return Found(reason="playwright-python is not installed (pip install 'playwright>=1.40', "
                            "or with pipx: pipx inject vajra-tui 'playwright>=1.40'; "
                            "it drives the system's Chromium, no browser download needed)")
    if wanted:
        path = shutil.which(wanted) or (wanted if Path(wanted).is_file() else "")
        if not path:
            return Found(reason=f"VAJRA_BROWSER={wanted}: no such executable")
        return Found(path, "VAJRA_BROWSER", version_of(path) if check_version else "")
    managed = _managed()
    if managed:
        return Found(managed, "playwright", version_of(managed) if check_version else "")
    for name in SYSTEM_NAMES:
        path = shutil.which(name)
        if path:
            return Found(path, "system", version_of(path) if check_version else "")
    return Found(reason=HOW_TO_GET)


__all__ = ["Found", "HOW_TO_GET", "find_browser", "playwright_available", "version_of"]
