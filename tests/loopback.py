"""The plumbing the loopback protocol servers share: a threaded HTTP server on 127.0.0.1."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TypeVar

S = TypeVar("S", bound="LoopbackServer")


class LoopbackServer:
    """Serves ``handler`` on a free port in a daemon thread; use as a context manager."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.stop_event = threading.Event()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self: S) -> S:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stop_event.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self: S) -> S:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
