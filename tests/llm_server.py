"""A loopback OpenAI-compatible chat-completions server for tests.

Speaks the real SSE protocol (``data: {chunk}\\n\\n`` ... ``data: [DONE]``) over
chunked HTTP/1.1 so the real ``openai`` client can be exercised end to end.
Behaviour is scripted per model name: each request for a model takes the next
mode from its script (the last mode repeats).
"""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from loopback import LoopbackServer

KERNEL = """// tile: 64x1
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  if (i < N) {
    out[i] = fma(a[i], b[i], 0.0);
  }
}
"""
KERNEL_REPLY = f"Here is the kernel:\n```wgsl\n{KERNEL}```\nIt uses fma.\n"
THINK_TEXT = "I should keep loads coalesced and use fma."
THINK_REPLY = f"<think>{THINK_TEXT}</think>\n```wgsl\n{KERNEL}```\n"
PROSE_REPLY = "I cannot write that kernel, but consider using shared memory tiles."

MODES = (
    "kernel", "503", "404", "429", "401", "cut", "prose", "think", "reasoning_field", "hang",
)

_ERRORS: dict[str, tuple[int, dict[str, Any]]] = {
    "503": (503, {"error": {"message": "Service unavailable", "type": "server_error"}}),
    "404": (404, {"error": {"message": "The model does not exist", "type": "invalid_request_error",
                            "code": "model_not_found"}}),
    "429": (429, {"error": {"message": "Rate limit exceeded", "type": "rate_limit_error"}}),
}


class LLMServer(LoopbackServer):
    """Start with :meth:`start`; ``url`` is the base URL to give the client."""

    def __init__(self, chunk_size: int = 6, chunk_delay: float = 0.005) -> None:
        self.chunk_size = chunk_size
        self.chunk_delay = chunk_delay
        self.scripts: dict[str, list[str]] = {}
        self.requests: list[dict[str, Any]] = []
        self.auth_headers: list[str] = []
        self.active = 0
        self.max_active = 0
        super().__init__(_make_handler(self))

    @property
    def url(self) -> str:
        return f"{self.origin}/v1/"

    def script(self, model: str, *modes: str) -> None:
        for m in modes:
            assert m in MODES, m
        self.scripts[model] = list(modes)

    def requests_for(self, model: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if r.get("model") == model]

    def next_mode(self, model: str) -> str:
        with self._lock:
            script = self.scripts.get(model, ["kernel"])
            return script.pop(0) if len(script) > 1 else script[0]



def _chunk(model: str, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test", "object": "chat.completion.chunk", "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
    }


def _make_handler(server: LLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:  # keep test output quiet
            pass

        def _json(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _send_chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _event(self, payload: dict[str, Any] | str) -> None:
            text = payload if isinstance(payload, str) else json.dumps(payload)
            self._send_chunk(f"data: {text}\n\n".encode())
            if server.chunk_delay:
                time.sleep(server.chunk_delay)

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            model = str(body.get("model", ""))
            with server._lock:
                server.requests.append(body)
                server.auth_headers.append(self.headers.get("Authorization", ""))
                server.active += 1
                server.max_active = max(server.max_active, server.active)
            try:
                self._serve(model, server.next_mode(model))
            finally:
                with server._lock:
                    server.active -= 1

        def _serve(self, model: str, mode: str) -> None:
            if mode in _ERRORS:
                status, err = _ERRORS[mode]
                return self._json(status, err)
            if mode == "401":
                token = self.headers.get("Authorization", "")
                return self._json(401, {"error": {"message": f"Invalid key {token}",
                                                  "type": "invalid_request_error"}})
            if mode == "hang":
                server.stop_event.wait(30)
                self.close_connection = True
                return None
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self._event(_chunk(model, {"role": "assistant", "content": ""}))
            if mode == "reasoning_field":
                for part in _split(THINK_TEXT, server.chunk_size):
                    self._event(_chunk(model, {"reasoning_content": part}))
            text = {"prose": PROSE_REPLY, "think": THINK_REPLY}.get(mode, KERNEL_REPLY)
            parts = _split(text, server.chunk_size)
            if mode == "cut":
                for part in parts[: len(parts) // 2]:
                    self._event(_chunk(model, {"content": part}))
                self.close_connection = True  # closed without terminating chunk or [DONE]
                return None
            for part in parts:
                self._event(_chunk(model, {"content": part}))
            self._event(_chunk(model, {}, finish="stop"))
            self._event("[DONE]")
            self._send_chunk(b"")  # terminating zero-length chunk
            return None

    return Handler


def _split(text: str, n: int) -> list[str]:
    return [text[i:i + n] for i in range(0, len(text), n)]
