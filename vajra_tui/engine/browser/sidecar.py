"""The Node sidecar (npm ``webgpu``: Dawn and its Tint compiler) lives in the user cache dir.

It used to be installed by the first browser check, silently, with ``npm ci``
into the installed package: 144 MB inside site-packages that ``pip uninstall``
never removed, impossible on a read-only install, and a ten-minute stall when
the registry did not answer. Now it is installed only by ``vajra-tui
setup-node`` (with npm's progress and a time limit) into
``<user cache>/node`` (``VAJRA_NODE_DIR`` overrides), and a check that finds
it missing says so at once, without touching the network.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Callable

import platformdirs

from vajra_tui.settings import APP_NAME, cache_dir

PACKAGED = Path(__file__).resolve().parents[2] / "node"  # vajra_tui/node: package.json, lockfile, scripts
SCRIPTS = ("tint_check.mjs", "run_export.ts")
MANIFESTS = ("package.json", "package-lock.json")
SETUP_NODE = "run vajra-tui setup-node"  # the advice every browser judge ends in; said once (verdict.py)
UNAVAILABLE = f"browser check unavailable: {SETUP_NODE}"


def node_dir() -> Path:
    """Where the sidecar is installed (node_modules, and the scripts beside it): VAJRA_NODE_DIR,
    else ``<cache>/node``; when VAJRA_CACHE_DIR points at a folder without one (the README's
    advice for keeping a run apart), the user's default cache's install is used, so moving the
    caches does not silently turn the browser judge off."""
    if os.environ.get("VAJRA_NODE_DIR"):
        return Path(os.environ["VAJRA_NODE_DIR"])
    here = cache_dir() / "node"
    usual = Path(platformdirs.user_cache_dir(APP_NAME)) / "node"
    if not _installed(here) and _installed(usual):
        return usual
    return here


def _installed(folder: Path) -> bool:
    return (folder / "node_modules" / "webgpu" / "index.js").is_file()


def _same(a: Path, b: Path) -> bool:
    try:
        return a.read_bytes() == b.read_bytes()
    except OSError:
        return False


def _sync_scripts(folder: Path) -> None:
    """The scripts follow the installed Vajra (an upgrade changes them; node_modules stay)."""
    for name in SCRIPTS:
        target = folder / name
        if not _same(PACKAGED / name, target):
            shutil.copyfile(PACKAGED / name, target)


def ready() -> Path | None:
    """The sidecar folder when Dawn is installed there (scripts brought up to date), else None.

    Never installs anything and never touches the network.
    """
    folder = node_dir()
    if not _installed(folder):
        return None
    try:
        _sync_scripts(folder)
    except OSError:
        return None
    return folder


def status() -> tuple[bool, str]:
    """``(usable, what)`` in words, for doctor and for the reasons of skipped checks."""
    node = shutil.which("node")
    if node is None:
        return False, "node is not installed (Node.js 18+ runs the browser check)"
    folder = ready()
    if folder is None:
        return False, f"{UNAVAILABLE} (installs into {node_dir()})"
    return True, f"Dawn (npm webgpu) in {folder}"


def setup_node(timeout: float = 300.0, say: Callable[[str], None] = lambda text: None) -> tuple[bool, str]:
    """Install the sidecar with ``npm ci`` (npm draws its own progress); ``(ok, message)``.

    ``say`` hears what is about to happen (the CLI prints it); npm's own progress goes to
    this process's stderr, its stdout is kept clean.

    A registry that does not answer fails within ``timeout`` seconds, not ten minutes:
    npm is told to give up on a request after 30 s and to retry once.
    """
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        return False, "node and npm are needed (install Node.js 18+ with npm, then run this again)"
    folder = node_dir()
    if ready() is not None and _same(PACKAGED / "package-lock.json", folder / "package-lock.json"):
        return True, f"browser check ready: {folder} (already installed)"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name in (*MANIFESTS, *SCRIPTS):
            shutil.copyfile(PACKAGED / name, folder / name)
    except OSError as exc:
        return False, f"cannot write {folder}: {exc.strerror or exc}"
    say(f"installing Dawn (npm webgpu, about 140 MB) into {folder}; giving up after {timeout:.0f} s")
    cmd = [npm, "ci", "--no-audit", "--no-fund", "--fetch-timeout=30000", "--fetch-retries=1",
           "--progress=true", "--loglevel=http"]
    try:
        proc = subprocess.run(cmd, cwd=folder, timeout=timeout, check=False, stdin=subprocess.DEVNULL,
                              stdout=2, stderr=2)  # npm's progress on our stderr, stdout kept clean
    except subprocess.TimeoutExpired:
        return False, (f"npm did not finish in {timeout:.0f} s (is the npm registry reachable?); "
                       "the browser check stays unavailable")
    except OSError as exc:
        return False, f"cannot run npm: {exc}"
    if proc.returncode != 0 or ready() is None:
        return False, f"npm ci failed (exit {proc.returncode}); the browser check stays unavailable"
    return True, f"browser check ready: {folder}"
