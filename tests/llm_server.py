"""A loopback OpenAI-compatible chat-completions server for tests.

Speaks the real SSE protocol (``data: {chunk}\\n\\n`` ... ``data: [DONE]``) over
chunked HTTP/1.1 so the real ``openai`` client can be exercised end to end.
Behaviour is scripted per model name: each request for a model takes the next
mode from its script (the last mode repeats). A mode is a name from :data:`MODES`
or a :class:`Scripted` reply: any text, with optional ``reasoning_content`` deltas
and the ``finish_reason`` of your choice (``"length"``: cut off at the token
limit), or an :class:`Endless` one: a server that ignores max_tokens and never
stops streaming until the client hangs up. Every request's body is kept, so tests can read the messages sent.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any, Union

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
    "badjson",  # a stream whose events are not JSON: a proxy or a web page at base_url
)



@dataclass(frozen=True)
class Scripted:
    """One streamed reply: ``reasoning`` goes out as reasoning_content deltas, then ``text``."""

    text: str
    reasoning: str = ""
    finish_reason: str = "stop"


@dataclass(frozen=True)
class Endless:
    """A reply that never ends: ``prefix`` as content, then ``filler`` (as reasoning_content
    deltas if ``reasoning``) repeated until the client closes the stream or the server stops."""

    prefix: str = ""
    filler: str = "Let me think about the tiling once more. "
    reasoning: bool = False


Mode = Union[str, Scripted, Endless]

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
        self.retry_after_ms = 20  # sent with 429 and 5xx: the client's retry honours it
        self.scripts: dict[str, list[Mode]] = {}
        self.requests: list[dict[str, Any]] = []
        self.auth_headers: list[str] = []
        self.active = 0
        self.max_active = 0
        self.endless_chunks = 0  # chunks an Endless reply got out before the client hung up
        super().__init__(_make_handler(self))

    @property
    def url(self) -> str:
        return f"{self.origin}/v1/"

    def script(self, model: str, *modes: Mode) -> None:
        for m in modes:
            assert isinstance(m, (Scripted, Endless)) or m in MODES, m
        self.scripts[model] = list(modes)

    def reply(self, model: str, *texts: str, reasoning: str = "", finish_reason: str = "stop") -> None:
        """Script ``model`` to stream these replies in turn (the last one repeats)."""
        self.script(model, *(Scripted(t, reasoning, finish_reason) for t in texts))

    def requests_for(self, model: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if r.get("model") == model]

    def messages(self, model: str | None = None) -> list[list[dict[str, Any]]]:
        """The messages of every request (for ``model`` only, if given), in arrival order."""
        return [list(r.get("messages", [])) for r in self.requests
                if model is None or r.get("model") == model]

    def next_mode(self, model: str) -> Mode:
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

        def _json(self, status: int, body: dict[str, Any],
                  headers: dict[str, str] | None = None) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
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

        def _serve(self, model: str, mode: Mode) -> None:
            if isinstance(mode, Scripted):
                return self._stream(model, mode.text, mode.reasoning, mode.finish_reason)
            if isinstance(mode, Endless):
                return self._endless(model, mode)
            if mode in _ERRORS:
                status, err = _ERRORS[mode]
                return self._json(status, err, {"retry-after-ms": str(server.retry_after_ms)})
            if mode == "401":
                token = self.headers.get("Authorization", "")
                return self._json(401, {"error": {"message": f"Invalid key {token}",
                                                  "type": "invalid_request_error"}})
            if mode == "hang":
                server.stop_event.wait(30)
                self.close_connection = True
                return None
            self._start(model)
            if mode == "badjson":
                self.close_connection = True
                try:
                    self._event("<html><body>Service portal</body></html>")
                    self._event("[DONE]")
                    self._send_chunk(b"")
                except OSError:  # the client hung up at the first bad event, as it should
                    pass
                return None
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
            return self._finish(model, parts, "stop")

        def _start(self, model: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self._event(_chunk(model, {"role": "assistant", "content": ""}))

        def _finish(self, model: str, parts: list[str], finish: str) -> None:
            for part in parts:
                self._event(_chunk(model, {"content": part}))
            self._event(_chunk(model, {}, finish=finish))
            self._event("[DONE]")
            self._send_chunk(b"")  # terminating zero-length chunk

        def _stream(self, model: str, text: str, reasoning: str, finish: str) -> None:
            self._start(model)
            for part in _split(reasoning, server.chunk_size):
                self._event(_chunk(model, {"reasoning_content": part}))
            self._finish(model, _split(text, server.chunk_size), finish)

        def _endless(self, model: str, mode: Endless) -> None:
            self._start(model)
            key = "reasoning_content" if mode.reasoning else "content"
            filler = (mode.filler * (server.chunk_size // max(1, len(mode.filler)) + 1))
            filler = filler[: max(server.chunk_size, 1)]
            self.close_connection = True
            try:
                for part in _split(mode.prefix, server.chunk_size):
                    self._event(_chunk(model, {"content": part}))
                while not server.stop_event.is_set():
                    self._event(_chunk(model, {key: filler}))
                    server.endless_chunks += 1
            except OSError:  # the client hung up: what a bounded client does
                return None
            return None

    return Handler


def _split(text: str, n: int) -> list[str]:
    return [text[i:i + n] for i in range(0, len(text), n)]
