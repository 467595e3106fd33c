"""A tiny HTTP server on 127.0.0.1 for the browser judge: the page, the module, the inputs.

WebGPU exists only in secure contexts, and ``http://127.0.0.1`` is one (``file://`` and
``about:blank`` are not, there ``navigator.gpu`` is undefined). The server runs in a
daemon thread, answers only the loopback interface, never logs to the terminal and
serves JavaScript modules with a JavaScript MIME type (module scripts demand one).
"""

from __future__ import annotations

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class _Quiet(SimpleHTTPRequestHandler):
    """Static files, no request log, no caching (the judge rewrites a folder between runs)."""

    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, ".js": "text/javascript",
                      ".mjs": "text/javascript", ".wgsl": "text/plain; charset=utf-8",
                      ".bin": "application/octet-stream", ".ts": "text/plain; charset=utf-8"}

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        return

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


class StaticServer:
    """Serve ``root`` on an ephemeral loopback port until :meth:`close`."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        handler = functools.partial(_Quiet, directory=str(self.root))
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="vajra-browser-http",
                                        daemon=True)
        self._thread.start()

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def url(self, relative: str) -> str:
        return f"{self.origin}/{relative.lstrip('/')}"

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


__all__ = ["StaticServer"]
