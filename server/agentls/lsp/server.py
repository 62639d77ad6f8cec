"""agent/* over LSP framing: the light half of the daemon.

It answers `initialize` with nothing but pygls loaded. The core (sessions, loop, tools,
pydantic models, and then the provider SDK) is imported in a background thread once the
client is initialized; a request that arrives first simply waits for it. Params stay plain
dicts, every failure becomes a JSON-RPC error without a traceback, and malformed input is
answered instead of dropped.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cattrs
from lsprotocol import types as lsp
from lsprotocol.types import ResponseErrorMessage
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
)
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
)
from pygls.protocol.language_server import lsp_method

from agentls import PROTOCOL_VERSION, __version__, methods
from agentls.errors import AgentError
from agentls.json_compact import dump_bytes
from agentls.lsp.converter import cattrs_detail, json_converter
from agentls.lsp.gc_settle import freeze_startup_objects
from agentls.lsp.hub import AgentCore, Hub
from agentls.lsp.paths import uri_path
from agentls.lsp.progress import ToolProgress
from agentls.names import DELIVERIES, PERMISSION_MODES, PROVIDERS
from agentls.workspace.view import EditorState, OpenDocument

log = logging.getLogger(__name__)
EVENT_METHOD = "agent/event"
# Registered from the light table of methods: no core import before `initialize`.
AGENT_REQUESTS = tuple(methods.REQUESTS)
# Requests that open a session: once answered, the session's commands are announced.
SESSION_OPENERS = ("agent/newSession", "agent/resumeSession", "agent/forkSession")


class _Ignored:
    """What structure_message returns for a message it already answered."""

    jsonrpc = "ignored"


# Events written together at most (a stream that never yields to the loop still flows).
OUTBOX_LIMIT = 64
# Every `agent/event` frame's body up to its params (the method's JSON written once), and
# the whole frame around the params: its Content-Length is the params' length plus this.
_EVENT_HEAD = b'{"jsonrpc":"2.0","method":%s,"params":' % dump_bytes(EVENT_METHOD)
_EVENT_FRAME = b"Content-Length: %d\r\n\r\n" + _EVENT_HEAD.replace(b"%", b"%%") + b"%s}"
_EVENT_FRAMING = len(_EVENT_HEAD) + 1


class AgentProtocol(LanguageServerProtocol):
    def __init__(self, server: Any, converter: cattrs.Converter) -> None:
        super().__init__(server, converter)
        # `agent/submitMessage` is answered at once, so its request id names the turn it
        # started: `$/cancelRequest` with that id aborts the turn (the newest 1,000 kept).
        self.turn_requests: dict[Any, tuple[str, str]] = {}
        # Events waiting for the end of this turn of the event loop (see notify_json).
        self._outbox: list[bytes] = []
        self._flush_scheduled = False
        # What to do once a request's answer is sent (e.g. a new session's first events).
        self._after_response: dict[Any, Callable[[], None]] = {}
        # Requests already answered before this server was loaded (the warm daemon's
        # `initialize`: agentls.lsp.early): handled here, not answered twice.
        self.preanswered: set[Any] = set()

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        if msg_id in self.preanswered:
            self.preanswered.discard(msg_id)
            if error is not None and self.writer is not None:
                # The client was told it succeeded: it must not go on as if it had.
                log.error("initialize, answered early, failed here: %s", error.message)
                self.writer.close()
            return
        super()._send_response(msg_id, result, error)

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        if not isinstance(msg_id, (str, int)) or isinstance(msg_id, bool):
            log.warning("$/cancelRequest ignored: its id %r is not a request id", msg_id)
            return
        turn = self.turn_requests.pop(msg_id, None)
        server = self._server
        handlers = server.hub.loaded if isinstance(server, AgentServer) else None
        if turn is not None and handlers is not None:
            handlers.abort_turn(*turn)
            return
        super()._handle_cancel_notification(msg_id)

    def after_response(self, msg_id: Any, action: Callable[[], None]) -> None:
        """Run `action` right after the answer to request `msg_id` is sent, if it succeeded."""
        self._after_response[msg_id] = action

    def _send_handler_result(self, future: Any, *, msg_id: Any) -> None:
        """A request's answer; an expected error (bad params, unknown session) is one log line."""
        follow_up = self._after_response.pop(msg_id, None)
        if future.cancelled() or future.exception() is None:
            super()._send_handler_result(future, msg_id=msg_id)
            if follow_up is not None and not future.cancelled():
                follow_up()
            return
        self._request_futures.pop(msg_id, None)
        error = future.exception()
        if not isinstance(error, JsonRpcException):
            # A handler's own failure: one line in the log, no traceback to the client.
            log.error("request %s failed: %s: %s", msg_id, type(error).__name__, error)
            error = JsonRpcInternalError(f"Internal error: {type(error).__name__}: {error}")
        log.info("request %s answered %s: %s", msg_id, error.code, error.message)
        self._send_response(msg_id, None, error.to_response_error())

    def notify_json(self, method: str, params: dict[str, Any]) -> None:
        """A notification whose params are plain JSON already (an `agent/event`).

        pygls's own path walks the params with the converter first, which cost more than
        everything else an event does; here they are dumped as they are. Notifications
        sent in one turn of the event loop go out in one write, and anything pygls sends
        flushes them first, so the order on the wire is the order they were sent in."""
        body = b'{"jsonrpc":"2.0","method":%s,"params":%s}' % (
            dump_bytes(method),
            dump_bytes(params),
        )
        self._queue_frame(body)

    def notify_event(self, params: str) -> None:
        """An `agent/event` whose params are JSON text already (agentls.wire.event_json)."""
        data = params.encode("ascii")
        outbox = self._outbox
        outbox.append(_EVENT_FRAME % (len(data) + _EVENT_FRAMING, data))
        if not self._flush_scheduled or len(outbox) >= OUTBOX_LIMIT:
            self._flush_soon()

    def _queue_frame(self, body: bytes) -> None:
        self._outbox.append(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self._flush_soon()

    def _flush_soon(self) -> None:
        if len(self._outbox) >= OUTBOX_LIMIT:
            # A producer that never yields still streams.
            self.flush_outbox()
        elif not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self.flush_outbox)

    def flush_outbox(self) -> None:
        """Hand the waiting events to the writer now (it never blocks: see outgoing.py)."""
        self._flush_scheduled = False
        if not self._outbox or self.writer is None:
            self._outbox.clear()
            return
        data = b"".join(self._outbox)
        self._outbox.clear()
        try:
            self.writer.write(data)
        except BrokenPipeError:
            log.warning("the client went away; %d bytes of events were not sent", len(data))

    def _send_data(self, data: Any) -> None:
        self.flush_outbox()
        super()._send_data(data)

    def remember_turn(self, msg_id: Any, session_id: str, turn_id: str) -> None:
        """Note which turn a submitMessage request started, for a later $/cancelRequest."""
        self.turn_requests[msg_id] = (session_id, turn_id)
        if len(self.turn_requests) > 1000:
            del self.turn_requests[next(iter(self.turn_requests))]

    def structure_message(self, data: dict[str, Any]) -> Any:
        """The message as pygls's handlers take it; params that do not fit their method's
        type are one log line, and a request with them is answered -32602."""
        try:
            return self._converter.structure(data, self._message_type(data))
        except Exception as exc:
            detail = cattrs_detail(exc)
            method = data.get("method")
            if "id" in data and method is not None:
                error = JsonRpcInvalidParams(
                    f"Invalid params for {method}: {detail}", data={"detail": detail}
                )
                log.info("request %s answered -32602: %s", data["id"], error.message)
                self._send_response(data["id"], None, error.to_response_error())
            else:
                log.warning("%s dropped: %s", method or "a response", detail)
            return _Ignored()

    def _message_type(self, data: dict[str, Any]) -> type:
        """pygls's choice of class for a message (its method's, else a generic envelope)."""
        if "method" not in data:
            if "error" in data:
                return ResponseErrorMessage
            return self._result_types.pop(data["id"], None) or JsonRPCResponseMessage
        generic = JsonRPCRequestMessage if "id" in data else JsonRPCNotification
        return self.get_message_type(data["method"]) or generic

    def handle_message(self, message: Any) -> None:
        """The guard around every handler, pygls's built-in ones included: whatever one
        raises is a line in the log (and -32603 for a request), never the end of the
        connection. After `shutdown`, a request is answered -32600, as LSP asks."""
        if isinstance(message, _Ignored):
            return
        method = getattr(message, "method", None)
        msg_id: Any = getattr(message, "id", None)
        is_request = method is not None and hasattr(message, "id")
        if self._shutdown and is_request and method != lsp.EXIT:
            error = JsonRpcInvalidRequest(f"{method}: the server is shutting down")
            self._send_response(msg_id, None, error.to_response_error())
            return
        try:
            super().handle_message(message)
        except Exception as exc:
            log.error("%s failed: %s: %s", method or "a response", type(exc).__name__, exc)
            if is_request and msg_id not in self._request_futures:
                failure = JsonRpcInternalError(f"{method} failed: {type(exc).__name__}: {exc}")
                self._send_response(msg_id, None, failure.to_response_error())

    @lsp_method(lsp.EXIT)
    def lsp_exit(self, *args: Any) -> Any:
        server = self._server
        if not isinstance(server, AgentServer):
            return (yield from super().lsp_exit(*args))
        # The serving loop ends the connection's turns and then the connection (over TCP)
        # or the process (over stdio, with this exit code): never an exit mid-write.
        server.exit_code = 0 if self._shutdown else 1
        server.exited.set()
        if server._stop_event is not None:
            server._stop_event.set()
        if server.shared and self.writer is not None:
            self.writer.close()
        return None

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(self, params: lsp.InitializeParams) -> Any:
        result = yield from super().lsp_initialize(params)
        result.capabilities.experimental = {
            "agentls": {
                "protocolVersion": PROTOCOL_VERSION,
                "version": __version__,
                "events": EVENT_METHOD,
                "deliveries": list(DELIVERIES),
                "permissionModes": list(PERMISSION_MODES),
                "providers": list(PROVIDERS),
            }
        }
        return result


class AgentServer(LanguageServer):
    """One editor connection: its buffers, editor state and capabilities; the core is shared
    with every other connection through the hub."""

    def __init__(self, hub: Hub | None = None, shared: bool = False) -> None:
        super().__init__(
            "agentls",
            __version__,
            protocol_cls=AgentProtocol,
            converter_factory=json_converter,
            text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
        )
        # Buffers and editor state arrive from the first moment; sessions share them.
        self.documents: dict[Path, OpenDocument] = {}
        self.editor = EditorState()
        self.client_options: dict[str, Any] = {}
        # Set by a successful `initialize`: until then the gate (agentls.lsp.gate) answers.
        self.initialized = False
        self.workspace_roots: list[Path] = []
        # Where the editor started agentls, from a relay's `agent/clientContext`: the
        # workspace of an `initialize` that names none (the daemon's own cwd is "/").
        self.client_cwd: Path | None = None
        self.hub = hub or Hub()
        # True when other connections share the hub (TCP): `exit` then ends only this one.
        self.shared = shared
        self.exited = asyncio.Event()
        self.exit_code = 0
        self.reading_blocked = False
        self.tool_progress = ToolProgress(self)
        protocol = self.protocol
        assert isinstance(protocol, AgentProtocol)
        # Every event goes out through it: looked up once.
        self._notify_event = protocol.notify_event

    def send_event(self, payload: dict[str, Any]) -> None:
        protocol = self.protocol
        assert isinstance(protocol, AgentProtocol)
        protocol.notify_json(EVENT_METHOD, payload)
        if payload["type"].startswith("tool_call") and self.tool_progress.supported():
            self.tool_progress.on_event(payload)

    def send_event_json(self, params: str, envelope: Any) -> None:
        """Send an event already written as JSON text; `envelope` is its SessionEvent."""
        self._notify_event(params)
        if envelope.event.type.startswith("tool_call") and self.tool_progress.supported():
            # Only for tool events to a client that shows progress: the wire module (and
            # the event classes it loads) stays out of what loads before `initialize`.
            from agentls.wire import event_payload

            self.tool_progress.on_event(event_payload(envelope))

    async def handlers(self) -> AgentCore:
        """The core, imported off the event loop the first time it is needed."""
        return await self.hub.handlers()

    def report_server_error(self, error: Exception, source: Any) -> None:
        """One log line instead of an editor popup (the client already has its answer)."""
        log.warning("%s: %s", getattr(source, "__name__", source), error)


def build_server(hub: Hub | None = None, shared: bool = False) -> AgentServer:
    """A connection's server with every handler registered (a new hub unless given one)."""
    server = AgentServer(hub, shared)
    for method, handler in FEATURES.items():
        server.feature(method)(handler)
    return server


# The handlers are the process's, not a connection's: each takes the connection's server as
# its first parameter, named `ls` as pygls's convention has it. pygls inspects a handler
# whenever it is registered, which a socket daemon does for every connection; for any
# other first parameter it evaluates the handler's type hints, compiling each annotation
# again (1.5 of the 2.2 ms it took to build a connection's server).


def _request_handler(method: str) -> Callable[..., Any]:
    async def run(ls: AgentServer, params: Any) -> Any:
        msg_id = ls.protocol.msg_id
        handlers = await ls.handlers()
        result = await handlers.dispatch(method, params, ls)
        if method in ("agent/submitMessage", "agent/inlineEdit") and msg_id is not None:
            protocol = ls.protocol
            assert isinstance(protocol, AgentProtocol)
            protocol.remember_turn(msg_id, params["sessionId"], result["turnId"])
        if method in SESSION_OPENERS and msg_id is not None:
            protocol = ls.protocol
            assert isinstance(protocol, AgentProtocol)
            follow_up = handlers.after_opening(method, result, ls)
            protocol.after_response(msg_id, follow_up)
        return result

    return run


def on_initialize(ls: AgentServer, params: lsp.InitializeParams) -> None:
    options = params.initialization_options
    ls.client_options.update(options if isinstance(options, dict) else {})
    folders = [f.uri for f in params.workspace_folders or []] or (
        [params.root_uri] if params.root_uri else []
    )
    ls.workspace_roots[:] = [uri_path(uri) for uri in folders if uri.startswith("file:")]
    if not ls.workspace_roots and ls.client_cwd is not None:
        ls.workspace_roots.append(ls.client_cwd)
    ls.initialized = True


def client_context(ls: AgentServer, params: Any) -> None:
    cwd = params.get("cwd") if isinstance(params, dict) else None
    if isinstance(cwd, str) and os.path.isabs(cwd) and os.path.isdir(cwd):
        ls.client_cwd = Path(cwd)
        log.info("a relay (pid %s) started in %s", params.get("pid"), cwd)
    else:
        log.warning("agent/clientContext ignored: cwd %r is not an existing directory", cwd)


async def on_initialized(ls: AgentServer, _params: lsp.InitializedParams) -> None:
    await ls.handlers()
    cwd = ls.workspace_roots[0] if ls.workspace_roots else Path.cwd()
    await asyncio.to_thread(preload_sdk, cwd, ls.client_options)
    freeze_startup_objects()


async def on_shutdown(ls: AgentServer, _params: Any) -> None:
    await ls.hub.detach(ls)


def preload_sdk(cwd: Path, client_options: dict[str, Any]) -> None:
    """Import the configured provider's SDK now, so the first session does not wait."""
    from agentls.config import load_settings
    from agentls.providers.factory import import_sdk

    problems: list[str] = []
    settings = load_settings(cwd, os.environ, client_options, problems)
    for problem in problems:
        log.warning("settings: %s", problem)
    import_sdk(settings)


def _sync(ls: AgentServer, uri: str) -> None:
    doc = ls.workspace.text_documents.get(uri)
    if doc is not None and uri.startswith("file:"):
        path = uri_path(uri)
        ls.documents[path] = OpenDocument(path, doc.source, doc.version or 0, doc.language_id or "")


def did_open(ls: AgentServer, params: lsp.DidOpenTextDocumentParams) -> None:
    _sync(ls, params.text_document.uri)


def did_change(ls: AgentServer, params: lsp.DidChangeTextDocumentParams) -> None:
    _sync(ls, params.text_document.uri)


def did_close(ls: AgentServer, params: lsp.DidCloseTextDocumentParams) -> None:
    if params.text_document.uri.startswith("file:"):
        ls.documents.pop(uri_path(params.text_document.uri), None)


async def editor_state(ls: AgentServer, params: Any) -> None:
    try:
        handlers = await ls.handlers()
    except AgentError as exc:
        log.warning("agent/didChangeEditorState ignored: %s", exc)
        return
    handlers.editor_state(params, ls)


FEATURES: dict[str, Callable[..., Any]] = {
    lsp.INITIALIZE: on_initialize,
    "agent/clientContext": client_context,
    lsp.INITIALIZED: on_initialized,
    lsp.SHUTDOWN: on_shutdown,
    lsp.TEXT_DOCUMENT_DID_OPEN: did_open,
    lsp.TEXT_DOCUMENT_DID_CHANGE: did_change,
    lsp.TEXT_DOCUMENT_DID_CLOSE: did_close,
    "agent/didChangeEditorState": editor_state,
    **{method: _request_handler(method) for method in AGENT_REQUESTS},
}
