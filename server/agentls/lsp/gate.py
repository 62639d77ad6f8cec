"""Nothing happens on a connection before a valid `initialize`.

LSP says a server answers every request before `initialize` with -32002 and drops the
notifications (`exit` excepted). This gate does that for every transport, before the
message is dispatched, so an `agent/newSession` that arrives first starts nothing. Over
TCP, `initialize` must also carry the daemon's token (`initializationOptions.authToken`):
without it, or with another, the request is answered with an error and the connection is
closed. The token is taken out of the message here, so it never reaches pygls, the logs,
the settings or a transcript.
"""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import Callable
from typing import Any, Final

from agentls.lsp.jsonrpc import (
    FrameReader,
    InvalidMessage,
    ReadSome,
    Refused,
    error_response,
    parse_message,
)
from agentls.lsp.server import AgentServer

log = logging.getLogger(__name__)

NOT_INITIALIZED: Final = -32002
UNAUTHORIZED: Final = 1007
TOKEN_KEY: Final = "authToken"
# Notifications let through before `initialize`: `exit`, and the relay's account of where
# the editor started it (agentls.relay), which `initialize` then reads.
BEFORE_INITIALIZE: Final = ("exit", "agent/clientContext")


class InitializeGate:
    """Screens a connection's bodies: only `initialize` and BEFORE_INITIALIZE pass before it
    is initialized."""

    def __init__(
        self,
        send: Callable[[dict[str, Any]], None],
        initialized: Callable[[], bool],
        token: str | None,
    ) -> None:
        self._send = send
        self._initialized = initialized
        # The token the connection must present (TCP); None: none asked (stdio, Unix socket).
        self._token = token

    def screen(self, body: bytes) -> bytes | None:
        """The body to dispatch, or None when it was answered or dropped here."""
        if self._initialized() and TOKEN_KEY.encode() not in body:
            return body
        try:
            data = parse_message(body)
        except InvalidMessage:
            return body  # dispatch answers it as the message it is not
        method = data.get("method")
        if method == "initialize":
            return self._initialize(body, data)
        if self._initialized() or (method in BEFORE_INITIALIZE and "id" not in data):
            return body
        if method is not None and "id" in data:
            log.info("request %r before initialize answered %d", method, NOT_INITIALIZED)
            message = "Server not initialized: send initialize first."
            self._send(error_response(NOT_INITIALIZED, message, data["id"]))
        else:
            log.info("%r before initialize dropped", method or "a response")
        return None

    def _initialize(self, body: bytes, data: dict[str, Any]) -> bytes:
        params = data.get("params")
        options = params.get("initializationOptions") if isinstance(params, dict) else None
        given = options.pop(TOKEN_KEY, None) if isinstance(options, dict) else None
        if (
            self._token is not None
            and not self._initialized()
            and not tokens_match(given, self._token)
        ):
            reason = "without a token" if given is None else "with a wrong token"
            if "id" in data:
                text = f"Unauthorized: initialize {reason} (initializationOptions.authToken)."
                self._send(error_response(UNAUTHORIZED, text, data["id"]))
            raise Refused(f"initialize {reason}")
        if given is None:
            return body
        # ASCII: a lone surrogate elsewhere in the message has no UTF-8 and would end the loop.
        return json.dumps(data).encode("ascii")


def tokens_match(given: object, expected: str) -> bool:
    """Whether a client's token is the daemon's, compared in constant time."""
    if not isinstance(given, str):
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def gated_frames(server: AgentServer, read_some: ReadSome, token: str | None) -> FrameReader:
    """The connection's frame reader behind its initialize gate."""
    protocol = server.protocol
    gate = InitializeGate(protocol._send_data, lambda: server.initialized, token)
    return FrameReader(read_some, gate.screen)
