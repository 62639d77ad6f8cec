"""Record one response of a real model server as an `llm-sse-fixture/1` file.

The quirks of third-party servers are kept as they were sent, so each has a fast replay
test without the server. Frame data is stored as the exact text after `data: ` (servers
differ in JSON spacing), and only the headers a client reads are kept.

    python tests/capture_fixture.py --url http://127.0.0.1:PORT/v1/chat/completions \\
        --request req.json --out tests/fixtures/servers/llamacpp_tool_call.json \\
        --purpose "llama.cpp repeats id and name on every tool-call fragment"

`--api-key` is sent as `Authorization: Bearer` and `x-api-key`; it is never written.
"""

from __future__ import annotations

import argparse
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

_KEPT_HEADERS = ("content-type", "x-request-id", "request-id", "retry-after", "retry-after-ms")


def parse_sse(text: str) -> list[dict[str, Any]]:
    """The frames of an SSE body: `event` (when present) and the verbatim `data` text."""
    frames: list[dict[str, Any]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        frame: dict[str, Any] = {}
        data: list[str] = []
        for line in block.split("\n"):
            if line.startswith("event:"):
                frame["event"] = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
        if data:
            frame["data"] = "\n".join(data)
            frames.append(frame)
    return frames


def capture(url: str, body: dict[str, Any] | None, api_key: str | None) -> dict[str, Any]:
    """The `response` section for one POST of `body` to `url` (a GET without a body)."""
    headers = {"content-type": "application/json", "anthropic-version": "2023-06-01"}
    if api_key:
        headers |= {"authorization": f"Bearer {api_key}", "x-api-key": api_key}
    data = None if body is None else json.dumps(body).encode()
    method = "GET" if body is None else "POST"
    request = urllib.request.Request(url, data, headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=300) as reply:
            status, reply_headers, raw = reply.status, reply.headers, reply.read()
    except urllib.error.HTTPError as exc:
        status, reply_headers, raw = exc.code, exc.headers, exc.read()
    kept = {k: reply_headers[k] for k in _KEPT_HEADERS if reply_headers.get(k)}
    text = raw.decode("utf-8")
    if "text/event-stream" in kept.get("content-type", ""):
        return {"status": status, "headers": kept, "sse_events": parse_sse(text)}
    return {"status": status, "headers": kept, "body": text}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--request", help="JSON file with the request body (none: a GET)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--purpose", required=True)
    parser.add_argument("--source", default="", help="server and version it came from")
    parser.add_argument("--api-key")
    args = parser.parse_args()
    body = json.loads(Path(args.request).read_text(encoding="utf-8")) if args.request else None
    out = Path(args.out)
    provider = "anthropic" if "/messages" in args.url or "anthropic" in out.stem else "openai-chat"
    fixture = {
        "format": "llm-sse-fixture/1",
        "provider": provider,
        "name": out.stem,
        "purpose": args.purpose,
        "sources": [args.source] if args.source else [],
        "request": {
            "method": "POST" if body is not None else "GET",
            "path": "/" + args.url.split("/", 3)[3],
            **({"json": body} if body is not None else {}),
        },
        "response": capture(args.url, body, args.api_key),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
