"""Shared fixtures: isolated user dirs, and one real GPU worker per test module.

Under pytest-xdist (scripts/test.sh runs the suite on two workers) this file also orders the
modules, heaviest first, and keeps a test marked ``serial`` alone on the machine.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import time
from contextlib import ExitStack
from pathlib import Path
from typing import IO, Iterator

import pytest

KERNELS = Path(__file__).parent / "kernels"
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
# The browser-check sidecar that `vajra-tui setup-node` installed (scripts/setup.sh runs it):
# found where the user's cache is, even though each test gets a cache dir of its own.
if not os.environ.get("VAJRA_NODE_DIR"):
    import platformdirs

    os.environ["VAJRA_NODE_DIR"] = str(Path(os.environ.get("VAJRA_CACHE_DIR")
                                            or platformdirs.user_cache_dir("vajra-tui")) / "node")
NODE_SIDECAR = os.environ["VAJRA_NODE_DIR"]  # kept: browser_judge_only_where_asked hides it per module


def keep_away_from_the_user(base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Config, data and cache under ``base``; no model or Tavily key (what ``user_dirs`` sets
    per test, and a module-scoped fixture sets for its own shared run)."""
    monkeypatch.setenv("VAJRA_CACHE_DIR", str(base / "cache"))
    monkeypatch.setenv("VAJRA_DATA_DIR", str(base / "data"))
    monkeypatch.setenv("VAJRA_CONFIG_DIR", str(base / "config"))
    for key in ("NEBIUS_API_KEY", "TAVILY_API_KEY"):
        monkeypatch.delenv(key, raising=False)


@pytest.fixture(autouse=True)
def user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Keep tests away from the real user's config, data and cache (calibration is shared per run)."""
    base = tmp_path_factory.getbasetemp()
    keep_away_from_the_user(base, monkeypatch)
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


@pytest.fixture(scope="module", autouse=True)
def browser_judge_only_where_asked(request: pytest.FixtureRequest,
                                   tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The judge that gives a crown its browser verdict runs in the modules that assert that
    verdict, marked ``browser_judge`` (tests/test_browser_*.py, the export and Tint checks).
    Everywhere else it is off (VAJRA_BROWSER=off, read per call, so a later module in this
    process still gets the browser) and the Node fallback finds no sidecar, so each crown is
    "unchecked" at once instead of costing a Chromium start (seconds of both cores under
    SwiftShader). Module-scoped and autouse, so a module's shared runs see it too, and the
    child processes a test starts inherit it."""
    if request.node.get_closest_marker("browser_judge") is not None:
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("VAJRA_BROWSER", "off")
        patch.setenv("VAJRA_NODE_DIR", str(tmp_path_factory.mktemp("no-sidecar") / "absent"))
        yield


@pytest.fixture
def node_sidecar(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The Node sidecar again, for a test that runs an export under Node + Dawn itself in a
    module where the crown's judge stays off (it skips where setup-node never ran)."""
    monkeypatch.setenv("VAJRA_NODE_DIR", NODE_SIDECAR)
    return Path(NODE_SIDECAR)


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


def process_alive(pid: int) -> bool:
    """True while the process exists, a zombie included: a reaped one is gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    """A CLI failure said as the product promises: one stderr line, ``vajra-tui: ...``, no traceback."""
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err[-2000:]
    assert lines[0].startswith("vajra-tui: "), lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def calibration(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> str:
    """This adapter's ``calibration.json``: the one this test run's shared cache holds (conftest's
    ``user_dirs`` puts it under the base temp folder), else measured once for the module
    that asks (the text a child's own cache folder is seeded with)."""
    shared = tmp_path_factory.getbasetemp() / "cache" / "calibration.json"
    try:
        text = shared.read_text(encoding="utf-8")
        if json.loads(text):
            return text
    except (OSError, ValueError):
        pass
    from vajra_tui.engine.gpu.protocol import Calibrate
    from vajra_tui.engine.store import calibration_cache

    gpu = request.getfixturevalue("gpu")
    measured = gpu.request_blocking(Calibrate(), 900).calibration
    measured.device_key = calibration_cache.key(gpu.device)
    measured.checked_at = measured.measured_at
    return json.dumps({measured.device_key: measured.model_dump()}, indent=2)


def read_pty(fd: int, seconds: float, into: bytearray) -> None:
    """What an app in a pseudo-terminal writes during ``seconds`` (less when it closes), added to
    ``into``: the tests that run the real entry point in a pty read its screen this way."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if select.select([fd], [], [], 0.1)[0]:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            into.extend(chunk)


def cache_with_this_runs_calibration(cache: Path) -> Path:
    """``cache``, a folder of its own for a child process, holding the calibration an earlier
    test stored in the run's shared cache (when one did): the child checks it with a quick copy
    instead of measuring the whole roofline again, which no test of a child's cache is about."""
    import shutil

    cache.mkdir(parents=True, exist_ok=True)
    shared = Path(os.environ["VAJRA_CACHE_DIR"]) / "calibration.json"
    if shared.is_file():
        shutil.copyfile(shared, cache / "calibration.json")
    return cache


def child_pythonpath() -> str:
    """PYTHONPATH for a child process: this checkout first, then the parent's own entries
    (a GPU host's carried packages live there; replacing them left the child without pydantic)."""
    parts = [str(Path(__file__).resolve().parents[1])]
    parts += [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return os.pathsep.join(parts)


# ---- running on pytest-xdist workers (scripts/test.sh: -n 2 --dist loadfile) ----------------
# Modules whose tests take longest on a 2-core lavapipe machine (measured: 40-140 s each beside
# another worker). Handed out first, so that no long module starts last and leaves the other
# worker idle at the end; the ``serial`` modules go last, where exclusivity costs least.
# Only the order changes; a module missing here just keeps its place.
HEAVY_FIRST = ("test_driver_wait.py", "test_library.py", "test_ray.py", "test_fft.py", "test_engine.py", "test_lanes.py",
               "test_wheel.py", "test_user_workloads.py", "test_snapshots.py", "test_run_controls.py",
               "test_kernels_as_written.py", "test_tune.py", "test_published_kernels.py")


def _xdist_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _module_rank(item: pytest.Item) -> int:
    """Where ``item``'s module goes: heavy ones by HEAVY_FIRST, serial ones last, others between."""
    name = item.path.name
    if name in HEAVY_FIRST:
        return HEAVY_FIRST.index(name)
    return len(HEAVY_FIRST) + (1 if item.get_closest_marker("serial") else 0)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On xdist workers, modules heaviest first (a stable sort: within a module, the file's order).
    Every worker sorts the same way, as xdist requires; a plain run keeps the files' order."""
    if _xdist_worker(config):
        items.sort(key=_module_rank)


def _lock(path: Path, mode: int) -> IO[bytes]:
    """``path`` opened and flock()ed with ``mode`` (waits for it); closing the file releases it."""
    handle = path.open("ab")
    fcntl.flock(handle, mode)
    return handle


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """A ``serial`` test (timing it measures, or load it makes) runs with no other test beside
    it: setup, call and teardown, module fixtures included. A readers-writer lock over the xdist
    workers of this run: every test holds ``serial-run.lock`` shared, a serial one exclusively. The
    ``turnstile`` stops new shared holders while a serial test waits, so it is never starved.
    In a plain run there is nothing beside any test, and no lock is taken."""
    if not _xdist_worker(item.config):
        yield
        return
    folder = Path(item.config.option.basetemp).parent  # this run's, shared by its workers
    serial = item.get_closest_marker("serial") is not None
    with ExitStack() as held:
        turnstile = held.enter_context(_lock(folder / "serial-turnstile.lock", fcntl.LOCK_EX))
        held.enter_context(_lock(folder / "serial-run.lock", fcntl.LOCK_EX if serial else fcntl.LOCK_SH))
        if not serial:
            turnstile.close()  # a shared holder only passes through it
        yield
