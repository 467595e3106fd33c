"""Headless Chromium as the judge of exports: the user's own ``<workload>.ts`` run in a page.

:class:`ChromiumJudge` starts one browser (playwright-python driving the executable that
:mod:`.find` found: Playwright's managed Chromium or the system's) and keeps it for many
judgements. Each :meth:`ChromiumJudge.judge` copies an export folder's files into a
folder served on 127.0.0.1 (:mod:`.serve`: WebGPU needs a secure context), transpiles the
``.ts`` with the Node route's own esbuild (:mod:`.transpile`), writes the inputs beside it
as raw little-endian files and runs :data:`.harness.RUN_EXPORT` in the page. What comes
back is a :class:`BrowserRun`; comparing its outputs with the reference is the caller's
(:mod:`.judge`), with the engine's own ``compare``.

Playwright's sync API must be used from the thread that started it, and callers here come
from asyncio's worker threads: one daemon thread owns the browser and runs every job.
"""

from __future__ import annotations

import atexit
import base64
import concurrent.futures
import queue
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from vajra_tui.engine.browser.find import OFF_REASON, Found, browser_off, find_browser
from vajra_tui.engine.browser.harness import RUN_EXPORT
from vajra_tui.engine.browser.serve import StaticServer
from vajra_tui.engine.browser.transpile import TranspileError, transpile

# Without the background-networking flags, Chromium's calls home fail many at a time on a
# closed network (and slow its start); --enable-unsafe-webgpu gives navigator.gpu an
# adapter on Linux (SwiftShader where no GPU driver is allowed). Playwright gives every
# launch a fresh temporary profile (it refuses --user-data-dir in args).
FLAGS = ("--no-sandbox", "--enable-unsafe-webgpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--mute-audio")
NUMPY = {"f32": "<f4", "f16": "<f2", "i32": "<i4", "u32": "<u4"}


class BrowserUnavailable(RuntimeError):
    """No browser can judge here (one line: what is missing and how to get it)."""


@dataclass
class BrowserRun:
    """What one page said of one exported module (``error``/``refused`` empty when it ran)."""

    browser: str = ""  # "Chromium 156.0.8078.114 (system, headless)"
    adapter: str = ""  # in words: "google swiftshader (software)"
    adapter_info: dict[str, Any] = field(default_factory=dict)
    limits: dict[str, int] = field(default_factory=dict)
    features: list[str] = field(default_factory=list)
    used_features: list[str] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)  # the module's, as compiled
    files: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # each .wgsl on its own
    outputs: dict[str, np.ndarray] = field(default_factory=dict)
    times_ms: list[float] = field(default_factory=list)
    refused: str = ""  # the module refused the adapter (a feature or limit it lacks)
    error: str = ""  # it failed: compile, pipeline, run or device error

    @property
    def ran(self) -> bool:
        return not (self.refused or self.error)

    @property
    def software(self) -> bool:
        words = " ".join(str(v) for v in self.adapter_info.values()).lower()
        return any(w in words for w in ("swiftshader", "llvmpipe", "lavapipe", "software"))

    @property
    def median_ms(self) -> float | None:
        return float(np.median(self.times_ms)) if self.times_ms else None


def _adapter_words(info: dict[str, Any]) -> str:
    parts = [str(info.get(k) or "") for k in ("vendor", "architecture", "device", "description")]
    words = " ".join(dict.fromkeys(p for p in parts if p)) or "unknown adapter"
    soft = any(w in words.lower() for w in ("swiftshader", "llvmpipe", "lavapipe")) or info.get("fallback")
    return f"{words} (software)" if soft else words


class _Owner(threading.Thread):
    """The one thread that may touch Playwright: it runs submitted jobs in order."""

    def __init__(self) -> None:
        super().__init__(name="vajra-chromium", daemon=True)
        self.jobs: queue.Queue[tuple[Callable[[], Any], concurrent.futures.Future] | None] = queue.Queue()

    def run(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                return
            fn, future = job
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn())
                except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                    future.set_exception(exc)

    def call(self, fn: Callable[[], Any], timeout: float) -> Any:
        future: concurrent.futures.Future = concurrent.futures.Future()
        self.jobs.put((fn, future))
        return future.result(timeout=timeout)


class ChromiumJudge:
    """One headless Chromium, kept for many judgements; :meth:`close` (or ``with``) ends it."""

    def __init__(self, found: Found | None = None, timeout: float = 120.0) -> None:
        self.found = found or find_browser()
        if not self.found.ok:
            raise BrowserUnavailable(self.found.reason)
        self.timeout = timeout
        self._stage = Path(tempfile.mkdtemp(prefix="vajra-browser-"))
        (self._stage / "index.html").write_text("<!doctype html><title>vajra judge</title>\n")
        self._server = StaticServer(self._stage)
        self._owner = _Owner()
        self._owner.start()
        self._count = 0
        self._pw: Any = None
        self._browser: Any = None
        self._page: Any = None
        try:
            self.version = self._owner.call(self._launch, timeout)
        except Exception as exc:
            self.close()
            raise BrowserUnavailable(f"{self.found.path} did not start: {str(exc).splitlines()[0]}"[:300]) from None

    @property
    def name(self) -> str:
        return f"Chromium {self.version} ({self.found.origin}, headless)"

    def _launch(self) -> str:
        from playwright.sync_api import sync_playwright

        self._pw = sync_playwright().start()
        self._browser = self._pw.chromium.launch(executable_path=self.found.path, headless=True,
                                                 args=list(FLAGS), timeout=self.timeout * 1000)
        self._page = self._browser.new_page()
        self._page.set_default_timeout(self.timeout * 1000)
        self._page.goto(self._server.url("/"))  # a secure context: navigator.gpu exists
        return str(self._browser.version)

    def _stage_folder(self, folder: Path, workload: str, inputs: dict[str, np.ndarray],
                      dtypes: dict[str, str]) -> tuple[Path, str]:
        """Copy the export's files, the transpiled module and the inputs into a served folder."""
        self._count += 1
        here = self._stage / f"j{self._count}"
        here.mkdir()
        for path in sorted(folder.iterdir()):
            if path.is_file() and path.suffix in (".wgsl", ".ts", ".json"):
                shutil.copyfile(path, here / path.name)
        try:
            js = transpile((folder / f"{workload}.ts").read_text(encoding="utf-8"))
        except TranspileError as exc:
            raise BrowserUnavailable(str(exc)) from None
        (here / f"{workload}.js").write_text(js, encoding="utf-8")
        for name, data in inputs.items():
            array = np.ascontiguousarray(data, dtype=NUMPY.get(dtypes.get(name, "f32"), "<f4"))
            (here / f"{name}.bin").write_bytes(array.tobytes())
        return here, f"/j{self._count}"

    def judge(self, folder: Path, workload: str, inputs: dict[str, np.ndarray],
              dtypes: dict[str, str] | None = None, reps: int = 5) -> BrowserRun:
        """Run ``folder/<workload>.ts`` in the page on ``inputs``; raises only BrowserUnavailable."""
        folder = Path(folder)
        here, base = self._stage_folder(folder, workload, inputs, dtypes or {})
        arg = {"moduleUrl": f"{base}/{workload}.js", "reps": int(reps),
               "inputs": {n: f"{base}/{n}.bin" for n in inputs},
               "wgslFiles": [f"{base}/{p.name}" for p in sorted(here.glob("*.wgsl"))]}
        try:
            raw = self._owner.call(lambda: self._page.evaluate(RUN_EXPORT, arg), self.timeout + 10)
        finally:
            shutil.rmtree(here, ignore_errors=True)
        if raw.get("unavailable"):
            raise BrowserUnavailable(f"{self.name}: {raw['unavailable']}")
        return self._run_of(raw)

    def _run_of(self, raw: dict[str, Any]) -> BrowserRun:
        outputs = {name: np.frombuffer(base64.b64decode(o["data"]), dtype=NUMPY.get(o["dtype"], "<f4"))
                   for name, o in raw.get("outputs", {}).items()}
        info = dict(raw.get("adapter") or {})
        return BrowserRun(
            browser=self.name, adapter=_adapter_words(info), adapter_info=info,
            limits={k: int(v) for k, v in raw.get("limits", {}).items()},
            features=list(raw.get("features", [])), used_features=list(raw.get("used", [])),
            messages=list(raw.get("messages", [])),
            files={name.rsplit("/", 1)[-1]: msgs for name, msgs in raw.get("files", {}).items()},
            outputs=outputs, times_ms=[float(t) for t in raw.get("times") or []],
            refused=str(raw.get("refused") or ""), error=str(raw.get("error") or ""))

    def _shutdown(self) -> None:
        for thing in (self._browser, self._pw):
            try:
                if thing is not None:
                    thing.close() if thing is self._browser else thing.stop()
            except Exception:  # noqa: BLE001 - closing a browser that already died
                pass

    def close(self) -> None:
        """End the browser, the server and the owner thread; safe to call twice."""
        if self._owner.is_alive():
            try:
                self._owner.call(self._shutdown, 30)
            except Exception:  # noqa: BLE001
                pass
            self._owner.jobs.put(None)
        self._server.close()
        shutil.rmtree(self._stage, ignore_errors=True)

    def __enter__(self) -> "ChromiumJudge":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_SHARED: dict[str, Any] = {}
_SHARED_LOCK = threading.Lock()


def shared_judge() -> ChromiumJudge:
    """One judge per process, started on first use and closed at exit (BrowserUnavailable if none).

    A browser that failed to start is not retried in the same process: the reason is kept.
    VAJRA_BROWSER=off is read on every call and never kept, so turning the judge off for a
    while (a script's one run, a test module) leaves it usable afterwards.
    """
    if browser_off():
        raise BrowserUnavailable(OFF_REASON)
    with _SHARED_LOCK:
        if "judge" in _SHARED:
            return _SHARED["judge"]
        if "reason" in _SHARED:
            raise BrowserUnavailable(_SHARED["reason"])
        try:
            judge = ChromiumJudge()
        except BrowserUnavailable as exc:
            _SHARED["reason"] = str(exc)
            raise
        _SHARED["judge"] = judge
        atexit.register(judge.close)
        return judge


__all__ = ["BrowserRun", "BrowserUnavailable", "ChromiumJudge", "FLAGS", "shared_judge"]
