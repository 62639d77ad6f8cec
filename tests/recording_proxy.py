"""A pass-through HTTP proxy that records what the daemon sends to a real model server.

Requests are recorded as the daemon sent them, then forwarded (after `rewrite`, when a
test gives one: real-server tests make the tiny model's sampling greedy, so a run repeats
instead of sometimes rambling to the output limit), and responses (streams included) are
copied back as they arrive.
"""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

_HOP_HEADERS = {"connection", "content-length", "transfer-encoding", "keep-alive", "host"}


class RecordingProxy:
    """Forwards to `upstream` (scheme, host and port of a base URL); records JSON bodies."""

    def __init__(
        self, upstream: str, rewrite: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    ) -> None:
        parts = urlsplit(upstream)
        self._rewrite = rewrite
        self._host, self._port = parts.hostname or "127.0.0.1", parts.port or 80
        self._prefix = parts.path.rstrip("/")
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The proxy's URL with the upstream's path (e.g. `/v1`) kept."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}{self._prefix}"

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _record(self, body: bytes) -> Any:
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = body.decode("utf-8", "replace")
        with self._lock:
            self.requests.append(parsed)
        return parsed

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._forward(b"")

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                parsed = proxy._record(body)
                if proxy._rewrite is not None and isinstance(parsed, dict):
                    body = json.dumps(proxy._rewrite(parsed)).encode()
                self._forward(body)

            def _forward(self, body: bytes) -> None:
                upstream = http.client.HTTPConnection(proxy._host, proxy._port, timeout=300)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_HEADERS}
                upstream.request(self.command, self.path, body=body or None, headers=headers)
                reply = upstream.getresponse()
                self.send_response(reply.status)
                for name, value in reply.getheaders():
                    if name.lower() not in _HOP_HEADERS:
                        self.send_header(name, value)
                self.send_header("Connection", "close")
                self.end_headers()
                while chunk := reply.read1(65536):
                    self.wfile.write(chunk)
                    self.wfile.flush()
                self.close_connection = True
                upstream.close()

        return Handler
