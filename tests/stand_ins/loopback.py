"""A small threaded JSON HTTP server on loopback that records requests and peak concurrency."""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit


class Reply:
    """What a handler answers: a status, a JSON body, raw SSE text or raw bytes, and headers."""

    def __init__(
        self,
        status: int = 200,
        body: Any = None,
        sse: str | None = None,
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
        content_type: str = "text/html; charset=utf-8",
        sse_parts: list[tuple[float, str]] | None = None,
    ) -> None:
        self.status, self.body, self.sse, self.headers = status, body, sse, headers or {}
        self.raw, self.content_type = raw, content_type
        self.sse_parts = sse_parts  # (seconds to wait, text): a stream written slowly


def _form(text: str) -> dict[str, str]:
    """A query string or form body as a dict (last value wins)."""
    return dict(parse_qsl(text, keep_blank_values=True))


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # the default backlog of 5 would serialise a wide fan-out

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (a pooled connection closed, a timed-out probe) is not an
        error of the stand-in: socketserver would print its traceback into the test's stderr,
        where tests read what the CLI said. Anything else is printed as usual."""
        error = sys.exc_info()[1]
        if not isinstance(error, (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


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
            # A reply's headers and body are two writes: with Nagle's algorithm on, the body
            # waited for the client's delayed ACK, 40 ms a request (real servers set
            # TCP_NODELAY too: uvicorn, nginx)
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # the query string arrives as the body
                headers = {key.lower(): value for key, value in self.headers.items()}
                query = urlsplit(self.path).query
                self._answer(stand_in._serve(self.path, _form(query), headers, "GET"))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                headers = {key.lower(): value for key, value in self.headers.items()}
                if headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
                    body = _form(raw.decode())
                else:
                    body = json.loads(raw or b"{}")
                self._answer(stand_in._serve(self.path, body, headers, "POST"))

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

            def _answer(self, reply: Reply) -> None:
                if reply.sse_parts is not None:
                    self._write_slowly(reply)
                    return
                if reply.raw is not None:
                    data = reply.raw
                    self.send_response(reply.status)
                    self.send_header("Content-Type", reply.content_type)
                elif reply.sse is not None:
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

    def set_knobs(self) -> None:
        """A new stand-in's knobs (a subclass sets its own here)."""

    def reset(self) -> None:
        """Back to what a new stand-in would be, its server kept (for a stand-in that tests
        share): every knob at its default, nothing recorded, no method a test wrapped."""
        for name in [name for name in vars(self) if hasattr(type(self), name)]:
            del self.__dict__[name]  # a wrapped `handle`, a latency set on the instance
        self.set_knobs()
        with self._lock:
            self.requests = []
            self.peak_concurrency = self.in_flight

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _serve(self, path: str, body: dict, headers: dict, method: str = "POST") -> Reply:
        with self._lock:
            self.in_flight += 1
            self.peak_concurrency = max(self.peak_concurrency, self.in_flight)
        started, waited = time.monotonic(), self.delay(path)
        try:
            if waited:
                time.sleep(waited)
            reply = self.handle(path, body, headers)
            with self._lock:
                self.requests.append(
                    {
                        "started": started,
                        "ended": time.monotonic(),
                        "waited": waited,
                        "path": path,
                        "method": method,
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

    def delay(self, path: str) -> float:
        """Seconds a request for `path` takes before it is answered (`latency` for all)."""
        return self.latency

    def handle(self, path: str, body: dict, headers: dict) -> Reply:
        raise NotImplementedError
