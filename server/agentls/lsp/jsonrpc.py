"""Bytes in, messages out: LSP framing and JSON-RPC envelopes, as the specifications say.

pygls's own read loop trusts its input: a wrong `Content-Length` desynchronises it for
good, an absurd one makes it allocate and die, a body is parsed with a hook that turns any
dict shaped like a message (also deep inside `params`) into one, and several kinds of bad
input get no answer. This loop frames and checks every message before pygls sees it:

- framing: header names are read case-insensitively; a header block without a valid
  `Content-Length`, or one over `MAX_BODY_BYTES`, is skipped to the next header block
  without reading its body into memory; a body whose length was wrong is cut where the
  next header starts, so the stream resynchronises;
- cross-protocol input is refused, not resynchronised: a header block that is an HTTP
  request (a request line, or a `Host`, `Origin`, `User-Agent`, `Upgrade` or `Sec-Fetch-*`
  header, which a browser's `fetch` always sends) ends the stream at once, so frames
  smuggled inside a request's body are never read;
- a body that is not UTF-8 or not JSON is answered `-32700` with `id: null`; JSON that is
  not a valid request object (a batch, `jsonrpc` other than "2.0", an `id` that is not a
  string, integer or null, a `method` that is not a string, `params` that are not an
  object or array, nesting deeper than `MAX_DEPTH`) is answered `-32600`;
- a request for a method the daemon does not serve is answered `-32601`; a notification
  is never answered, and neither is anything shaped like a response (no `method`, but an
  `id`, `result` or `error`): a valid one goes to the request it answers, the rest is
  dropped; only the top-level object is ever read as a message;
- nothing a message makes fail ends the loop: it is logged, a request answered `-32603`.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable
from threading import Event
from typing import Any, Final

from pygls.protocol import JsonRPCProtocol

from agentls.json_text import is_unicode, may_hold_surrogates

log = logging.getLogger(__name__)

MAX_BODY_BYTES: Final = 64 * 1024 * 1024
MAX_HEADER_BYTES: Final = 8 * 1024
MAX_DEPTH: Final = 64
_HEADER_START = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)
_LENGTH = re.compile(rb"[ \t]*(\d{1,12})[ \t]*")
# An HTTP request line (method token, request target, version: RFC 9112 3), on any line.
_REQUEST_LINE = re.compile(
    rb"^[!#$%&'*+.^_`|~0-9A-Za-z-]+ [^ \r\n]+ HTTP/\d+(?:\.\d+)?[ \t]*\r?$", re.MULTILINE
)
# Headers of HTTP clients, never of an LSP client: a browser sends Host, and mostly the rest.
_HTTP_HEADER = re.compile(
    rb"^(?:host|origin|user-agent|upgrade|sec-fetch-[!-9;-~]*)[ \t]*:", re.IGNORECASE | re.MULTILINE
)
# Every byte but quotes and brackets.
_NOT_SYNTAX = bytes(byte for byte in range(256) if byte not in b'"[]{}')
ReadSome = Callable[[], Awaitable[bytes]]
# Looks at each body before dispatch: the body to dispatch, or None when it was handled.
Screen = Callable[[bytes], bytes | None]


class Refused(Exception):
    """The peer is refused: the connection ends and nothing more of it is read."""


class FrameReader:
    """Cuts a byte stream into message bodies, resynchronising after framing errors."""

    def __init__(self, read_some: ReadSome, screen: Screen | None = None) -> None:
        self._read_some = read_some
        self._screen = screen
        self._buffer = bytearray()
        self._eof = False
        self.refused = False

    async def _fill(self) -> bool:
        if self._eof:
            return False
        chunk = await self._read_some()
        if not chunk:
            self._eof = True
            return False
        self._buffer += chunk
        return True

    async def next_body(self) -> bytes | None:
        """The next message body (as screened); None at the end of the stream or once refused."""
        while not self.refused:
            try:
                body = await self._framed_body()
                if body is None or self._screen is None:
                    return body
                screened = self._screen(body)
            except Refused as exc:
                log.warning("connection refused: %s", exc)
                self._refuse()
                return None
            if screened is not None:
                return screened
        return None

    def _refuse(self) -> None:
        self.refused = self._eof = True
        self._buffer.clear()

    async def _framed_body(self) -> bytes | None:
        while True:
            length = await self._header_block()
            if length is None:
                return None
            if length < 0:
                continue
            while len(self._buffer) < length:
                if not await self._fill():
                    break
            body = bytes(self._buffer[:length])
            del self._buffer[:length]
            return body

    async def _header_block(self) -> int | None:
        """The Content-Length of the next header block; -1 for a block that is skipped."""
        while True:
            end = self._buffer.find(b"\r\n\r\n")
            if end >= 0:
                block = bytes(self._buffer[:end])
                refuse_http(block)
                del self._buffer[: end + 4]
                return _content_length(block)
            if len(self._buffer) > MAX_HEADER_BYTES:
                self._skip_to_next_header(len(self._buffer) - MAX_HEADER_BYTES)
            if not await self._fill():
                if self._buffer.strip():
                    log.warning("the stream ended inside a header block")
                return None

    def _skip_to_next_header(self, at_least: int) -> None:
        found = _HEADER_START.search(self._buffer, max(1, at_least))
        cut = found.start() if found else at_least
        refuse_http(bytes(self._buffer[:cut]))
        log.warning("skipped %d bytes that were not a message header", cut)
        del self._buffer[:cut]

    def resynchronise(self, body: bytes) -> None:
        """A body that did not parse: if a header starts inside it, read again from there."""
        found = _HEADER_START.search(body, 1)
        if found is not None and not self.refused:
            self._buffer[:0] = body[found.start() :]


def refuse_http(head: bytes) -> None:
    """Refused when `head` (a header block, or bytes skipped as no header) is HTTP's."""
    request = _REQUEST_LINE.search(head)
    if request is not None:
        raise Refused(f"an HTTP request ({request.group().strip()[:60]!r}), not LSP framing")
    header = _HTTP_HEADER.search(head)
    if header is not None:
        raise Refused(f"an HTTP header ({header.group()[:40]!r}), not LSP framing")


def _content_length(block: bytes) -> int:
    # A garbled start (the tail of a body that was too long) ends at the last header start.
    starts = list(_HEADER_START.finditer(block))
    if not starts:
        log.warning("a header block without Content-Length was skipped")
        return -1
    start = starts[-1]
    value = block[start.end() :].split(b"\r\n", 1)[0]
    match = _LENGTH.fullmatch(value)
    if match is None:
        log.warning("a malformed Content-Length header was skipped: %r", value[:40])
        return -1
    length = int(match.group(1))
    if length > MAX_BODY_BYTES:
        log.warning("a message of %d bytes was refused (limit %d)", length, MAX_BODY_BYTES)
        return -1
    return length


# --- envelopes -------------------------------------------------------------------------


class InvalidMessage(Exception):
    """A body that is no valid JSON-RPC message: its error code and the id to answer."""

    def __init__(
        self, code: int, message: str, msg_id: Any = None, answer: bool = True, data: Any = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.msg_id = msg_id
        # A notification is never answered, even a broken one.
        self.answer = answer
        self.data = data


def parse_message(body: bytes) -> dict[str, Any]:
    """The message in `body`, checked; InvalidMessage with the answer it deserves."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidMessage(-32700, "Parse error: the body is not valid UTF-8.") from None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise InvalidMessage(-32700, f"Parse error: the body is not valid JSON ({exc}).") from None
    message = _checked(data)
    if _too_deep(body):
        # Refused, but like any other message: a request answered by its id, the rest not.
        request = "method" in message and "id" in message
        refusal = f"Invalid request: nested deeper than {MAX_DEPTH} levels."
        raise InvalidMessage(-32600, refusal, message.get("id"), answer=request)
    return message


def _too_deep(body: bytes) -> bool:
    """Whether valid JSON `body` nests deeper than MAX_DEPTH, in C-speed passes but the last:
    walking every byte in Python cost 0.4 ms for Neovim's `initialize` (1 ms and more for
    VS Code's). Escaped backslashes go first, then escaped quotes, so the quotes left are
    the strings' own; outside the strings are the even pieces between them."""
    if body.count(b"[") + body.count(b"{") <= MAX_DEPTH:
        return False
    plain = body.replace(b"\\\\", b"").replace(b'\\"', b"")
    outside = b"".join(plain.translate(None, _NOT_SYNTAX).split(b'"')[::2])
    depth = 0
    for byte in outside:
        depth += 1 if byte in (0x5B, 0x7B) else -1
        if depth > MAX_DEPTH:
            return True
    return False


def _checked(data: Any) -> dict[str, Any]:
    if isinstance(data, list):
        raise InvalidMessage(-32600, "Invalid request: batches are not supported over LSP.")
    if not isinstance(data, dict):
        raise InvalidMessage(-32600, "Invalid request: a message is a JSON object.")
    if "method" not in data and RESPONSE_KEYS & data.keys():
        return _checked_response(data)
    msg_id = data.get("id")
    good_id = _valid_id(msg_id) or msg_id is None
    answer_to = msg_id if good_id else None
    notification = "method" in data and "id" not in data
    if notification and not _valid_notification(data):
        raise InvalidMessage(-32600, "Invalid notification: ignored.", answer=False)
    if data.get("jsonrpc") != "2.0":
        raise InvalidMessage(-32600, 'Invalid request: "jsonrpc" must be "2.0".', answer_to)
    if not good_id:
        raise InvalidMessage(-32600, 'Invalid request: "id" must be a string or an integer.')
    if "method" not in data:
        raise InvalidMessage(-32600, "Invalid request: neither a request nor a response.")
    if not isinstance(data["method"], str):
        raise InvalidMessage(-32600, 'Invalid request: "method" must be a string.', msg_id)
    params = data.get("params")
    if params is not None and not isinstance(params, (dict, list)):
        raise InvalidMessage(
            -32600, 'Invalid request: "params" must be an object or an array.', msg_id
        )
    return data


# A message without a method that has one of these is a response, answered or not.
RESPONSE_KEYS: Final = frozenset({"id", "result", "error"})


def _checked_response(data: dict[str, Any]) -> dict[str, Any]:
    """A response to one of the daemon's own requests; anything else shaped like one is
    dropped unanswered (answering a response could start an endless exchange)."""
    valid = (
        data.get("jsonrpc") == "2.0"
        and _valid_id(data.get("id"))
        and ("result" in data) != ("error" in data)
        and ("result" in data or _valid_error(data["error"]))
    )
    if not valid:
        raise InvalidMessage(-32600, "Invalid response: dropped.", answer=False)
    return data


def _valid_notification(data: dict[str, Any]) -> bool:
    params = data.get("params")
    return (
        data.get("jsonrpc") == "2.0"
        and isinstance(data["method"], str)
        and (params is None or isinstance(params, (dict, list)))
    )


def _valid_error(error: Any) -> bool:
    code = error.get("code") if isinstance(error, dict) else None
    return _valid_id(code) and isinstance(code, int) and isinstance(error.get("message"), str)


def _valid_id(value: Any) -> bool:
    """A request id the daemon answers to: a string or an integer (a bool is neither)."""
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def error_response(code: int, message: str, msg_id: Any, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": msg_id, "error": error}


def served_methods(protocol: JsonRPCProtocol) -> frozenset[str]:
    """Every method this protocol has a handler for (pygls's own and the registered ones).

    `workspace/executeCommand` is pygls's, but the daemon registers no command: -32601.
    """
    features = protocol.fm
    builtin = frozenset(features.builtin_features) - {"workspace/executeCommand"}
    return builtin | frozenset(features.features) | {"$/cancelRequest"}


async def serve_frames(frames: FrameReader, protocol: JsonRPCProtocol, stop: Event) -> None:
    """Read, check and dispatch messages until the stream ends or `stop` is set.

    No message can end this loop: whatever fails while one is handled is logged as one
    line, a request among them answered, and the next message read."""
    served = served_methods(protocol)
    while not stop.is_set():
        body = await frames.next_body()
        if body is None:
            return
        try:
            dispatch(body, protocol, served)
        except InvalidMessage as exc:
            log.warning("invalid message (%d): %s", exc.code, exc)
            if exc.code == -32700:
                frames.resynchronise(body)
            if exc.answer:
                protocol._send_data(error_response(exc.code, str(exc), exc.msg_id, exc.data))
        except Exception as exc:
            log.error("a message could not be handled: %s: %s", type(exc).__name__, exc)


def dispatch(body: bytes, protocol: JsonRPCProtocol, served: frozenset[str]) -> None:
    """Hand one checked message to pygls; InvalidMessage when it deserves an error answer."""
    data = parse_message(body)
    method = data.get("method")
    is_request = method is not None and "id" in data
    if method is not None and method not in served:
        if is_request:
            raise InvalidMessage(-32601, f"Method not found: {method}", data["id"])
        log.info("notification %s ignored: not served", method)
        return
    if may_hold_surrogates(body) and not is_unicode(data.get("params")):
        detail = "a string holds a lone surrogate (\\ud800-\\udfff), not Unicode"
        message = f"Invalid params for {method}: {detail}"
        raise InvalidMessage(-32602, message, data.get("id"), is_request, {"detail": detail})
    try:
        message = protocol.structure_message(data)
        protocol.handle_message(message)
    except Exception as exc:
        # Bad params were answered -32602 by the protocol, handlers' failures by their
        # guard; what still escapes is the daemon's fault, and answered as one.
        log.error("%s failed: %s: %s", method or "a response", type(exc).__name__, exc)
        if is_request:
            failure = f"{method} failed: {type(exc).__name__}: {exc}"
            raise InvalidMessage(-32603, failure, data["id"]) from None
