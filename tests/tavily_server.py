"""A loopback stand-in for Tavily's ``POST /search`` endpoint, for tests.

``mode`` is "ok" (results), "fail" (HTTP 500), "badjson" (200 with a body that
is not JSON) or "hang" (never answers until stopped).
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any

from loopback import LoopbackServer

LONG_CONTENT = (
    "workgroupBarrier must only be called from uniform control flow. " * 20
).strip()


class TavilyServer(LoopbackServer):
    def __init__(self, mode: str = "ok") -> None:
        self.mode = mode
        self.queries: list[str] = []
        self.bodies: list[dict[str, Any]] = []
        self.auth_headers: list[str] = []
        super().__init__(_make_handler(self))

    @property
    def url(self) -> str:
        return self.origin



def result_url(query: str, n: int) -> str:
    slug = "-".join(query.lower().split())[:40].replace("<", "").replace(">", "")
    return f"https://www.w3.org/TR/WGSL/#{slug}-{n}"


def _make_handler(server: TavilyServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def _send(self, status: int, data: bytes, ctype: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:  # noqa: N802
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            body = json.loads(raw or b"{}")
            with server._lock:
                server.bodies.append(body)
                server.queries.append(str(body.get("query", "")))
                server.auth_headers.append(self.headers.get("Authorization", ""))
            if self.path.rstrip("/") != "/search":
                return self._send(404, b'{"detail": {"error": "not found"}}')
            if server.mode == "fail":
                return self._send(500, b'{"detail": {"error": "internal error"}}')
            if server.mode == "badjson":
                return self._send(200, b"<html>not json</html>", "text/html")
            if server.mode == "hang":
                server.stop_event.wait(30)
                self.close_connection = True
                return None
            query = str(body.get("query", ""))
            n = int(body.get("max_results") or 3)
            results = [
                {"title": f"WGSL spec {i}", "url": result_url(query, i),
                 "content": LONG_CONTENT, "score": 0.9 - i / 10, "raw_content": None}
                for i in range(n)
            ]
            payload = {"query": query, "follow_up_questions": None, "answer": None,
                       "images": [], "results": results, "response_time": 0.01}
            return self._send(200, json.dumps(payload).encode())

    return Handler
