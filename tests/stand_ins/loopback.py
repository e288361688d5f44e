"""A small threaded JSON HTTP server on loopback that records requests and peak concurrency."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Reply:
    """What a handler answers: a status, a JSON body or raw SSE text, and headers."""

    def __init__(
        self,
        status: int = 200,
        body: Any = None,
        sse: str | None = None,
        headers: dict[str, str] | None = None,
        sse_parts: list[tuple[float, str]] | None = None,
    ) -> None:
        self.status, self.body, self.sse, self.headers = status, body, sse, headers or {}
        self.sse_parts = sse_parts  # (seconds to wait, text): a stream written slowly


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # the default backlog of 5 would serialise a wide fan-out


class StandIn:
    """Base: subclasses implement `handle(path, body, headers) -> Reply`."""

    latency = 0.0  # seconds each request takes

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.peak_concurrency = 0
        self._lock = threading.Lock()
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                self.do_POST()

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw or b"{}")
                headers = {key.lower(): value for key, value in self.headers.items()}
                reply = stand_in._serve(self.path, body, headers)
                if reply.sse_parts is not None:
                    self._write_slowly(reply)
                    return
                if reply.sse is not None:
                    data = reply.sse.encode()
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "text/event-stream")
                else:
                    data = json.dumps(reply.body).encode()
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)  # the client may be gone: a test killed it

            def _write_slowly(self, reply: Reply) -> None:
                """An event stream sent part by part, as a slow model writes; then close."""
                self.send_response(reply.status)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    for wait, text in reply.sse_parts or []:
                        time.sleep(wait)
                        self.wfile.write(text.encode())
                        self.wfile.flush()

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> StandIn:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _serve(self, path: str, body: dict, headers: dict) -> Reply:
        with self._lock:
            self.in_flight += 1
            self.peak_concurrency = max(self.peak_concurrency, self.in_flight)
        try:
            if self.latency:
                time.sleep(self.latency)
            reply = self.handle(path, body, headers)
            with self._lock:
                self.requests.append(
                    {
                        "path": path,
                        "body": body,
                        "headers": headers,
                        "status": reply.status,
                        "reply": reply.body,
                    }
                )
            return reply
        finally:
            with self._lock:
                self.in_flight -= 1

    def handle(self, path: str, body: dict, headers: dict) -> Reply:
        raise NotImplementedError
