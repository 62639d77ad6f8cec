"""A real HTTP server on loopback for the web tools' tests: pages, redirects, a slow and a
huge endpoint, and search APIs replaying SearXNG's and Brave's documented JSON."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

PAGE = b"""<!doctype html><html><head><title>Release notes</title>
<style>body { color: red }</style><script>var secret = "script-text";</script></head>
<body><nav><a href="/">Home</a> | <a href="/docs">Docs</a></nav>
<h1>Version 2.0</h1><p>Adds <strong>streaming</strong> and <a href="/faq">a FAQ</a>.</p>
<ul><li>Faster start</li><li>Fewer bugs</li></ul>
<pre><code>pip install thing==2.0</code></pre>
<footer>Copyright footer-text</footer></body></html>"""
HUGE_BYTES = 6 * 1024 * 1024
# SearXNG's /search?format=json answer, trimmed to the fields agentls reads and a few more.
SEARXNG_ANSWER = {
    "query": "",
    "number_of_results": 0,
    "results": [
        {
            "url": "https://docs.python.org/3/library/asyncio.html",
            "title": "asyncio — Asynchronous I/O",
            "content": "asyncio is a library to write concurrent code using async/await.",
            "engine": "duckduckgo",
            "engines": ["duckduckgo", "brave"],
            "score": 2.0,
            "category": "general",
        },
        {
            "url": "https://realpython.com/async-io-python/",
            "title": "Async IO in Python: A Complete Walkthrough",
            "content": "A hands-on guide &amp; walkthrough.",
            "engine": "brave",
            "score": 1.0,
            "category": "general",
        },
        {"title": "an entry without a url is skipped", "content": "x"},
    ],
    "answers": [],
    "corrections": [],
    "infoboxes": [],
    "suggestions": ["asyncio tutorial"],
    "unresponsive_engines": [],
}
# The Brave Search API's web search answer (GET /res/v1/web/search), trimmed.
BRAVE_ANSWER = {
    "type": "search",
    "query": {"original": "", "more_results_available": True},
    "web": {
        "type": "search",
        "results": [
            {
                "type": "search_result",
                "title": "Bubblewrap - ArchWiki",
                "url": "https://wiki.archlinux.org/title/Bubblewrap",
                "description": "<strong>Bubblewrap</strong> is a lightweight sandbox.",
                "language": "en",
                "family_friendly": True,
            },
            {
                "type": "search_result",
                "title": "containers/bubblewrap",
                "url": "https://github.com/containers/bubblewrap",
                "description": "Low-level unprivileged sandboxing tool.",
            },
        ],
    },
}


class WebServer:
    """Routes on a ThreadingHTTPServer; `requests` records (path, headers) of each request."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.routes: dict[str, Callable[[BaseHTTPRequestHandler, dict[str, list[str]]], None]] = {
            "/page": lambda h, q: _send(h, 200, "text/html; charset=utf-8", PAGE),
            "/data.json": lambda h, q: _send(h, 200, "application/json", b'{"answer": 42}'),
            "/image.png": lambda h, q: _send(
                h, 200, "image/png", b"\x89PNG\r\n\x1a\n" + b"\0" * 64
            ),
            "/missing": lambda h, q: _send(h, 404, "text/html", b"<h1>No such page here</h1>"),
            "/r1": lambda h, q: _redirect(h, "/r2"),
            "/r2": lambda h, q: _redirect(h, f"http://127.0.0.1:{self.port}/page"),
            "/away": lambda h, q: _redirect(h, f"http://localhost:{self.port}/page"),
            "/loop": lambda h, q: _redirect(h, "/loop"),
            "/slow": self._slow,
            "/huge": lambda h, q: self._huge(h, "text/plain", b"x" * 1023 + b"\n"),
            "/huge.html": lambda h, q: self._huge(h, "text/html", b"<p>" + b"y" * 1017 + b"</p>\n"),
            "/search": lambda h, q: _json(h, {**SEARXNG_ANSWER, "query": q["q"][0]}),
            "/res/v1/web/search": lambda h, q: _json(h, BRAVE_ANSWER),
            "/html/search": lambda h, q: _send(h, 200, "text/html", PAGE),
        }
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                server.requests.append((self.path, dict(self.headers.items())))
                route = server.routes.get(parts.path)
                if route is None:
                    _send(self, 404, "text/plain", b"not found")
                else:
                    route(self, parse_qs(parts.query))

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"

    def _slow(self, handler: BaseHTTPRequestHandler, query: dict[str, list[str]]) -> None:
        time.sleep(5)
        with contextlib.suppress(OSError):
            _send(handler, 200, "text/plain", b"too late")

    def _huge(self, handler: BaseHTTPRequestHandler, content_type: str, line: bytes) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(HUGE_BYTES))
        handler.end_headers()
        with contextlib.suppress(OSError):
            for _ in range(HUGE_BYTES // len(line)):
                handler.wfile.write(line)

    @contextlib.contextmanager
    def running(self) -> Iterator[WebServer]:
        thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._server.shutdown()
            self._server.server_close()


def _send(handler: BaseHTTPRequestHandler, status: int, content_type: str, body: bytes) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def _json(handler: BaseHTTPRequestHandler, data: Any) -> None:
    _send(handler, 200, "application/json", json.dumps(data).encode())


def _redirect(handler: BaseHTTPRequestHandler, location: str) -> None:
    handler.send_response(302)
    handler.send_header("Location", location)
    handler.send_header("Content-Length", "0")
    handler.end_headers()
