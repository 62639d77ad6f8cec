"""A fake model API that replays wire-exact responses, so providers run through the real SDKs.

Tests script what the "model" says next (a fixture from `tests/fixtures/`, or a generated
Anthropic- or OpenAI-shaped turn) and assert on what the daemon sent. The server speaks
plain HTTP/1.1 with chunked streams exactly as `tests/fixtures/README.md` describes, so
the SDKs' own SSE decoders, retry and error mapping are exercised rather than mocked.

In process::

    with ReplayServer([anthropic_tool_turn(ToolCall("toolu_1", "Read", {"file_path": "a"})),
                       anthropic_text_turn("Done.")]) as server:
        provider = AnthropicProvider(api_key="test", base_url=server.base_url)

Tests that run several sessions side by side give each its own script with
`server.script(model, ...)` (requests are routed by model, or by a `route` function).
Faults are options of a response (`drop_after`, `stall_at`, `no_response`, `cut`,
`insert` with `RawFrame` bytes that break the SSE format).

As a subprocess (for end-to-end tests of the daemon)::

    python tests/replay_server.py --script turns.json --log requests.jsonl

prints the port on its first stdout line, then serves until SIGTERM/SIGINT. The script
is a JSON list (or `{"responses": [...]}`) of entries understood by `response_from_spec`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

FIXTURES_DIR = Path(__file__).resolve().parent / "fixtures"
FIXTURE_FORMAT = "llm-sse-fixture/1"


@dataclass(frozen=True, slots=True)
class Frame:
    """One SSE frame; `data` is already the exact text after `data: `."""

    data: str
    event: str | None = None

    def render(self) -> bytes:
        """The frame's wire bytes."""
        head = f"event: {self.event}\n" if self.event is not None else ""
        return f"{head}data: {self.data}\n\n".encode()


@dataclass(frozen=True, slots=True)
class RawFrame:
    """Bytes sent as they are, for streams that break the SSE format (garbage lines,
    data that is not JSON, an event cut before its end)."""

    raw: bytes

    def render(self) -> bytes:
        """The frame's wire bytes."""
        return self.raw


@dataclass(frozen=True, slots=True)
class ScriptedResponse:
    """One HTTP response: an SSE stream when `frames` is set, else a body with content-length."""

    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    frames: tuple[Frame | RawFrame, ...] | None = None
    body: bytes = b""
    # Cut the whole stream into chunks of this many bytes (anywhere, even inside a
    # UTF-8 character) instead of one HTTP chunk per frame.
    split: int | None = None
    # Seconds to sleep before each chunk: time for a test to abort a turn mid-stream, or
    # for a client's read timeout to fire.
    frame_delay: float = 0.0
    # Close the socket abruptly after this many chunks (a dropped connection).
    drop_after: int | None = None
    # Go silent for `stall` seconds before chunk number `stall_at` (a stalled stream).
    stall_at: int | None = None
    stall: float = 0.0
    # Close the connection without answering at all (a server that died on the request).
    no_response: bool = False

    def cut(self, frames: int, *tail: Frame | RawFrame) -> ScriptedResponse:
        """This stream's first `frames` frames, then `tail`, ended cleanly: the stream a
        proxy or a crashing server closes early without an error."""
        assert self.frames is not None, "not a stream"
        return replace(self, frames=(*self.frames[:frames], *tail))

    def insert(self, at: int, *frames: Frame | RawFrame) -> ScriptedResponse:
        """This stream with `frames` sent before its frame number `at`."""
        assert self.frames is not None, "not a stream"
        return replace(self, frames=(*self.frames[:at], *frames, *self.frames[at:]))

    def stream_chunks(self) -> list[bytes]:
        """The HTTP chunks of a stream response, before chunked framing."""
        frames = [f.render() for f in self.frames or ()]
        if self.split is None:
            return frames
        data = b"".join(frames)
        return [data[i : i + self.split] for i in range(0, len(data), self.split)]


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw_body: bytes = field(repr=False, default=b"")

    def to_json(self) -> dict[str, Any]:
        """The request as one line of the `--log` JSONL file."""
        return {
            "method": self.method,
            "path": self.path,
            "headers": self.headers,
            "body": self.body,
        }

    def api_key(self) -> str | None:
        """The credential sent, whichever header the SDK version used."""
        if "x-api-key" in self.headers:
            return self.headers["x-api-key"]
        auth = self.headers.get("authorization", "")
        return auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None


# --- wire rendering -----------------------------------------------------------------


def compact_json(data: Any) -> str:
    """JSON the way both APIs send it: no spaces, UTF-8 kept as is."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def render_data(data: Any) -> str:
    """A fixture's `data`: objects as compact JSON, strings verbatim."""
    return data if isinstance(data, str) else compact_json(data)


def render_body(body: Any, style: str | None = None) -> bytes:
    """A fixture's non-stream body; `indent4` is how OpenAI pretty-prints errors."""
    if isinstance(body, str):
        return body.encode()
    if style == "indent4":
        return (json.dumps(body, indent=4, ensure_ascii=False) + "\n").encode()
    return compact_json(body).encode()


def response_from_fixture_dict(response: Mapping[str, Any], **options: Any) -> ScriptedResponse:
    """A fixture's `response` section as a ScriptedResponse."""
    headers = tuple((str(k), str(v)) for k, v in response.get("headers", {}).items())
    status = int(response.get("status", 200))
    if "sse_events" in response:
        frames = tuple(
            Frame(render_data(e["data"]), e.get("event")) for e in response["sse_events"]
        )
        return ScriptedResponse(status, headers, frames=frames, **options)
    body = render_body(response.get("body", ""), response.get("body_style"))
    return ScriptedResponse(status, headers, body=body, **options)


def load_fixture(name: str | Path) -> dict[str, Any]:
    """A fixture by path, or by name relative to tests/fixtures (`anthropic/01_text_basic`)."""
    path = Path(name)
    if not path.is_absolute() and not path.exists():
        path = FIXTURES_DIR / path
    if path.suffix != ".json":
        path = path.with_suffix(".json")
    fixture: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if fixture.get("format") != FIXTURE_FORMAT:
        raise ValueError(f"{path} is not an {FIXTURE_FORMAT} fixture")
    return fixture


def fixture_names(provider_dir: str) -> list[str]:
    """Names of every fixture in one folder, e.g. `fixture_names("openai")`."""
    return sorted(f"{provider_dir}/{p.stem}" for p in (FIXTURES_DIR / provider_dir).glob("*.json"))


def fixture_response(name: str | Path | Mapping[str, Any], **options: Any) -> ScriptedResponse:
    """The response of a fixture (by name, path or loaded dict)."""
    fixture = name if isinstance(name, Mapping) else load_fixture(name)
    return response_from_fixture_dict(fixture["response"], **options)


def dump(response: ScriptedResponse) -> bytes:
    """Status line, headers and body (frames joined, no chunk framing), for eyeballing."""
    head = [f"HTTP/1.1 {response.status}", *(f"{k}: {v}" for k, v in response.headers)]
    body = response.body if response.frames is None else b"".join(response.stream_chunks())
    return "\r\n".join([*head, "", ""]).encode() + body


# --- generated turns ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    input: dict[str, Any]


def _pieces(text: str, size: int) -> list[str]:
    """`text` cut into `size`-character pieces, as a model streams it."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


_ANTHROPIC_HEADERS = (
    ("content-type", "text/event-stream; charset=utf-8"),
    ("cache-control", "no-cache"),
)
_OPENAI_HEADERS = (("content-type", "text/event-stream; charset=utf-8"),)


def anthropic_stream(
    events: Iterable[Mapping[str, Any]], *, request_id: str = "req_replay", **options: Any
) -> ScriptedResponse:
    """An Anthropic SSE stream from event payloads; the `event:` line is each payload's type."""
    frames = tuple(Frame(compact_json(e), str(e["type"])) for e in events)
    headers = (*_ANTHROPIC_HEADERS, ("request-id", request_id))
    return ScriptedResponse(200, headers, frames=frames, **options)


def _anthropic_block_events(
    index: int, start: dict[str, Any], deltas: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    return [
        {"type": "content_block_start", "index": index, "content_block": start},
        *({"type": "content_block_delta", "index": index, "delta": d} for d in deltas),
        {"type": "content_block_stop", "index": index},
    ]


def _anthropic_blocks(
    text: str | None, tool_calls: Sequence[ToolCall], thinking: tuple[str, str] | None
) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """(content_block_start payload, deltas) per block, fragmented as the API streams."""
    blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    if thinking is not None:
        deltas = [{"type": "thinking_delta", "thinking": p} for p in _pieces(thinking[0], 16)]
        deltas.append({"type": "signature_delta", "signature": thinking[1]})
        blocks.append(({"type": "thinking", "thinking": "", "signature": ""}, deltas))
    if text is not None:
        deltas = [{"type": "text_delta", "text": p} for p in _pieces(text, 12)]
        blocks.append(({"type": "text", "text": ""}, deltas))
    for call in tool_calls:
        # The live API's first input_json_delta is empty.
        fragments = ["", *_pieces(json.dumps(call.input), 10)]
        deltas = [{"type": "input_json_delta", "partial_json": f} for f in fragments]
        blocks.append(({"type": "tool_use", "id": call.id, "name": call.name, "input": {}}, deltas))
    return blocks


def anthropic_turn(
    *,
    text: str | None = None,
    tool_calls: Sequence[ToolCall] = (),
    thinking: tuple[str, str] | None = None,
    stop_reason: str | None = None,
    input_tokens: int = 100,
    output_tokens: int = 20,
    cache_read_tokens: int = 0,
    cache_write_tokens: int = 0,
    message_id: str = "msg_replay",
    request_id: str = "req_replay",
    model: str = "claude-replay",
    **options: Any,
) -> ScriptedResponse:
    """One assistant message: (thinking, signature)?, text?, then tool_use blocks."""
    usage = {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": cache_write_tokens,
        "cache_read_input_tokens": cache_read_tokens,
        "output_tokens": 1,
    }
    message: dict[str, Any] = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    events: list[dict[str, Any]] = [{"type": "message_start", "message": message}]
    for index, (start, deltas) in enumerate(_anthropic_blocks(text, tool_calls, thinking)):
        events += _anthropic_block_events(index, start, deltas)
    stop = stop_reason or ("tool_use" if tool_calls else "end_turn")
    delta = {"stop_reason": stop, "stop_sequence": None}
    events.append(
        {"type": "message_delta", "delta": delta, "usage": {"output_tokens": output_tokens}}
    )
    events.append({"type": "message_stop"})
    return anthropic_stream(events, request_id=request_id, **options)


def anthropic_text_turn(text: str, **kwargs: Any) -> ScriptedResponse:
    """An Anthropic stream answering with plain text."""
    return anthropic_turn(text=text, **kwargs)


def anthropic_tool_turn(
    *calls: ToolCall, text: str | None = None, **kwargs: Any
) -> ScriptedResponse:
    """An Anthropic stream that calls the given tools (after optional text)."""
    return anthropic_turn(text=text, tool_calls=calls, **kwargs)


def anthropic_error(
    status: int,
    error_type: str,
    message: str,
    *,
    request_id: str = "req_replay",
    headers: Mapping[str, str] | None = None,
) -> ScriptedResponse:
    """An Anthropic error response (`{"type":"error","error":{...}}`)."""
    body = {
        "type": "error",
        "error": {"type": error_type, "message": message},
        "request_id": request_id,
    }
    all_headers = (
        ("content-type", "application/json"),
        ("request-id", request_id),
        *(headers or {}).items(),
    )
    return ScriptedResponse(status, tuple(all_headers), body=compact_json(body).encode())


def openai_stream(
    chunks: Iterable[Mapping[str, Any]],
    *,
    request_id: str = "req_replay",
    done: bool = True,
    **options: Any,
) -> ScriptedResponse:
    """An OpenAI SSE stream from chunk objects, ended by `[DONE]` unless `done` is false."""
    frames = [Frame(compact_json(c)) for c in chunks]
    if done:
        frames.append(Frame("[DONE]"))
    headers = (*_OPENAI_HEADERS, ("x-request-id", request_id))
    return ScriptedResponse(200, headers, frames=tuple(frames), **options)


def _openai_chunk(
    delta: dict[str, Any], finish_reason: str | None = None, *, chunk_id: str, model: str
) -> dict[str, Any]:
    return {
        "id": chunk_id,
        "object": "chat.completion.chunk",
        "created": 1763735401,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
        "usage": None,
    }


def _openai_tool_deltas(calls: Sequence[ToolCall], same_index: bool) -> list[dict[str, Any]]:
    deltas: list[dict[str, Any]] = []
    for k, call in enumerate(calls):
        index = 0 if same_index else k
        first = {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        deltas.append({"tool_calls": [first]})
        for piece in _pieces(json.dumps(call.input), 10):
            deltas.append({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    return deltas


def openai_turn(
    *,
    text: str | None = None,
    tool_calls: Sequence[ToolCall] = (),
    reasoning: str | None = None,
    reasoning_field: str = "reasoning_content",
    finish_reason: str | None = None,
    same_index: bool = False,
    prompt_tokens: int = 100,
    completion_tokens: int = 20,
    cached_tokens: int = 0,
    chunk_id: str = "chatcmpl-replay",
    request_id: str = "req_replay",
    model: str = "gpt-replay",
    **options: Any,
) -> ScriptedResponse:
    """One assistant message as chat.completion.chunk objects, with a `choices:[]` usage chunk.

    `same_index=True` gives every tool call index 0, as some compatible servers do.
    """
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": None if text is None else ""}]
    if reasoning is not None:
        deltas += [{"content": None, reasoning_field: p} for p in _pieces(reasoning, 16)]
    if text is not None:
        deltas += [{"content": p} for p in _pieces(text, 12)]
    deltas += _openai_tool_deltas(tool_calls, same_index)
    finish = finish_reason or ("tool_calls" if tool_calls else "stop")
    chunks = [_openai_chunk(d, chunk_id=chunk_id, model=model) for d in deltas]
    chunks.append(_openai_chunk({}, finish, chunk_id=chunk_id, model=model))
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "prompt_tokens_details": {"cached_tokens": cached_tokens},
    }
    chunks.append(
        {**_openai_chunk({}, chunk_id=chunk_id, model=model), "choices": [], "usage": usage}
    )
    return openai_stream(chunks, request_id=request_id, **options)


def openai_text_turn(text: str, **kwargs: Any) -> ScriptedResponse:
    """An OpenAI stream answering with plain text."""
    return openai_turn(text=text, **kwargs)


def openai_tool_turn(*calls: ToolCall, text: str | None = None, **kwargs: Any) -> ScriptedResponse:
    """An OpenAI stream that calls the given tools (after optional text)."""
    return openai_turn(text=text, tool_calls=calls, **kwargs)


def openai_error(
    status: int,
    error_type: str,
    message: str,
    *,
    code: str | None = None,
    request_id: str = "req_replay",
    headers: Mapping[str, str] | None = None,
) -> ScriptedResponse:
    """An OpenAI error response, pretty-printed as api.openai.com sends it."""
    body = {"error": {"message": message, "type": error_type, "param": None, "code": code}}
    all_headers = (
        ("content-type", "application/json; charset=utf-8"),
        ("x-request-id", request_id),
        *(headers or {}).items(),
    )
    return ScriptedResponse(status, tuple(all_headers), body=render_body(body, "indent4"))


_SPEC_BUILDERS = {
    "anthropic_turn": anthropic_turn,
    "openai_turn": openai_turn,
}
_OPTION_KEYS = ("split", "frame_delay", "drop_after", "stall_at", "stall")


def response_from_spec(spec: Mapping[str, Any]) -> ScriptedResponse:
    """One script entry as a response.

    `{"fixture": "anthropic/01_text_basic"}`, `{"response": {<fixture response section>}}`,
    or `{"anthropic_turn": {...}}` / `{"openai_turn": {...}}` with the keyword arguments of
    those functions (`tool_calls` as `[{"id", "name", "input"}]`). Every entry may also set
    `split`, `frame_delay`, `drop_after`, `stall_at` and `stall`.
    """
    options = {k: spec[k] for k in _OPTION_KEYS if k in spec}
    if "fixture" in spec:
        return fixture_response(str(spec["fixture"]), **options)
    if "response" in spec:
        return response_from_fixture_dict(spec["response"], **options)
    for key, builder in _SPEC_BUILDERS.items():
        if key in spec:
            kwargs = dict(spec[key])
            kwargs["tool_calls"] = [ToolCall(**c) for c in kwargs.get("tool_calls", [])]
            if isinstance(kwargs.get("thinking"), list):
                kwargs["thinking"] = tuple(kwargs["thinking"])
            return builder(**kwargs, **options)
    raise ValueError(f"unknown script entry: {sorted(spec)}")


def load_script(path: Path) -> list[ScriptedResponse]:
    """A script file: a JSON list of entries, or an object with a `responses` list."""
    data = json.loads(path.read_text(encoding="utf-8"))
    entries = data["responses"] if isinstance(data, dict) else data
    return [response_from_spec(e) for e in entries]


# --- folding provider events for assertions ------------------------------------------


@dataclass(slots=True)
class Collected:
    """A provider's normalised events folded into content blocks (index order)."""

    blocks: dict[int, dict[str, Any]] = field(default_factory=dict)
    stop_reason: str | None = None
    usage: Any = None
    stopped: list[int] = field(default_factory=list)

    @property
    def content(self) -> list[dict[str, Any]]:
        """The blocks in index order, tool inputs parsed from their joined fragments."""
        return [_finished_block(self.blocks[i]) for i in sorted(self.blocks)]

    def text(self) -> str:
        """All text blocks joined."""
        return "".join(b["text"] for b in self.content if b["type"] == "text")


def _finished_block(block: dict[str, Any]) -> dict[str, Any]:
    if block["type"] != "tool_use":
        return dict(block)
    joined = block["partial_json"]
    return {
        "type": "tool_use",
        "id": block["id"],
        "name": block["name"],
        "input": json.loads(joined or "{}"),
    }


def collect(events: Iterable[Any]) -> Collected:
    """Fold events (duck-typed on `.type`) and check the stream's ordering rules.

    A delta after its block's stop, a second stop, or anything but usage after MessageStop
    fails.
    """
    out = Collected()
    for event in events:
        kind = event.type
        # Usage may follow the stop (OpenAI's usage chunk comes after finish_reason).
        assert out.stop_reason is None or kind == "usage_update", f"after message_stop: {event}"
        if kind == "usage_update":
            out.usage = event.usage
        elif kind == "message_stop":
            out.stop_reason = event.stop_reason
        elif kind == "block_stop":
            # A block may stop without content (an empty text block).
            assert event.index not in out.stopped, event
            out.stopped.append(event.index)
        else:
            assert event.index not in out.stopped, f"delta after block_stop: {event}"
            _fold_delta(out.blocks, event)
    return out


def _fold_delta(blocks: dict[int, dict[str, Any]], event: Any) -> None:
    kind, index = event.type, event.index
    if kind == "tool_use_start":
        assert index not in blocks, f"second start at {index}"
        blocks[index] = {"type": "tool_use", "id": event.id, "name": event.name, "partial_json": ""}
    elif kind == "tool_input_delta":
        blocks[index]["partial_json"] += event.partial_json
    elif kind == "text_delta":
        blocks.setdefault(index, {"type": "text", "text": ""})["text"] += event.text
    elif kind == "thinking_delta":
        block = blocks.setdefault(index, {"type": "thinking", "thinking": "", "signature": None})
        block["thinking"] += event.text
    elif kind == "signature_delta":
        block = blocks.setdefault(index, {"type": "thinking", "thinking": "", "signature": None})
        block["signature"] = event.signature
    elif kind == "encrypted_reasoning":
        block = blocks.setdefault(index, {"type": "thinking", "thinking": "", "signature": None})
        block["encrypted_content"] = event.encrypted_content
    else:
        raise AssertionError(f"unknown event type {kind!r}")


# --- the server ---------------------------------------------------------------------


def exhausted_response() -> ScriptedResponse:
    """What a POST gets when the script has run out: a non-retryable 400 both SDKs parse."""
    message = "replay server: no scripted response left"
    body = {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": message, "code": None},
    }
    return ScriptedResponse(
        400, (("content-type", "application/json"),), body=compact_json(body).encode()
    )


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # One send per SSE frame: without TCP_NODELAY, Nagle holds each frame ~40 ms.
    disable_nagle_algorithm = True
    server: _HTTPServer
    # A kept-alive connection the SDK never reuses must not pin a thread forever.
    timeout = 60

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.server.replay.record(RecordedRequest("POST", self.path, headers, body, raw))
        self._send(self.server.replay.next_response(body))

    def do_GET(self) -> None:
        """A scripted response when one is queued (model lists), else 404."""
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.server.replay.record(RecordedRequest("GET", self.path, headers, None))
        queued = self.server.replay.pending
        not_found = ScriptedResponse(404, (("content-type", "application/json"),), body=b"{}")
        self._send(self.server.replay.next_response() if queued else not_found)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: requests are recorded, not printed."""

    def _send(self, response: ScriptedResponse) -> None:
        if response.no_response:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.send_response_only(response.status)
        for name, value in response.headers:
            self.send_header(name, value)
        if response.frames is None:
            self.send_header("content-length", str(len(response.body)))
            self.end_headers()
            self.wfile.write(response.body)
            self.wfile.flush()
            return
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        self._send_chunks(response)

    def _send_chunks(self, response: ScriptedResponse) -> None:
        for n, chunk in enumerate(response.stream_chunks()):
            if response.drop_after is not None and n >= response.drop_after:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if response.frame_delay:
                time.sleep(response.frame_delay)
            if n == response.stall_at:
                time.sleep(response.stall)
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    replay: ReplayServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients hanging up mid-response (aborts, timeouts) are expected, not errors."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _model_of(body: Any) -> str | None:
    model = body.get("model") if isinstance(body, dict) else None
    return model if isinstance(model, str) else None


class ReplayServer:
    """Serves scripted responses one per POST on 127.0.0.1 and records every request."""

    def __init__(
        self,
        responses: Iterable[ScriptedResponse] = (),
        *,
        log_path: Path | None = None,
        route: Callable[[Any], str | None] = _model_of,
    ) -> None:
        self._queue: deque[ScriptedResponse] = deque(responses)
        # Scripts of their own, by the key `route` gives a request's body (cases that run
        # side by side each get theirs); requests without a script use the shared one.
        self._route = route
        self._scripts: dict[str, deque[ScriptedResponse]] = {}
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._log_path = log_path
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def enqueue(self, *responses: ScriptedResponse) -> None:
        """Append responses to the script."""
        with self._lock:
            self._queue.extend(responses)

    def script(self, key: str, *responses: ScriptedResponse) -> None:
        """Give the requests `route` maps to `key` (by default: those for the model `key`)
        a script of their own, `responses`, replacing what was left of it."""
        with self._lock:
            self._scripts[key] = deque(responses)

    def next_response(self, body: Any = None) -> ScriptedResponse:
        """The next scripted response (from the request's own script, if it has one), or a
        400 once the script is exhausted."""
        key = self._route(body)
        with self._lock:
            queue = self._scripts.get(key, self._queue) if key else self._queue
            return queue.popleft() if queue else exhausted_response()

    def record(self, request: RecordedRequest) -> None:
        """Keep a request for assertions and append it to the log file, if any."""
        with self._lock:
            self._requests.append(request)
            if self._log_path is not None:
                with self._log_path.open("a", encoding="utf-8") as log:
                    log.write(json.dumps(request.to_json(), ensure_ascii=False) + "\n")

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in order."""
        with self._lock:
            return list(self._requests)

    @property
    def pending(self) -> int:
        """How many scripted responses have not been served yet."""
        with self._lock:
            return len(self._queue)

    def bind(self) -> ReplayServer:
        """Bind 127.0.0.1 on a free port without serving yet."""
        if self._httpd is None:
            self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
            self._httpd.replay = self
        return self

    def start(self) -> ReplayServer:
        """Bind and serve in a daemon thread."""
        httpd = self.bind()._httpd
        assert httpd is not None
        # A short poll interval keeps stop() (once per test) fast.
        self._thread = threading.Thread(
            target=httpd.serve_forever, args=(0.05,), name="replay", daemon=True
        )
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Bind if needed and serve in the calling thread (the subprocess mode)."""
        httpd = self.bind()._httpd
        assert httpd is not None
        httpd.serve_forever()

    def stop(self) -> None:
        """Stop serving and release the port."""
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """The Anthropic SDK's base_url (it appends `/v1/messages` itself)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """The OpenAI SDK's base_url (it appends `/chat/completions`)."""
        return f"{self.base_url}/v1"

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def read_log(path: Path) -> list[dict[str, Any]]:
    """The requests a subprocess server wrote with `--log`, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    """Run as a subprocess: print the port, then serve the script until terminated."""
    parser = argparse.ArgumentParser(description="Replay scripted model API responses.")
    parser.add_argument("--script", type=Path, help="JSON list of responses to serve in order")
    parser.add_argument("--log", type=Path, help="append every request as one JSON line")
    parser.add_argument("--dump", metavar="FIXTURE", help="print a fixture's raw response and exit")
    args = parser.parse_args(argv)
    if args.dump:
        sys.stdout.buffer.write(dump(fixture_response(args.dump)))
        return 0
    responses = load_script(args.script) if args.script else []
    server = ReplayServer(responses, log_path=args.log).bind()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(server.port, flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
