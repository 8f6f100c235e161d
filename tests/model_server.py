"""A scripted OpenAI-compatible server on a loopback port, in a thread: the conformance tests reach it through the
real openai client over real HTTP, so retries, timeouts, status codes and malformed bodies behave as they would
against Ollama, vLLM or a hosted endpoint.

A script is a list of replies (request i gets item i; the last one repeats) or a callable taking the request body
and its index. A reply is a `Reply`, a string (assistant text) or a list of (tool, args) tool calls.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

USAGE = (100, 20)


@dataclass
class Reply:
    status: int = 200
    body: dict[str, Any] | bytes = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


def completion(
    content: str | None = None,
    tool_calls: list[tuple[str, Any]] | None = None,
    *,
    finish_reason: str | None = None,
    usage: tuple[int, int] = USAGE,
    raw_arguments: bool = False,
    cached_tokens: int | None = None,
) -> Reply:
    """A chat completion; `raw_arguments` sends tool arguments as given (strings) instead of JSON-encoding them;
    `cached_tokens` reports that part of the prompt as served from the server's prefix cache, as OpenAI, vLLM and
    llama.cpp do (`usage.prompt_tokens_details.cached_tokens`)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_{n}_{name}",
                "type": "function",
                "function": {"name": name, "arguments": args if raw_arguments else json.dumps(args)},
            }
            for n, (name, args) in enumerate(tool_calls)
        ]
    reason = finish_reason or ("tool_calls" if tool_calls else "stop")
    counts: dict[str, Any] = {
        "prompt_tokens": usage[0],
        "completion_tokens": usage[1],
        "total_tokens": sum(usage),
    }
    if cached_tokens is not None:
        counts["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
    return Reply(
        body={
            "id": "chatcmpl-stub",
            "object": "chat.completion",
            "created": 0,
            "model": "stub-model",
            "choices": [{"index": 0, "message": message, "finish_reason": reason}],
            "usage": counts,
        }
    )


def error(
    status: int,
    message: str,
    *,
    code: str | None = None,
    param: str | None = None,
    headers: dict[str, str] | None = None,
    delay: float = 0.0,
) -> Reply:
    return Reply(
        status,
        {"error": {"message": message, "type": "invalid_request_error", "code": code, "param": param}},
        headers or {},
        delay,
    )


def as_reply(item: Any) -> Reply:
    if isinstance(item, Reply):
        return item
    if isinstance(item, str):
        return completion(item)
    return completion(tool_calls=list(item))


Script = list[Any] | Callable[[dict[str, Any], int], Any]


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # the default 5 makes a burst of parallel requests wait on TCP retransmits
    daemon_threads = True
    block_on_close = False


class ModelServer:
    """`with ModelServer(script) as server:` → `server.base_url`, `server.requests` (the bodies received)."""

    def __init__(
        self,
        script: Script,
        *,
        latency: float = 0.0,
        models: tuple[str, ...] = ("stub-model",),
        models_status: int = 200,
    ) -> None:
        self.script = script
        self.latency = latency
        self.models = models
        self.models_status = models_status
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.01},
            name="model-server",
            daemon=True,
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> ModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()

    def reply_for(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            index = len(self.requests) - 1
        if callable(self.script):
            return as_reply(self.script(body, index))
        return as_reply(self.script[min(index, len(self.script) - 1)])

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _send(self, reply: Reply) -> None:
                payload = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    return

            def do_GET(self) -> None:
                server.paths.append(self.path)
                if self.path.rstrip("/").endswith("/models"):
                    if server.models_status != 200:
                        self._send(error(server.models_status, "listing refused"))
                        return
                    self._send(
                        Reply(
                            body={
                                "object": "list",
                                "data": [
                                    {"id": m, "object": "model", "created": 0, "owned_by": "stub"}
                                    for m in server.models
                                ],
                            }
                        )
                    )
                    return
                self._send(error(404, f"no route {self.path}"))

            def do_POST(self) -> None:
                arrived = time.monotonic()
                server.paths.append(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(error(404, f"no route {self.path}"))
                    return
                reply = server.reply_for(body)
                # the latency is the endpoint's response time, counted from the request's arrival: the script's
                # own work is inside it, as a real server's is, not added on top of it
                wait = arrived + server.latency + reply.delay - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                self._send(reply)

        return Handler


def closed_port_url() -> str:
    """A loopback base URL nothing listens on."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
