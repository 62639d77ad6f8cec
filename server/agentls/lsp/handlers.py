"""The agent/* handlers: validate params, call the session layer, shape the result.

This module pulls in the whole core (pydantic models, sessions, loop, tools), so the
light server module loads it in the background after `initialize` has been answered.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from agentls import api
from agentls.context.prompt import Attachment
from agentls.errors import AgentError
from agentls.lsp.edit_sink import LspEditSink
from agentls.lsp.paths import uri_path
from agentls.session.manager import SessionManager
from agentls.wire import json_sink, to_wire
from agentls.workspace.view import EditorState, OpenDocument, Position, Range

log = logging.getLogger(__name__)
P = TypeVar("P", bound=BaseModel)
Handler = Callable[[Any], Awaitable[BaseModel]]


class AgentHandlers:
    """One per daemon: the SessionManager and a handler per agent/* request."""

    def __init__(
        self,
        server: Any,
        documents: dict[Path, OpenDocument],
        editor: EditorState,
        client_options: Mapping[str, Any],
        workspace_roots: list[Path],
    ) -> None:
        self.manager = SessionManager(
            json_sink(server.send_event),
            lambda: LspEditSink(server),
            documents=documents,
            editor=editor,
        )
        self.manager.client_options = dict(client_options)
        self.manager.workspace_roots = list(workspace_roots)
        self._table: dict[str, Handler] = {
            "agent/newSession": self.new_session,
            "agent/submitMessage": self.submit_message,
            "agent/abort": self.abort,
            "agent/respondPermission": self.respond_permission,
            "agent/respondAskUser": self.respond_ask_user,
            "agent/listSessions": self.list_sessions,
            "agent/resumeSession": self.resume_session,
            "agent/compact": self.compact,
            "agent/closeSession": self.close_session,
            "agent/setPermissionMode": self.set_permission_mode,
            "agent/setModel": self.set_model,
        }

    async def dispatch(self, method: str, params: Any) -> Any:
        """Run one request; every failure becomes a JSON-RPC error without a traceback."""
        params_model, _result = api.REQUESTS[method]
        parsed = validate(params_model, params, method)
        try:
            result = await self._table[method](parsed)
        except AgentError as exc:
            raise JsonRpcException(exc.message, exc.code, exc.data) from None
        except JsonRpcException:
            raise
        except Exception as exc:
            log.exception("%s failed", method)
            message = f"{method} failed: {type(exc).__name__}: {exc}"
            raise JsonRpcException(message, -32603) from None
        return result.model_dump(mode="json", by_alias=True, exclude_none=True)

    def editor_state(self, params: Any) -> None:
        """agent/didChangeEditorState: a bad notification is logged, never fatal."""
        try:
            state = validate(api.EditorStateParams, params, "agent/didChangeEditorState")
            editor = self.manager.editor
            if state.active_uri is not None:
                editor.active_path = uri_path(state.active_uri)
            if state.selections is not None:
                editor.selections = [_range(r) for r in state.selections]
            if state.visible_ranges is not None:
                editor.visible_ranges = [_range(r) for r in state.visible_ranges]
        except (JsonRpcException, AgentError) as exc:
            log.warning("agent/didChangeEditorState ignored: %s", exc)

    async def shutdown(self) -> None:
        await self.manager.close_all()

    async def new_session(self, p: api.NewSessionParams) -> api.NewSessionResult:
        cwd = Path(p.cwd) if p.cwd else None
        fields = {
            "provider",
            "model",
            "permission_mode",
            "max_turns",
            "append_system_prompt",
            "script",
            "request_log",
        }
        overrides = p.model_dump(by_alias=True, exclude_none=True, include=fields)
        session = await self.manager.create(cwd, overrides)
        return api.NewSessionResult(
            session_id=session.id,
            model=session.model,
            tools=session.registry.names(),
            permission_mode=session.gate.mode,
        )

    async def submit_message(self, p: api.SubmitMessageParams) -> api.SubmitMessageResult:
        session = self.manager.get(p.session_id)
        attachments = [
            Attachment(uri_path(a.uri), _range(a.range) if a.range else None)
            for a in p.attachments or []
        ]
        turn_id, queued = session.submit(
            p.text, data=p.data, intent=p.intent, attachments=attachments, delivery=p.delivery
        )
        return api.SubmitMessageResult(turn_id=turn_id, queued=queued)

    async def abort(self, p: api.AbortParams) -> api.AbortResult:
        return api.AbortResult(aborted=self.manager.get(p.session_id).abort(p.turn_id))

    async def respond_permission(self, p: api.RespondPermissionParams) -> api.EmptyResult:
        self.manager.get(p.session_id).respond_permission(
            p.request_id, p.option_id, p.message, p.updated_input
        )
        return api.EmptyResult()

    async def respond_ask_user(self, p: api.RespondAskUserParams) -> api.EmptyResult:
        self.manager.get(p.session_id).respond_ask_user(p.request_id, p.answer)
        return api.EmptyResult()

    async def list_sessions(self, p: api.ListSessionsParams) -> api.ListSessionsResult:
        metas, cursor = self.manager.list(Path(p.cwd) if p.cwd else None, p.cursor, p.limit)
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

    async def resume_session(self, p: api.ResumeSessionParams) -> api.ResumeSessionResult:
        overrides = p.model_dump(
            by_alias=True, exclude_none=True, include={"script", "request_log"}
        )
        session, display = await self.manager.resume(p.session_id, overrides)
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

    async def compact(self, p: api.CompactParams) -> api.CompactResult:
        before, after = await self.manager.get(p.session_id).compact(p.instructions)
        return api.CompactResult(tokens_before=before, tokens_after=after)

    async def close_session(self, p: api.SessionParams) -> api.EmptyResult:
        await self.manager.close(p.session_id)
        return api.EmptyResult()

    async def set_permission_mode(self, p: api.SetPermissionModeParams) -> api.EmptyResult:
        self.manager.get(p.session_id).set_permission_mode(p.permission_mode)
        return api.EmptyResult()

    async def set_model(self, p: api.SetModelParams) -> api.EmptyResult:
        await self.manager.set_model(p.session_id, p.model, p.provider)
        return api.EmptyResult()


def validate(model: type[P], params: Any, method: str) -> P:
    """Params as `model`, or -32602 listing each bad field."""
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


def _iso(timestamp: float) -> str:
    moment = dt.datetime.fromtimestamp(timestamp, dt.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _range(r: api.WireRange) -> Range:
    return Range(Position(r.start.line, r.start.character), Position(r.end.line, r.end.character))
