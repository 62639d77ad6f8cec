"""agent/* over LSP framing: thin handlers that validate params, call the session layer,
and send loop events as `agent/event` notifications.

pygls is kept at arm's length: params stay plain dicts (validated by pydantic models in
agentls.api), every failure becomes a JSON-RPC error without a traceback, and malformed
input is answered instead of dropped.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import cattrs
from lsprotocol import types as lsp
from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
    default_converter,
)
from pygls.protocol.language_server import lsp_method
from pygls.uris import to_fs_path

from agentls import __version__, api
from agentls.config import load_settings
from agentls.context.prompt import Attachment
from agentls.errors import AgentError, InvalidParams
from agentls.lsp.edit_sink import LspEditSink
from agentls.providers.factory import preload_sdk
from agentls.session.manager import SessionManager
from agentls.wire import to_wire
from agentls.workspace.view import OpenDocument, Position, Range

log = logging.getLogger(__name__)
P = TypeVar("P", bound=BaseModel)
EVENT_METHOD = "agent/event"


def json_converter() -> cattrs.Converter:
    """lsprotocol's converter, but custom methods keep their params as plain JSON."""
    conv: cattrs.Converter = default_converter()  # type: ignore[no-untyped-call]

    def request(obj: dict[str, Any], _cls: type) -> JsonRPCRequestMessage:
        return JsonRPCRequestMessage(obj["id"], obj["method"], obj["jsonrpc"], obj.get("params"))

    def notification(obj: dict[str, Any], _cls: type) -> JsonRPCNotification:
        return JsonRPCNotification(obj["method"], obj["jsonrpc"], obj.get("params"))

    def response(obj: dict[str, Any], _cls: type) -> JsonRPCResponseMessage:
        return JsonRPCResponseMessage(obj["id"], obj["jsonrpc"], obj.get("result"))

    conv.register_structure_hook(JsonRPCRequestMessage, request)
    conv.register_structure_hook(JsonRPCNotification, notification)
    conv.register_structure_hook(JsonRPCResponseMessage, response)
    return conv


class _Ignored:
    """What structure_message returns for a message it already answered."""

    jsonrpc = "ignored"


class AgentProtocol(LanguageServerProtocol):
    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except Exception as exc:
            if "id" in data and "method" in data:
                detail = _cattrs_detail(exc)
                error = JsonRpcInvalidParams(
                    f"Invalid params for {data['method']}: {detail}", data={"detail": detail}
                )
                self._send_response(data["id"], None, error.to_response_error())
                return _Ignored()
            raise

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(self, params: lsp.InitializeParams) -> Any:
        result = yield from super().lsp_initialize(params)
        result.capabilities.experimental = {
            "agentls": {
                "protocolVersion": api.PROTOCOL_VERSION,
                "version": __version__,
                "events": EVENT_METHOD,
                "deliveries": ["queue", "steer", "interrupt"],
                "permissionModes": ["default", "acceptEdits", "plan", "bypassPermissions"],
                "providers": ["anthropic", "openai", "scripted"],
            }
        }
        return result


def _cattrs_detail(exc: Exception) -> str:
    cause = exc.__cause__
    if isinstance(cause, cattrs.ClassValidationError):
        return "; ".join(cattrs.transform_error(cause))
    return str(cause or exc) or type(exc).__name__


class AgentServer(LanguageServer):
    """The daemon: one pygls server, one SessionManager."""

    def __init__(self) -> None:
        super().__init__(
            "agentls",
            __version__,
            protocol_cls=AgentProtocol,
            converter_factory=json_converter,
            text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
        )
        self.sessions = SessionManager(self._send_event, lambda: LspEditSink(self))

    def _send_event(self, payload: dict[str, Any]) -> None:
        self.protocol.notify(EVENT_METHOD, payload)

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Log instead of popping up editor messages; answer unparsable input with -32700."""
        if isinstance(error, json.JSONDecodeError):
            self._send_error(
                -32700, f"Parse error: the message body is not valid JSON ({error.msg})."
            )
        elif (
            isinstance(error, (AttributeError, TypeError, KeyError)) and source is JsonRpcException
        ):
            self._send_error(-32600, "Invalid request: expected a JSON-RPC 2.0 request object.")
        log.error("server error (%s): %s", getattr(source, "__name__", source), error)

    def _send_error(self, code: int, message: str) -> None:
        self.protocol._send_data(
            {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
        )


def request(
    server: AgentServer, method: str
) -> Callable[[Callable[[Any], Awaitable[BaseModel]]], None]:
    """Register a handler for `method` with validated params and a sanitised error path."""
    params_model, _result_model = api.REQUESTS[method]

    def register(handler: Callable[[Any], Awaitable[BaseModel]]) -> None:
        async def run(params: Any) -> Any:
            parsed = _validate(params_model, params, method)
            try:
                result = await handler(parsed)
            except AgentError as exc:
                raise JsonRpcException(exc.message, exc.code, exc.data) from None
            except JsonRpcException:
                raise
            except Exception as exc:
                log.exception("%s failed", method)
                message = f"{method} failed: {type(exc).__name__}: {exc}"
                raise JsonRpcException(message, -32603) from None
            return result.model_dump(mode="json", by_alias=True, exclude_none=True)

        server.feature(method)(run)

    return register


def _validate(model: type[P], params: Any, method: str) -> P:
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise JsonRpcInvalidParams(f"Invalid params for {method}: params must be an object")
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        errors = [
            {"field": ".".join(str(p) for p in err["loc"]), "message": err["msg"]}
            for err in exc.errors(include_url=False)
        ]
        summary = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
        raise JsonRpcInvalidParams(f"Invalid params for {method}: {summary}", data=errors) from None


def _path(uri: str) -> Path:
    if not uri.startswith("file:"):
        raise InvalidParams(f"{uri!r} is not a file:// URI")
    fs_path = to_fs_path(uri)
    if fs_path is None:
        raise InvalidParams(f"{uri!r} is not a file:// URI")
    return Path(os.path.realpath(fs_path))


def _iso(timestamp: float) -> str:
    moment = dt.datetime.fromtimestamp(timestamp, dt.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _range(r: api.WireRange) -> Range:
    return Range(Position(r.start.line, r.start.character), Position(r.end.line, r.end.character))


def build_server() -> AgentServer:
    """The daemon with every handler registered."""
    server = AgentServer()
    manager = server.sessions

    @server.feature(lsp.INITIALIZE)
    def on_initialize(params: lsp.InitializeParams) -> None:
        options = params.initialization_options
        manager.client_options = dict(options) if isinstance(options, dict) else {}
        folders = [f.uri for f in params.workspace_folders or []] or (
            [params.root_uri] if params.root_uri else []
        )
        manager.workspace_roots = [_path(uri) for uri in folders if uri.startswith("file:")]

    @server.feature(lsp.INITIALIZED)
    def on_initialized(_params: lsp.InitializedParams) -> None:
        cwd = manager.workspace_roots[0] if manager.workspace_roots else Path.cwd()
        problems: list[str] = []
        settings = load_settings(cwd, os.environ, manager.client_options, problems)
        for problem in problems:
            log.warning("settings: %s", problem)
        preload_sdk(settings)

    @server.feature(lsp.SHUTDOWN)
    async def on_shutdown(_params: Any) -> None:
        await manager.close_all()

    _register_documents(server)
    _register_agent_requests(server)
    return server


def _register_documents(server: AgentServer) -> None:
    manager = server.sessions

    def sync(uri: str) -> None:
        if not uri.startswith("file:"):
            return
        doc = server.workspace.text_documents.get(uri)
        if doc is not None:
            path = _path(uri)
            manager.documents[path] = OpenDocument(
                path, doc.source, doc.version or 0, doc.language_id or ""
            )

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: lsp.DidOpenTextDocumentParams) -> None:
        sync(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: lsp.DidChangeTextDocumentParams) -> None:
        sync(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: lsp.DidCloseTextDocumentParams) -> None:
        if params.text_document.uri.startswith("file:"):
            manager.documents.pop(_path(params.text_document.uri), None)

    @server.feature("agent/didChangeEditorState")
    def editor_state(params: Any) -> None:
        try:
            state = _validate(api.EditorStateParams, params, "agent/didChangeEditorState")
            editor = manager.editor
            if state.active_uri is not None:
                editor.active_path = _path(state.active_uri)
            if state.selections is not None:
                editor.selections = [_range(r) for r in state.selections]
            if state.visible_ranges is not None:
                editor.visible_ranges = [_range(r) for r in state.visible_ranges]
        except (JsonRpcException, AgentError) as exc:
            log.warning("agent/didChangeEditorState ignored: %s", exc)


def _register_agent_requests(server: AgentServer) -> None:
    manager = server.sessions

    @request(server, "agent/newSession")
    async def new_session(p: api.NewSessionParams) -> api.NewSessionResult:
        cwd = Path(p.cwd) if p.cwd else None
        overrides = p.model_dump(
            by_alias=True,
            exclude_none=True,
            include={
                "provider",
                "model",
                "permission_mode",
                "max_turns",
                "append_system_prompt",
                "script",
                "request_log",
            },
        )
        session = await manager.create(cwd, overrides)
        return api.NewSessionResult(
            session_id=session.id,
            model=session.model,
            tools=session.registry.names(),
            permission_mode=session.gate.mode,
        )

    @request(server, "agent/submitMessage")
    async def submit_message(p: api.SubmitMessageParams) -> api.SubmitMessageResult:
        session = manager.get(p.session_id)
        attachments = [
            Attachment(_path(a.uri), _range(a.range) if a.range else None)
            for a in p.attachments or []
        ]
        turn_id, queued = session.submit(
            p.text, data=p.data, intent=p.intent, attachments=attachments, delivery=p.delivery
        )
        return api.SubmitMessageResult(turn_id=turn_id, queued=queued)

    @request(server, "agent/abort")
    async def abort(p: api.AbortParams) -> api.AbortResult:
        return api.AbortResult(aborted=manager.get(p.session_id).abort(p.turn_id))

    @request(server, "agent/respondPermission")
    async def respond_permission(p: api.RespondPermissionParams) -> api.EmptyResult:
        manager.get(p.session_id).respond_permission(
            p.request_id, p.option_id, p.message, p.updated_input
        )
        return api.EmptyResult()

    @request(server, "agent/listSessions")
    async def list_sessions(p: api.ListSessionsParams) -> api.ListSessionsResult:
        metas, cursor = manager.list(Path(p.cwd) if p.cwd else None, p.cursor, p.limit)
        sessions = [
            api.SessionInfo(
                session_id=m.session_id,
                title=m.title,
                cwd=m.cwd,
                created_at=_iso(m.created_at),
                updated_at=_iso(m.updated_at),
                turns=m.turns,
            )
            for m in metas
        ]
        return api.ListSessionsResult(sessions=sessions, next_cursor=cursor)

    @request(server, "agent/resumeSession")
    async def resume_session(p: api.ResumeSessionParams) -> api.ResumeSessionResult:
        overrides = p.model_dump(
            by_alias=True, exclude_none=True, include={"script", "request_log"}
        )
        session, display = await manager.resume(p.session_id, overrides)
        messages = [
            api.DisplayMessage(message_id=m.id, role=m.role, content=to_wire(list(m.content)))
            for m in display
        ]
        return api.ResumeSessionResult(
            session_id=session.id,
            messages=messages,
            model=session.model,
            tools=session.registry.names(),
            permission_mode=session.gate.mode,
        )

    @request(server, "agent/compact")
    async def compact(p: api.CompactParams) -> api.CompactResult:
        before, after = await manager.get(p.session_id).compact(p.instructions)
        return api.CompactResult(tokens_before=before, tokens_after=after)

    @request(server, "agent/respondAskUser")
    async def respond_ask_user(p: api.RespondAskUserParams) -> api.EmptyResult:
        manager.get(p.session_id).respond_ask_user(p.request_id, p.answer)
        return api.EmptyResult()

    @request(server, "agent/closeSession")
    async def close_session(p: api.SessionParams) -> api.EmptyResult:
        await manager.close(p.session_id)
        return api.EmptyResult()

    @request(server, "agent/setPermissionMode")
    async def set_permission_mode(p: api.SetPermissionModeParams) -> api.EmptyResult:
        manager.get(p.session_id).set_permission_mode(p.permission_mode)
        return api.EmptyResult()

    @request(server, "agent/setModel")
    async def set_model(p: api.SetModelParams) -> api.EmptyResult:
        await manager.set_model(p.session_id, p.model, p.provider)
        return api.EmptyResult()
