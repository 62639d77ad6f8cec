"""The agent/* handlers: validate params, call the session layer, shape the result.

This module pulls in the whole core (pydantic models, sessions, loop, tools), so the
light server module loads it in the background after `initialize` has been answered.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from agentls import api, methods
from agentls.errors import AgentError, InvalidParams
from agentls.loop.guards import Budget
from agentls.lsp.editor_link import editor_link
from agentls.lsp.editor_values import attachment, editor_range
from agentls.lsp.hub import Hub
from agentls.lsp.inline_handlers import InlineEditHandlers
from agentls.lsp.mcp_handlers import McpHandlers
from agentls.lsp.paths import uri_path
from agentls.lsp.provider_status import status_before_session
from agentls.lsp.returning import ReturningWindows, running_fields
from agentls.lsp.server import AgentServer
from agentls.lsp.worktree_handlers import WorktreeHandlers, diff_result
from agentls.names import RulesScope
from agentls.permissions.asking import PermissionAnswer
from agentls.permissions.rules import Rule, parse_rule
from agentls.providers.catalog import ModelCatalog
from agentls.sandbox import sandbox_status
from agentls.session.display import DisplayHistory, display_calls
from agentls.session.manager import SessionManager
from agentls.session.rewind import rewind, turn_diff
from agentls.session.session import AgentSession
from agentls.session.slash import submit_message
from agentls.session.turn import Submission
from agentls.wire import event_json, to_wire

log = logging.getLogger(__name__)
P = TypeVar("P", bound=BaseModel)
Handler = Callable[[Any, "Client"], Awaitable[BaseModel]]
# One editor connection: its own buffers, editor state, capabilities and settings.
Client = AgentServer


class AgentHandlers(WorktreeHandlers, InlineEditHandlers, McpHandlers):
    """One per daemon: the SessionManager and a handler per agent/* request."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.manager = SessionManager(hub.event_sink(event_json))
        self._table: dict[str, Handler] = {
            name: getattr(self, m.handler) for name, m in methods.REQUESTS.items()
        }
        self.catalog = ModelCatalog()
        self.returning = ReturningWindows(self.manager, hub)

    async def dispatch(self, method: str, params: Any, client: Client) -> Any:
        """Run one request; every failure becomes a JSON-RPC error without a traceback."""
        params_model, _result = api.REQUESTS[method]
        parsed = validate(params_model, params, method)
        try:
            result = await self._table[method](parsed, client)
        except AgentError as exc:
            raise JsonRpcException(exc.message, exc.code, exc.data) from None
        except JsonRpcException:
            raise
        except Exception as exc:
            log.exception("%s failed", method)
            message = f"{method} failed: {type(exc).__name__}: {exc}"
            raise JsonRpcException(message, -32603) from None
        return result.model_dump(mode="json", by_alias=True, exclude_none=True)

    def editor_state(self, params: Any, client: Client) -> None:
        """agent/didChangeEditorState: a bad notification is logged, never fatal."""
        editor = client.editor
        try:
            state = validate(api.EditorStateParams, params, "agent/didChangeEditorState")
            if state.active_uri is not None:
                editor.active_path = uri_path(state.active_uri)
            if state.selections is not None:
                editor.selections = [
                    editor_range(r, client, editor.active_path) for r in state.selections
                ]
            if state.visible_ranges is not None:
                editor.visible_ranges = [
                    editor_range(r, client, editor.active_path) for r in state.visible_ranges
                ]
        except (JsonRpcException, AgentError) as exc:
            log.warning("agent/didChangeEditorState ignored: %s", exc)

    def abort_turn(self, session_id: str, turn_id: str) -> None:
        """$/cancelRequest of an agent/submitMessage: abort its turn, if the session is open."""
        session = self.manager.sessions.get(session_id)
        if session is not None:
            session.abort(turn_id)

    async def close_quietly(self, session_id: str) -> None:
        """Close a session no connection sees any more (it stays resumable from disk)."""
        if session_id in self.manager.sessions:
            await self.manager.close(session_id)

    async def close_shared(self) -> None:
        await self.manager.close_shared()

    def after_opening(
        self, method: str, result: dict[str, Any], client: Client
    ) -> Callable[[], None]:
        """What follows the answer to a request that opened a session: for a resume, the
        events the window missed and then the live ones; the session's commands."""
        session_id: str = result["sessionId"]

        def follow_up() -> None:
            if method == "agent/resumeSession":
                self.returning.rejoin(session_id, result["lastSeq"], client)
            self.announce_commands(session_id)

        return follow_up

    async def provider_status(
        self, p: api.ProviderStatusParams, client: Client
    ) -> api.ProviderStatusResult:
        return await status_before_session(self.manager, p, client)

    async def new_session(self, p: api.NewSessionParams, client: Client) -> api.NewSessionResult:
        cwd = Path(p.cwd) if p.cwd else None
        session = await self.manager.create(cwd, api.session_overrides(p), editor_link(client))
        self.hub.attach(session.id, client)
        return api.NewSessionResult(
            session_id=session.id,
            model=session.model,
            tools=session.registry.names(),
            permission_mode=session.gate.mode,
            sandbox=_sandbox_state(session),
            plugins=[api.PluginInfo.model_validate(p) for p in session.plugins.wire()] or None,
        )

    async def submit_message(
        self, p: api.SubmitMessageParams, client: Client
    ) -> api.SubmitMessageResult:
        # The window the user writes from is the one the session reads and edits through.
        session = self.manager.attach(p.session_id, editor_link(client))
        self.hub.attach(session.id, client)
        attachments = [attachment(a, i, client) for i, a in enumerate(p.attachments or [])]
        budget = None
        if p.max_budget_tokens is not None or p.max_budget_usd is not None:
            budget = Budget(p.max_budget_tokens, p.max_budget_usd)
        message = Submission(p.text, p.data, p.intent, attachments, p.delivery, budget)
        turn_id, queued = await submit_message(self.manager, session, message)
        return api.SubmitMessageResult(turn_id=turn_id, queued=queued)

    async def list_commands(self, p: api.SessionParams, _client: Client) -> api.ListCommandsResult:
        session = self.manager.get(p.session_id)
        if session.commands.refresh():
            session.announce_commands()
        return api.ListCommandsResult(
            commands=[
                api.CommandInfoParam(
                    name=c.name,
                    description=c.description,
                    argument_hint=c.argument_hint,
                    source=c.source,
                )
                for c in session.commands.listed()
            ]
        )

    def announce_commands(self, session_id: str) -> None:
        """After a session was opened (and the client has its id): its slash commands."""
        session = self.manager.sessions.get(session_id)
        if session is not None:
            session.announce_commands()

    async def continue_turn(self, p: api.SessionParams, client: Client) -> api.ContinueTurnResult:
        session = self.manager.attach(p.session_id, editor_link(client))
        self.hub.attach(session.id, client)
        return api.ContinueTurnResult(turn_id=session.intake.continue_turn())

    async def abort(self, p: api.AbortParams, _client: Client) -> api.AbortResult:
        return api.AbortResult(aborted=self.manager.get(p.session_id).abort(p.turn_id))

    async def respond_permission(
        self, p: api.RespondPermissionParams, _client: Client
    ) -> api.EmptyResult:
        answer = PermissionAnswer(p.option_id, p.message, p.updated_input, p.accepted_text)
        self.manager.get(p.session_id).answers.respond_permission(p.request_id, answer)
        return api.EmptyResult()

    async def note_user_action(
        self, p: api.NoteUserActionParams, _client: Client
    ) -> api.EmptyResult:
        self.manager.get(p.session_id).intake.note_user_action(p.text)
        return api.EmptyResult()

    async def respond_ask_user(
        self, p: api.RespondAskUserParams, _client: Client
    ) -> api.EmptyResult:
        self.manager.get(p.session_id).answers.respond_ask_user(p.request_id, p.answer)
        return api.EmptyResult()

    async def list_sessions(
        self, p: api.ListSessionsParams, _client: Client
    ) -> api.ListSessionsResult:
        metas, cursor = self.manager.list(Path(p.cwd) if p.cwd else None, p.cursor, p.limit)
        sessions = [
            api.SessionInfo(
                session_id=m.session_id,
                title=m.title,
                cwd=m.cwd,
                created_at=_iso(m.created_at),
                updated_at=_iso(m.updated_at),
                turns=m.turns,
                input_tokens=m.input_tokens,
                output_tokens=m.output_tokens,
                cost_usd=m.cost_usd,
                **running_fields(self.manager.sessions.get(m.session_id)),
            )
            for m in metas
        ]
        return api.ListSessionsResult(sessions=sessions, next_cursor=cursor)

    async def resume_session(
        self, p: api.ResumeSessionParams, client: Client
    ) -> api.ResumeSessionResult:
        overrides = p.model_dump(
            by_alias=True, exclude_none=True, exclude={"session_id", "last_seq", "message_limit"}
        )
        session, display, cursor = await self.returning.resume(
            p.session_id, p.last_seq, p.message_limit, overrides, editor_link(client), client
        )
        # Attached once the answer is out (after_opening), with what the window missed.
        opened = self._opened(session, display, client, attach=False)
        opened.messages_cursor = cursor
        return opened

    async def get_messages(
        self, p: api.GetMessagesParams, _client: Client
    ) -> api.GetMessagesResult:
        page, cursor = await self.manager.messages_before(p.session_id, p.before, p.limit)
        return api.GetMessagesResult(
            messages=_display_messages(page, self.manager.sessions.get(p.session_id)),
            next_cursor=cursor,
        )

    async def list_tasks(self, p: api.SessionParams, _client: Client) -> api.ListTasksResult:
        records = self.manager.get(p.session_id).tasks.records.values()
        return api.ListTasksResult(
            tasks=[
                api.TaskInfo(
                    agent_id=r.agent_id,
                    subagent_type=r.subagent_type,
                    description=r.description,
                    status=r.status,
                    started_at=_iso(r.started_at),
                    duration_ms=r.duration_ms,
                )
                for r in records
            ]
        )

    async def list_shells(self, p: api.SessionParams, _client: Client) -> api.ListShellsResult:
        shells = self.manager.get(p.session_id).shells.shells.values()
        return api.ListShellsResult(
            shells=[
                api.ShellInfo(
                    shell_id=s.shell_id,
                    command=s.command,
                    description=s.description,
                    status=s.state,
                    exit_code=s.exit_code,
                    pid=s.pid,
                    started_at=_iso(s.started_at),
                    output_chars=s.output.total,
                )
                for s in shells
            ]
        )

    async def list_permission_rules(
        self, p: api.SessionParams, _client: Client
    ) -> api.PermissionRulesResult:
        return _rules_result(self.manager.get(p.session_id))

    async def update_permission_rules(
        self, p: api.UpdatePermissionRulesParams, _client: Client
    ) -> api.PermissionRulesResult:
        session = self.manager.get(p.session_id)
        add = [_rule_of(r, "add") for r in p.add or []]
        remove = [_rule_of(r, "remove") for r in p.remove or []]
        try:
            session.rule_files.update(add, remove)
        except (OSError, ValueError) as exc:
            raise InvalidParams(f"The rules could not be saved: {exc}") from exc
        return _rules_result(session)

    async def stop_task(self, p: api.StopTaskParams, _client: Client) -> api.StopTaskResult:
        session = self.manager.get(p.session_id)
        return api.StopTaskResult(stopped=await session.tasks.stop(p.agent_id))

    async def fork_session(
        self, p: api.ForkSessionParams, client: Client
    ) -> api.ResumeSessionResult:
        session, display = await self.manager.fork(p.session_id, p.message_id, editor_link(client))
        return self._opened(session, display, client)

    def _opened(
        self, session: AgentSession, display: DisplayHistory, client: Client, attach: bool = True
    ) -> api.ResumeSessionResult:
        """A resumed or forked session, attached to `client`, with what it shows."""
        if attach:
            self.hub.attach(session.id, client)
        running = session.intake.queue.running
        messages = _display_messages(display, session)
        plan = [
            api.PlanEntryParam(content=e.content, status=e.status, priority=e.priority)
            for e in session.data.plan
        ]
        return api.ResumeSessionResult(
            session_id=session.id,
            messages=messages,
            model=session.model,
            tools=session.registry.names(),
            permission_mode=session.gate.mode,
            plan=plan or None,
            sandbox=_sandbox_state(session),
            running_turn_id=running.turn_id if running is not None else None,
            last_seq=session.events.out.seq,
        )

    async def rewind(self, p: api.RewindParams, client: Client) -> api.RewindResult:
        if p.dry_run:
            # A preview changes nothing, not even which editor the session writes to.
            session = self.manager.get(p.session_id)
        else:
            # Restored files go to the editor the request came from, as the agent's edits do.
            session = self.manager.attach(p.session_id, editor_link(client))
            self.hub.attach(session.id, client)
        done = await rewind(session, p.turn_id, p.what, p.force, p.dry_run)
        return api.RewindResult(
            restored=[str(path) for path in done.restored],
            deleted=[str(path) for path in done.deleted],
            conflicts=[api.FileProblem(path=str(f), reason=r) for f, r in done.conflicts],
            failed=[api.FileProblem(path=str(f), reason=r) for f, r in done.failed],
            messages_removed=len(done.removed_messages),
            removed_message_ids=done.removed_messages,
            files=diff_result(done.changes).files,
        )

    async def turn_diff(self, p: api.TurnDiffParams, _client: Client) -> api.TurnDiffResult:
        session = self.manager.get(p.session_id)
        changes = await asyncio.to_thread(turn_diff, session, p.turn_id)
        return diff_result(changes)

    async def compact(self, p: api.CompactParams, _client: Client) -> api.CompactResult:
        before, after = await self.manager.get(p.session_id).compact(p.instructions)
        return api.CompactResult(tokens_before=before, tokens_after=after)

    async def close_session(self, p: api.SessionParams, _client: Client) -> api.EmptyResult:
        await self.manager.close(p.session_id)
        self.hub.forget(p.session_id)
        return api.EmptyResult()

    async def delete_session(
        self, p: api.SessionParams, _client: Client
    ) -> api.DeleteSessionResult:
        warnings = await self.manager.delete(p.session_id)
        self.hub.forget(p.session_id)
        return api.DeleteSessionResult(deleted=True, warnings=list(warnings))

    async def set_permission_mode(
        self, p: api.SetPermissionModeParams, _client: Client
    ) -> api.EmptyResult:
        self.manager.get(p.session_id).set_permission_mode(p.permission_mode)
        return api.EmptyResult()

    async def set_model(self, p: api.SetModelParams, _client: Client) -> api.EmptyResult:
        await self.manager.set_model(p.session_id, p.model, p.provider)
        return api.EmptyResult()

    async def list_models(self, p: api.ListModelsParams, client: Client) -> api.ListModelsResult:
        if p.session_id is not None:
            session = self.manager.get(p.session_id)
            listed = await self.catalog.models(session.provider, session.model, p.refresh)
            provider_name, current = session.provider.name, session.model
        else:
            async with self.manager.default_provider(editor_link(client)) as (provider, current):
                listed = await self.catalog.models(provider, current, p.refresh)
                provider_name = provider.name
        models = [
            api.ModelEntry(id=m.id, display_name=m.display_name, current=m.id == current)
            for m in listed.models
        ]
        return api.ListModelsResult(provider=provider_name, models=models, cached=listed.cached)


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


def _sandbox_state(session: AgentSession) -> api.SandboxState | None:
    state = sandbox_status(session.sandbox, session.cwd, session.workspace.roots)
    return None if state is None else api.SandboxState.model_validate(state)


def _rules_result(session: AgentSession) -> api.PermissionRulesResult:
    return api.PermissionRulesResult(
        rules=[
            api.PermissionRuleInfo(rule=str(rule), behavior=rule.behavior, scope=scope)
            for rule, scope in session.rule_files.in_force()
        ]
    )


def _rule_of(info: api.PermissionRuleInfo, field: str) -> tuple[Rule, RulesScope]:
    try:
        return parse_rule(info.rule, info.behavior), info.scope
    except ValueError as exc:
        raise InvalidParams(str(exc), {"field": field}) from exc


def _display_messages(
    display: DisplayHistory, session: AgentSession | None
) -> list[api.DisplayMessage]:
    """`display` on the wire; with `session` (open in this daemon), each reply's tool calls
    as its tools announced them."""
    return [
        api.DisplayMessage(
            message_id=m.id,
            role=m.role,
            content=to_wire(list(m.content)),
            turn_id=display.turn_of(m),
            tool_calls=display_calls(m, session.registry, session.cwd) if session else None,
        )
        for m in display.messages
    ]
