"""AcpAgent: the ACP agent side of one connection, over the core's SessionManager.

Events become `session/update`s through an Outbox, in the order the core made them.
A prompt is one turn: `session/prompt` is answered when that turn completes, with its
stop reason; `session/cancel` aborts it, and the abort ends it `cancelled`, once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp import schema as acp

from agentls import __version__
from agentls.acp.cancelling import REQUEST_CANCELLED, CancellableRequests
from agentls.acp.capabilities import AGENT_CAPABILITIES
from agentls.acp.client_side import ClientBuffers, ClientEditSink, ClientTerminal, SessionHandle
from agentls.acp.envelope import absolute_cwd, client_capabilities_of
from agentls.acp.history import replay
from agentls.acp.known import Known, KnownSessions, iso, told
from agentls.acp.options import mode_of, mode_state
from agentls.acp.outbox import Outbox
from agentls.acp.prompt import PromptBlock, message_of
from agentls.acp.questions import ask_permission, ask_question, dismissed
from agentls.acp.requests import (
    AUTH_METHODS,
    NOT_SAVED,
    McpServerParam,
    as_request_errors,
    session_overrides,
)
from agentls.acp.roots import activate
from agentls.acp.steering import delivery_of
from agentls.acp.updates import STOP_REASONS
from agentls.errors import AgentError, UnknownSession
from agentls.events import (
    AskUserRequest,
    PermissionModeChanged,
    PermissionRequest,
    PermissionResolved,
    SessionEvent,
    TurnCompleted,
)
from agentls.permissions.asking import PermissionAnswer
from agentls.providers.catalog import ModelCatalog
from agentls.session.manager import SessionManager
from agentls.session.session import AgentSession
from agentls.session.slash import submit_message
from agentls.session.turn import Submission
from agentls.workspace.link import EditorLink
from agentls.workspace.view import EditorState, OpenDocument

log = logging.getLogger(__name__)
# How long a session's model list may take before the picker shows the current model only.
MODEL_LIST_SECONDS = 5.0


class AcpAgent:
    """The agent of one ACP connection: its sessions, their updates, their prompts."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self._client: Any = None
        self.capabilities = acp.ClientCapabilities()
        self.manager = SessionManager(self._on_event, env=env)
        self.catalog = ModelCatalog()
        # The client's buffers as fs/read_text_file last gave them (shared by its sessions).
        self._documents: dict[Path, OpenDocument] = {}
        self._outbox = Outbox(lambda: self._client)
        self._known = KnownSessions()
        self._turns: dict[str, asyncio.Future[TurnCompleted]] = {}
        self._asking: dict[str, asyncio.Task[None]] = {}
        self.requests = CancellableRequests()

    def on_connect(self, conn: Any) -> None:
        self._client = conn

    # -- connection --------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: acp.ClientCapabilities | None = None,
        client_info: acp.Implementation | None = None,
        **_meta: Any,
    ) -> acp.InitializeResponse:
        self.capabilities = client_capabilities_of(client_capabilities)
        return acp.InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AGENT_CAPABILITIES,
            auth_methods=list(AUTH_METHODS),
            agent_info=acp.Implementation(name="agentls", title="agentls", version=__version__),
        )

    async def authenticate(self, method_id: str, **_meta: Any) -> acp.AuthenticateResponse:
        """The key comes from the environment: say whether the configured provider has one."""
        with as_request_errors():
            async with self.manager.default_provider(self._link(Path.cwd(), SessionHandle())):
                pass
        return acp.AuthenticateResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        log.info("unknown ACP notification _%s ignored", method)

    async def close(self) -> None:
        """The client left: every turn is aborted and its end written to its transcript."""
        await self.manager.close_all()
        self._outbox.close()

    # -- sessions ----------------------------------------------------------------------

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServerParam] | None = None,
        **meta: Any,
    ) -> acp.NewSessionResponse:
        overrides = session_overrides(mcp_servers, additional_directories, meta.get("agentls"))
        handle = SessionHandle(flushed=self._outbox.flushed)
        with as_request_errors():
            session = await self.manager.create(
                absolute_cwd(cwd), overrides, self._link(Path(cwd), handle)
            )
        handle.id = session.id
        self._opened(session)
        return acp.NewSessionResponse(
            session_id=session.id,
            modes=mode_state(session.gate.mode),
            config_options=self._config(session),
        )

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[McpServerParam] | None = None,
        additional_directories: list[str] | None = None,
        **meta: Any,
    ) -> acp.LoadSessionResponse:
        """The session, its whole history replayed as updates before the answer."""
        session, display = await self._resume(
            session_id, cwd, mcp_servers, meta, additional_directories
        )
        for update in replay(display, session.registry, session.cwd, tuple(session.data.plan)):
            self._outbox.send(session.id, update)
        await self._outbox.flushed()
        self._opened(session)
        return acp.LoadSessionResponse(
            modes=mode_state(session.gate.mode), config_options=self._config(session)
        )

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServerParam] | None = None,
        **meta: Any,
    ) -> acp.ResumeSessionResponse:
        session, _display = await self._resume(
            session_id, cwd, mcp_servers, meta, additional_directories, tail=True
        )
        self._opened(session)
        return acp.ResumeSessionResponse(
            modes=mode_state(session.gate.mode), config_options=self._config(session)
        )

    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServerParam] | None = None,
        **meta: Any,
    ) -> acp.ForkSessionResponse:
        handle = SessionHandle(flushed=self._outbox.flushed)
        with as_request_errors(session_id, NOT_SAVED):
            session, _display = await self.manager.fork(
                session_id, None, self._link(Path(cwd), handle)
            )
        activate(self.manager, session, additional_directories)
        handle.id = session.id
        self._opened(session)
        return acp.ForkSessionResponse(
            session_id=session.id,
            modes=mode_state(session.gate.mode),
            config_options=self._config(session),
        )

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **_meta: Any
    ) -> acp.ListSessionsResponse:
        with as_request_errors():
            metas, next_cursor = self.manager.list(Path(cwd) if cwd else None, cursor)
        return acp.ListSessionsResponse(
            sessions=[
                acp.SessionInfo(
                    session_id=m.session_id, cwd=m.cwd, title=m.title, updated_at=iso(m.updated_at)
                )
                for m in metas
            ],
            next_cursor=next_cursor,
        )

    async def close_session(self, session_id: str, **_meta: Any) -> acp.CloseSessionResponse:
        with as_request_errors(session_id):
            self.manager.get(session_id)
            await self.manager.close(session_id)
        self._known.forget(session_id)
        return acp.CloseSessionResponse()

    async def delete_session(self, session_id: str) -> acp.DeleteSessionResponse:
        """`session/delete` (answered through agentls.acp.deleting): as agent/deleteSession;
        what could not be removed is in `_meta.agentls.warnings`. An id with no session
        (deleted already, never made) is deleted silently, as ACP says it should be."""
        with as_request_errors():
            try:
                warnings = await self.manager.delete(session_id)
            except UnknownSession:
                warnings = ()
        # The last updates of its aborted turn go before the answer; none follow it.
        await self._outbox.flushed()
        self._known.forget(session_id)
        meta = {"agentls": {"warnings": list(warnings)}} if warnings else None
        return acp.DeleteSessionResponse(field_meta=meta)

    async def set_session_mode(
        self, session_id: str, mode_id: str, **_meta: Any
    ) -> acp.SetSessionModeResponse:
        self._set_mode(self._session(session_id), mode_id)
        await self._outbox.flushed()
        return acp.SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **_meta: Any
    ) -> acp.SetSessionConfigOptionResponse:
        session = self._session(session_id)
        if config_id == "mode":
            self._set_mode(session, str(value))
        elif config_id == "model":
            with as_request_errors(session_id):
                await self.manager.set_model(session_id, str(value), None)
            self._of(session.id).told = told(session)
        else:
            raise RequestError.invalid_params(
                {"field": "configId", "message": f"no config option {config_id!r}"}
            )
        await self._outbox.flushed()
        return acp.SetSessionConfigOptionResponse(config_options=self._config(session))

    # -- turns -------------------------------------------------------------------------

    async def prompt(
        self, session_id: str, prompt: list[PromptBlock], **meta: Any
    ) -> acp.PromptResponse:
        session = self._session(session_id)
        with self.requests.running() as request:
            with as_request_errors(session_id):
                text, attachments = message_of(prompt, session.cwd)
                delivery, text = delivery_of(text, meta)
                submission = Submission(text, attachments=attachments, delivery=delivery)
                turn_id, _queued = await submit_message(self.manager, session, submission)
            # A `$/cancel_request` aborts the turn, even one that came during submission.
            request.started(lambda: session.abort(turn_id))
            try:
                completed = await self._turn(turn_id)
            except asyncio.CancelledError:
                # The connection is going: the turn stops too.
                session.abort(turn_id)
                raise
        if request.cancelled:
            await self._outbox.flushed()
            raise RequestError(REQUEST_CANCELLED, "Request cancelled")
        if self.manager.sessions.get(session.id) is session:
            # A session closed or deleted under its prompt is told nothing more (a title
            # update would bring a deleted session back into the client's list).
            self._announce_changes(session)
        # The answer follows every update of its turn.
        await self._outbox.flushed()
        if completed.stop_reason == "error":
            error = completed.error
            message = error.message if error is not None else "The turn failed."
            data = {"code": error.code, "retryable": error.retryable} if error else None
            raise RequestError(-32603, message, data)
        usage = completed.usage
        return acp.PromptResponse(
            stop_reason=STOP_REASONS[completed.stop_reason],  # type: ignore[arg-type]
            usage=acp.Usage(
                total_tokens=usage.input_tokens + usage.output_tokens,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cached_read_tokens=usage.cache_read_tokens,
                cached_write_tokens=usage.cache_write_tokens,
            ),
        )

    async def cancel(self, session_id: str, **_meta: Any) -> None:
        """Stop the running turn and drop queued ones; each ends `cancelled` (a
        notification: an unknown session is ignored)."""
        session = self.manager.sessions.get(session_id)
        if session is not None:
            session.abort()

    def _turn(self, turn_id: str) -> asyncio.Future[TurnCompleted]:
        """The future of a turn's end, whichever of prompt and event comes first."""
        future = self._turns.get(turn_id)
        if future is None:
            future = self._turns[turn_id] = asyncio.get_running_loop().create_future()
        return future

    # -- events ------------------------------------------------------------------------

    def _on_event(self, envelope: SessionEvent) -> None:
        session_id = envelope.session_id
        view = self._of(session_id).updates
        event = envelope.event
        if isinstance(event, PermissionRequest):
            # Its tool call must reach the client first.
            request_call = view.permission_call(event)
            self._outbox.after(lambda: self._ask(session_id, event, request_call))
        for update in view.updates(envelope):
            self._outbox.send(session_id, update)
        if isinstance(event, AskUserRequest):
            self._outbox.after(lambda: self._ask_user(session_id, event))
        elif isinstance(event, PermissionResolved) and event.outcome == "cancelled":
            asking = self._asking.pop(event.request_id, None)
            if asking is not None:
                asking.cancel()
        elif isinstance(event, TurnCompleted) and envelope.parent_tool_call_id is None:
            self._outbox.after(lambda: self._end_turn(event))
        elif isinstance(event, PermissionModeChanged) and session_id in self.manager.sessions:
            # An approved plan switched it: the client's mode picker follows.
            self._announce_changes(self.manager.sessions[session_id])

    async def _end_turn(self, event: TurnCompleted) -> None:
        future = self._turn(event.turn_id)
        if not future.done():
            future.set_result(event)
        # A prompt already waiting took it; otherwise the prompt finds it done.
        asyncio.get_running_loop().call_later(60, self._turns.pop, event.turn_id, None)

    # -- questions ---------------------------------------------------------------------

    async def _ask(
        self, session_id: str, request: PermissionRequest, call: acp.ToolCallUpdate
    ) -> None:
        """Put a permission request to the client and give the core its answer."""
        session = self.manager.sessions.get(session_id)
        if session is None:
            return
        task = asyncio.current_task()
        assert task is not None
        self._asking[request.request_id] = task
        try:
            option_id = await ask_permission(self._client, session_id, request, call)
        except asyncio.CancelledError:
            return  # the turn ended (cancel): the core has already resolved the request
        finally:
            self._asking.pop(request.request_id, None)
        answer = dismissed(request) if option_id is None else PermissionAnswer(option_id)
        with contextlib.suppress(AgentError):
            session.answers.respond_permission(request.request_id, answer)

    async def _ask_user(self, session_id: str, request: AskUserRequest) -> None:
        session = self.manager.sessions.get(session_id)
        if session is None:
            return
        elicitation = self.capabilities.elicitation
        can_elicit = elicitation is not None and elicitation.form is not None
        answer = await ask_question(self._client, session_id, request, can_elicit)
        with contextlib.suppress(AgentError):
            session.answers.respond_ask_user(request.request_id, answer)

    # -- helpers -----------------------------------------------------------------------

    def _session(self, session_id: str) -> AgentSession:
        with as_request_errors(session_id):
            return self.manager.get(session_id)

    def _link(self, cwd: Path, handle: SessionHandle) -> EditorLink:
        """What a session sees of this client: the files and terminal it offers."""
        fs = self.capabilities.fs
        return EditorLink(
            self._documents,
            EditorState(),
            ClientEditSink(self._client, handle) if fs and fs.write_text_file else None,
            {},
            [cwd],
            None,
            ClientBuffers(self._client, handle) if fs and fs.read_text_file else None,
            ClientTerminal(self._client, handle, self._terminal_shown(handle))
            if self.capabilities.terminal
            else None,
        )

    def _terminal_shown(self, handle: SessionHandle) -> Callable[[str, str], Awaitable[None]]:
        async def shown(tool_call_id: str, terminal_id: str) -> None:
            view = self._of(handle.id).updates
            view.terminals[tool_call_id] = terminal_id
            terminal = acp.TerminalToolCallContent(type="terminal", terminal_id=terminal_id)
            self._outbox.send(
                handle.id,
                acp.ToolCallProgress(
                    session_update="tool_call_update",
                    tool_call_id=tool_call_id,
                    status="in_progress",
                    content=[terminal],
                ),
            )
            await self._outbox.flushed()

        return shown

    async def _resume(
        self,
        session_id: str,
        cwd: str,
        mcp_servers: list[McpServerParam] | None,
        meta: Mapping[str, Any],
        directories: list[str] | None,
        tail: bool = False,
    ) -> tuple[AgentSession, list[Any]]:
        """The session, live or rebuilt, with `directories` as its additional roots, and its
        display history; with `tail` (a resume, which replays nothing) only the last message
        of it is read, so a huge session opens as fast as its model history allows."""
        handle = SessionHandle(session_id, self._outbox.flushed)
        overrides = session_overrides(mcp_servers, None, meta.get("agentls"))
        link = self._link(Path(cwd), handle)
        with as_request_errors(session_id, NOT_SAVED):
            if tail:
                session, display, _older = await self.manager.resume_tail(
                    session_id, 1, overrides, link
                )
            else:
                session, display = await self.manager.resume(session_id, overrides, link)
        activate(self.manager, session, directories)
        return session, display.messages

    def _opened(self, session: AgentSession) -> None:
        """After the answer that names it: the session's commands, then its models."""
        self._known.opened(session)
        session.announce_commands()
        self._outbox.spawn(self._list_models(session))

    async def _list_models(self, session: AgentSession) -> None:
        """The model picker's choices; the answer went out with the current model only."""
        try:
            listed = await asyncio.wait_for(
                self.catalog.models(session.provider, session.model), MODEL_LIST_SECONDS
            )
        except Exception as exc:  # any failure leaves the picker with the current model
            log.info("models of %s not listed: %s", session.id, exc)
            return
        self._of(session.id).models = [(m.id, m.display_name or m.id) for m in listed.models]
        self._outbox.send(
            session.id,
            acp.ConfigOptionUpdate(
                session_update="config_option_update", config_options=self._config(session)
            ),
        )

    def _config(
        self, session: AgentSession
    ) -> list[acp.SessionConfigOptionSelect | acp.SessionConfigOptionBoolean]:
        return self._known.config(session)

    def _of(self, session_id: str) -> Known:
        return self._known.of(session_id)

    def _announce_changes(self, session: AgentSession) -> None:
        """What changed in the session is told to the client: a mode or model (/mode,
        /model, the picker) as the current mode and as config options; a new title."""
        for update in self._known.changes(session):
            self._outbox.send(session.id, update)

    def _set_mode(self, session: AgentSession, mode_id: str) -> None:
        mode = mode_of(mode_id)
        if mode is None:
            raise RequestError.invalid_params(
                {"field": "modeId", "message": f"no mode {mode_id!r}"}
            )
        session.set_permission_mode(mode)
        self._announce_changes(session)
