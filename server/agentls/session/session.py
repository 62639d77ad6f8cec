"""AgentSession: one conversation. History, one running turn at a time, a queue behind it.

The session turns loop events into wire payloads (stamping `sessionId`, `seq`, `turnId`),
persists every complete message before it is sent, and answers permission requests.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from agentls.commands.builtin import standard_catalog
from agentls.config import Settings, project_settings_file
from agentls.context.budget import context_window_for
from agentls.context.memory import find_memory_files, memory_prompt
from agentls.context.prompt import (
    Recap,
    UserAttachment,
    attachment_images,
    system_prompt,
    user_action_note,
    user_context,
)
from agentls.context.results import write_spill_file
from agentls.context.window import ContextWindow, overhead_tokens
from agentls.errors import (
    AgentError,
    InvalidParams,
    NothingToContinue,
    SessionBusy,
    UnknownPermissionRequest,
)
from agentls.events import (
    AskUserRequest,
    AvailableCommands,
    CommandInfo,
    CommandOutput,
    LoopEvent,
    McpStatusEvent,
    MessageCompleted,
    PermissionRequest,
    PlanEvent,
    SessionEvent,
    ShellStatus,
    ToolCallEvent,
    ToolCallUpdate,
    TurnCompleted,
    TurnError,
    TurnStarted,
    TurnStopReason,
)
from agentls.hooks.callbacks import LoopCallbacks
from agentls.hooks.config import parse_hooks
from agentls.hooks.points import Aborted, LoopHooks, PromptVerdict, command_hooks, unless_aborted
from agentls.loop.compaction_run import CompactionFailed, apply_compaction, compact
from agentls.loop.executor import PermissionAnswer
from agentls.loop.guards import Budget
from agentls.loop.run import LoopDeps, LoopSettings, QueryState, run_turn
from agentls.mcp_servers import approval as mcp_approval
from agentls.mcp_servers.prompts import McpPromptCommands
from agentls.mcp_servers.servers import McpServers
from agentls.mcp_servers.state import McpServerState
from agentls.messages import Message, TextBlock, new_id
from agentls.names import Delivery, PermissionMode
from agentls.output_limits import output_limit_for
from agentls.pairing import repair_pairing
from agentls.permissions.gate import PermissionGate
from agentls.permissions.remembered import RuleFiles
from agentls.permissions.rules import Rule, parse_rule
from agentls.permissions.scoped import TurnGate
from agentls.pricing import price_for
from agentls.providers.base import Provider
from agentls.redact import Masker
from agentls.sandbox import prepare_sandbox
from agentls.session.checkpoints import CheckpointStore
from agentls.session.records import HistoryCleared, StateSaved, TurnBegan, TurnEnded
from agentls.session.store import Transcript, title_from
from agentls.session.subagents import (
    BackgroundTasks,
    SubagentLimits,
    SubagentRunner,
    TaskRecord,
)
from agentls.subagents.types import agent_types
from agentls.tools.base import SessionData, ToolContext, ToolOutput
from agentls.tools.editor import editor_tools
from agentls.tools.read_cache import FileReadCache
from agentls.tools.registry import ToolRegistry, default_tools
from agentls.tools.shells import BackgroundShell, BackgroundShells, exit_note
from agentls.tools.task import TaskTool
from agentls.usage import Usage
from agentls.web_config import WebOptions
from agentls.workspace.view import WorkspaceView

log = logging.getLogger(__name__)
_CHANGING_KINDS = frozenset({"edit", "delete", "move", "execute"})
EventSink = Callable[[SessionEvent], None]
_SURROGATE = re.compile("[\ud800-\udfff]")
GO_ON_TEXT = "The user asked you to go on: continue the task from where you stopped."
# A local slash command's work, given its turn id; returns what it says to the user.
LocalAction = Callable[[str], Awaitable[str]]


@dataclass(slots=True)
class _Turn:
    turn_id: str
    text: str
    data: Any = None
    intent: str | None = None
    attachments: Sequence[UserAttachment] = ()
    # This turn's budget over the session's; None: the settings' budget.
    budget: Budget | None = None
    # Started by agent/continueTurn: the model goes on from the history, no new message.
    continued: bool = False
    # A local slash command's turn: the daemon answers, no model call (see submit_local).
    command: str | None = None
    action: LocalAction | None = None
    # A prompt command's pre-approved tools and model, for this turn only.
    allowed: tuple[Rule, ...] = ()
    model: str | None = None
    abort: asyncio.Event = field(default_factory=asyncio.Event)
    # Set when its turn_completed went out: a turn ends exactly once, whatever fails.
    ended: bool = False


@dataclass(frozen=True, slots=True)
class Denial:
    tool_call_id: str
    reason: str


class AgentSession:
    """One conversation with its history, turn queue, permissions and transcript."""

    def __init__(
        self,
        session_id: str,
        cwd: Path,
        settings: Settings,
        provider: Provider,
        workspace: WorkspaceView,
        sink: EventSink,
        transcript: Transcript,
        project_root: Path | None = None,
        masker: Masker | None = None,
        callbacks: LoopCallbacks | None = None,
    ) -> None:
        self.id = session_id
        self.cwd = cwd
        self.settings = settings
        self.provider = provider
        self.workspace = workspace
        self.history: list[Message] = []
        self.usage = Usage()
        self.denials: list[Denial] = []
        self.agent_types = agent_types(project_root or cwd)
        self.commands = standard_catalog(project_root or cwd)
        self.sandbox = prepare_sandbox(settings.sandbox)
        self._web = WebOptions.from_settings(
            settings.web_fetch_allow_private, settings.web_search, os.environ
        )
        self.mcp: McpServers | None = None
        self._mcp_version = 0
        self.registry = self._registry()
        self._subagent_slots = asyncio.Semaphore(max(1, settings.max_subagents))
        self.tasks = BackgroundTasks(self._task_finished)
        self.shells = BackgroundShells(self._shell_changed)
        # Background shells that exited: the model hears at its next step or message.
        self._shell_notes: list[str] = []
        self._closing = False
        self.read_cache = FileReadCache()
        self.gate = PermissionGate(settings.permission_mode, _rules(settings), cwd=cwd)
        self.gate.on_remember = self._remember_rule
        # The rules kept in settings files (agent/listPermissionRules, …/updatePermissionRules).
        self.rule_files = RuleFiles(self.gate, cwd, settings.home)
        self.transcript = transcript
        # What files held before each turn's writes (agent/rewind, agent/turnDiff).
        self.checkpoints = CheckpointStore(
            transcript.path.with_suffix("") / "checkpoints", settings.home
        )
        memory = memory_prompt(find_memory_files(project_root or cwd, cwd, settings.home))
        # Built once: the system prompt must stay byte-identical for the whole session.
        self.system = system_prompt(settings.append_system_prompt, memory)
        self.context = self._context_window()
        self.hooks = self._make_hooks(callbacks or LoopCallbacks())
        self._sink = sink
        self._masker = masker or Masker()
        self._seq = 0
        self._queue: deque[_Turn] = deque()
        self._running: _Turn | None = None
        self._worker: asyncio.Task[None] | None = None
        self._steering: list[str] = []
        self._permissions: dict[str, asyncio.Future[PermissionAnswer]] = {}
        self._questions: dict[str, asyncio.Future[str]] = {}
        self.data = SessionData()
        self._options: dict[str, tuple[str, ...]] = {}
        # Pending requests that carry a proposed file change (they may be answered with
        # the text the user accepted).
        self._reviewable: set[str] = set()
        # agent/noteUserAction notes waiting for the next user message.
        self._user_actions: list[str] = []
        # Calls that change something, by id, until they finish: finished ones become steps.
        self._changing_calls: dict[str, str] = {}
        # Set by restore: the next turn tells the model what was done and left unanswered.
        self._resumed = False
        # How the last turn ended: agent/continueTurn goes on only after `max_turns`.
        self.last_stop: TurnStopReason | None = None

    def restore(self, history: list[Message], state: StateSaved) -> None:
        """Take over a resumed session's history and state (before any turn runs); the
        next turn recaps what was done and left unanswered."""
        self.adopt(history, state)
        self.data.pending_questions[:] = list(state.pending_questions)
        self._resumed = True

    def adopt(self, history: list[Message], state: StateSaved, save: bool = False) -> None:
        """Take `history` and the state (its open questions aside) as this session's own;
        `save` writes the state to this session's transcript (a fork's first state)."""
        self.history[:] = history
        self.data.structured_data = state.structured_data
        self.data.user_intent = state.user_intent
        self.data.completed_steps[:] = list(state.completed_steps)
        self.data.plan = state.plan
        if save:
            self._save_state()

    def start_mcp_servers(self) -> None:
        """Start the configured MCP servers in the background (their tools join the
        session's once ready; a turn waits a little for servers still starting)."""
        configs = self.settings.mcp_servers
        if not configs or self.mcp is not None:
            return
        project = mcp_approval.project_servers(configs, self.cwd)
        verdict = mcp_approval.remembered(self.settings.home, self.cwd, project)
        self.mcp = McpServers(
            configs,
            self.cwd,
            self.transcript.path.with_suffix("") / "mcp",
            self._mcp_status,
            self.settings.mcp_tool_timeout,
            self.settings.mcp_startup_timeout,
            held=[c.name for c in project] if verdict is not True else (),
        )
        self.mcp.start()
        self.commands.add_source(McpPromptCommands(self.mcp))
        if verdict is False:
            self.mcp.decline("the user chose never to start this project's MCP servers")

    async def _approve_mcp_servers(self, turn: _Turn) -> bool:
        """Ask, once, whether the project's own MCP servers may start; False when the
        turn was aborted meanwhile (it is then ended)."""
        held = self.mcp.awaiting_approval() if self.mcp is not None else []
        if self.mcp is None or not held:
            return True
        home = self.settings.home
        asking = mcp_approval.ask(held, self.cwd, home, self, lambda e: self._on_event(e, turn))
        try:
            approved = await unless_aborted(turn.abort, asking)
        except Aborted:
            self._end_broken_turn(turn, "aborted", None)
            return False
        if approved:
            await self.mcp.approve()
        else:
            self.mcp.decline("the user did not approve this project's MCP servers")
        return True

    def _mcp_status(self, state: McpServerState) -> None:
        count = len(state.tools) if state.status == "ready" else None
        attempt = state.attempts or None
        event = McpStatusEvent(
            state.name, state.status, state.transport, count, state.error, attempt
        )
        self._emit(event, None)
        # A server that became ready (or went away) may change the slash commands.
        if state.status in ("ready", "stopped") and self.commands.refresh():
            self.announce_commands()

    def _registry(self) -> ToolRegistry:
        mcp_tools = self.mcp.tools() if self.mcp is not None else []
        builtin = default_tools(todo=self.settings.todo_write, sandbox=self.sandbox, web=self._web)
        editor = editor_tools(self.workspace.intel)
        return ToolRegistry([*builtin, *editor, TaskTool(self.agent_types), *mcp_tools])

    def _sync_mcp_tools(self) -> None:
        """Take the MCP servers' tools when their set changed (between turns' calls)."""
        if self.mcp is None or self.mcp.version == self._mcp_version:
            return
        self._mcp_version = self.mcp.version
        self.registry = self._registry()
        self.context = self._context_window()

    @property
    def model(self) -> str:
        return self.settings.resolved_model()

    @property
    def busy(self) -> bool:
        return self._running is not None or bool(self._queue)

    def submit(
        self,
        text: str,
        *,
        data: Any = None,
        intent: str | None = None,
        attachments: Sequence[UserAttachment] = (),
        delivery: Delivery = "queue",
        budget: Budget | None = None,
        allowed: Sequence[Rule] = (),
        model: str | None = None,
    ) -> tuple[str, bool]:
        """Accept a user message; returns its turn id and whether it waits behind another.
        `allowed` and `model` (a slash command's) hold for this turn only."""
        running = self._running
        # JSON may carry lone surrogates ("\ud800"); no provider or file takes them.
        text, data, intent = scrub(text), scrub(data), scrub(intent)
        if delivery == "steer" and running is not None:
            self._steering.append(text)
            return running.turn_id, False
        turn = _Turn(new_id("turn"), text, data, intent, attachments, budget)
        turn.allowed, turn.model = tuple(allowed), model
        return self._enqueue(turn, front=delivery == "interrupt")

    def submit_local(
        self, command: str, action: LocalAction, delivery: Delivery = "queue"
    ) -> tuple[str, bool]:
        """A local slash command, run in its place in the turn queue (so it never acts on
        a history a turn is using); its turn sends `command_output`, then turn_completed."""
        turn = _Turn(new_id("turn"), f"/{command}", command=command, action=action)
        return self._enqueue(turn, front=delivery == "interrupt")

    def announce_commands(self) -> None:
        """Tell clients the session's slash commands (an event outside any turn)."""
        listed = tuple(
            CommandInfo(c.name, c.description, c.argument_hint, c.source)
            for c in self.commands.listed()
        )
        self._emit(AvailableCommands(listed), None)

    def clear(self, turn_id: str) -> None:
        """/clear: the conversation starts afresh in this session. The history, the plan,
        the data and what the model read are forgotten, and the transcript records it, so
        a resume starts empty too."""
        had_plan = bool(self.data.plan)
        self.history.clear()
        self.data.structured_data, self.data.user_intent, self.data.plan = None, None, ()
        self.data.completed_steps.clear()
        self.read_cache = FileReadCache()
        self.denials.clear()
        self._user_actions.clear()
        self._resumed = False
        self.last_stop = None
        self.context.compacted()
        self.transcript.write(HistoryCleared())
        self._save_state()
        if had_plan:
            self._emit(PlanEvent(()), turn_id)

    def continue_turn(self) -> str:
        """After a turn stopped at the turn limit: run another with as many model calls, on
        the history as it is (agent/continueTurn); its turn id."""
        if self.busy:
            raise SessionBusy(f"Session {self.id} is running a turn; there is nothing to go on.")
        if self.last_stop != "max_turns":
            ended = f"ended {self.last_stop}" if self.last_stop else "has not run"
            raise NothingToContinue(
                f"The last turn of session {self.id} {ended}; only a turn that reached the "
                "turn limit (max_turns) can be continued. Send a message instead."
            )
        turn = _Turn(new_id("turn"), "", continued=True)
        return self._enqueue(turn, front=False)[0]

    def _enqueue(self, turn: _Turn, front: bool) -> tuple[str, bool]:
        running = self._running
        if front and running is not None:
            self._queue.appendleft(turn)
            running.abort.set()
        else:
            self._queue.append(turn)
        if self._worker is None:
            # The turn counts as running from now on, so a steer or an interrupt that
            # arrives before the worker's first step still finds it.
            self._running = self._queue.popleft()
            self._worker = asyncio.create_task(self._work())
        return turn.turn_id, running is not None

    def note_user_action(self, text: str) -> None:
        """Something the user did outside the conversation (undid an edit): the running
        turn gets it at its next step, else the next message carries it."""
        text = scrub(text)
        running = self._running
        # A local command's turn has no model to tell: the next message carries it.
        if running is not None and running.action is None and not running.abort.is_set():
            self._steering.append(user_action_note(text))
        else:
            self._user_actions.append(text)

    def abort(self, turn_id: str | None = None) -> bool:
        """Abort the running turn (and drop queued ones), or one turn by id. Idempotent."""
        aborted = False
        for turn in list(self._queue):
            if turn_id is None or turn.turn_id == turn_id:
                self._queue.remove(turn)
                self._emit(TurnCompleted(turn.turn_id, "aborted", 0, Usage()), turn.turn_id)
                aborted = True
        running = self._running
        if running is not None and turn_id in (None, running.turn_id):
            aborted = aborted or not running.abort.is_set()
            running.abort.set()
            self._steering.clear()
        if turn_id is None:
            # Stop means stop: background agents too.
            aborted = aborted or bool(self.tasks.running())
            self.tasks.cancel_all()
        return aborted

    def _task_finished(self, record: TaskRecord, output: ToolOutput | None) -> None:
        """A background agent ended: the model hears of it at its next step, or, when the
        session is idle, in a turn of its own."""
        if output is not None and output.usage is not None:
            self.usage = self.usage + output.usage
            self.transcript.touch(spent=output.usage, cost=self._cost(output.usage))
        if self._closing:
            return
        if output is None:
            note = f"The background {record.subagent_type} agent {record.agent_id} was stopped."
            self._user_actions.append(note)
            return
        text = (
            f'<taskNotification agentId="{record.agent_id}" type="{record.subagent_type}" '
            f'status="{record.status}">\n{output.content}\n</taskNotification>'
        )
        if self._running is not None and not self._running.abort.is_set():
            self._steering.append(text)
        else:
            self.submit(text)

    def _shell_changed(self, shell: BackgroundShell) -> None:
        """Tell clients a shell started or ended; an exit nobody asked for is noted for the
        model (at the running turn's next step, else in the next message: no turn of its own)."""
        status = ShellStatus(shell.shell_id, shell.command, shell.state, shell.exit_code)
        self._emit(status, None)
        if shell.state != "exited" or shell.stopping or self._closing:
            return
        self._shell_notes.append(exit_note(shell))

    def _steering_and_notes(self) -> list[str]:
        notes, self._shell_notes = self._shell_notes, []
        return [*self._take_steering(), *notes]

    def respond_permission(
        self,
        request_id: str,
        option_id: str,
        message: str | None = None,
        updated_input: dict[str, Any] | None = None,
        accepted_text: str | None = None,
    ) -> None:
        """Answer a pending permission request (UnknownPermissionRequest if there is none)."""
        future = self._permissions.get(request_id)
        if future is None or future.done():
            raise UnknownPermissionRequest(
                f"No pending permission request {request_id!r} in session {self.id}; it was "
                "answered already, or its turn ended."
            )
        options = self._options.get(request_id, ())
        if option_id not in options:
            raise InvalidParams(
                f"optionId {option_id!r} is not an option of request {request_id}; "
                f"use one of {', '.join(options)}",
                {"field": "optionId"},
            )
        if accepted_text is not None:
            reviewable = request_id in self._reviewable
            _check_accepted_text(request_id, option_id, updated_input, reviewable)
        future.set_result(PermissionAnswer(option_id, message, updated_input, accepted_text))

    def respond_ask_user(self, request_id: str, answer: str) -> None:
        """Answer a pending AskUser question (UnknownPermissionRequest if there is none)."""
        future = self._questions.get(request_id)
        if future is None or future.done():
            raise UnknownPermissionRequest(
                f"No pending question {request_id!r} in session {self.id}; it was answered "
                "already, or its turn ended."
            )
        future.set_result(answer)

    async def wait_for_user_answer(self, request: AskUserRequest) -> str:
        """The prompter seam for AskUser: park until `respond_ask_user` answers."""
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._questions[request.request_id] = future
        pending = {"requestId": request.request_id, "question": request.question}
        self.data.pending_questions.append(pending)
        self._save_state()
        try:
            return await future
        finally:
            self._questions.pop(request.request_id, None)
            self.data.pending_questions.remove(pending)
            self._save_state()

    async def wait_for_answer(self, request: PermissionRequest) -> PermissionAnswer:
        """The PermissionPrompter seam: park until `respond_permission` answers."""
        future: asyncio.Future[PermissionAnswer] = asyncio.get_running_loop().create_future()
        self._permissions[request.request_id] = future
        self._options[request.request_id] = tuple(o.option_id for o in request.options)
        if request.diff is not None:
            self._reviewable.add(request.request_id)
        try:
            return await future
        finally:
            self._permissions.pop(request.request_id, None)
            self._options.pop(request.request_id, None)
            self._reviewable.discard(request.request_id)

    def _remember_rule(self, rule: Rule) -> None:
        """Keep an "always" answer's rule where the permissionRulesScope setting says."""
        try:
            self.rule_files.keep(rule, self.settings.permission_rules_scope)
        except (OSError, ValueError) as exc:
            log.warning("session %s: rule %s kept for this session only: %s", self.id, rule, exc)

    def set_permission_mode(self, mode: PermissionMode) -> None:
        self.gate.mode = mode
        self.settings = replace(self.settings, permission_mode=mode)

    def set_model(self, settings: Settings, provider: Provider) -> None:
        """Switch model (and maybe provider); a running turn keeps its own, the next uses this."""
        self.settings = settings
        self.provider = provider
        self.context = self._context_window()

    async def close(self) -> None:
        """Abort everything, wait for the turn to settle, close the transcript."""
        self._closing = True
        self.abort()
        await self.tasks.stop_all()
        if self.mcp is not None:
            await self.mcp.close()
        await self.shells.kill_all()
        worker = self._worker
        if worker is not None:
            await asyncio.gather(worker, return_exceptions=True)
        self.transcript.close()

    async def _work(self) -> None:
        try:
            while self._running is not None:
                turn = self._running
                await self._run_to_end(turn)
                leftover = self._take_steering()
                if leftover and not turn.abort.is_set():
                    # Steering that arrived as the turn ended becomes the next turn; an
                    # aborted turn's steering goes with it.
                    self._queue.appendleft(_Turn(new_id("turn"), "\n\n".join(leftover)))
                self._running = self._queue.popleft() if self._queue else None
        finally:
            self._running = None
            self._worker = None

    async def _run_to_end(self, turn: _Turn) -> None:
        """Run a turn; whatever fails inside it, the turn ends and the session stays usable."""
        try:
            await self._run(turn)
        except asyncio.CancelledError:
            self._end_broken_turn(turn, "aborted", None)
            raise
        except Exception as exc:
            log.error("turn %s of session %s failed", turn.turn_id, self.id, exc_info=exc)
            message = f"Internal error: {type(exc).__name__}: {exc}"
            self._end_broken_turn(turn, "error", TurnError("internal_error", message, False))

    def _end_broken_turn(
        self, turn: _Turn, reason: TurnStopReason, error: TurnError | None
    ) -> None:
        """Pair the history, record the turn's end and send its one turn_completed."""
        repaired = repair_pairing(self.history)
        added = [m for m in repaired if m.id not in {old.id for old in self.history}]
        self.history[:] = repaired
        if turn.ended:
            return
        turn.ended = True
        self.last_stop = reason
        try:
            for message in added:
                self.transcript.record_message(message, turn.turn_id)
            code = error.code if error else None
            self.transcript.write(TurnEnded(turn.turn_id, reason, 0, code))
        except Exception as exc:
            log.error(
                "session %s: the end of turn %s was not recorded: %s", self.id, turn.turn_id, exc
            )
        self._emit(TurnCompleted(turn.turn_id, reason, 0, Usage(), error), turn.turn_id)

    async def _run(self, turn: _Turn) -> None:
        if turn.action is not None:
            await self._run_local(turn, turn.action)
            return
        self.transcript.write(TurnBegan(turn.turn_id))
        if turn.continued:
            self._start_continuation(turn)
        elif not await self._start_with_message(turn):
            return
        if not await self._approve_mcp_servers(turn):
            return
        if self.mcp is not None:
            await self.mcp.wait_started(self.settings.mcp_startup_timeout)
        state = QueryState(turn.turn_id, self.history)
        deps = self._deps(turn)
        async for event in run_turn(state, deps):
            self._on_event(event, turn)

    async def _run_local(self, turn: _Turn, action: LocalAction) -> None:
        """A local command's turn: its output, then its end; no message, no model call."""
        command = turn.command or ""
        # Let the answer to the submit (which names this turn) go out before the turn's
        # events, as it does for a model turn: the action may not wait for anything.
        await asyncio.sleep(0)
        try:
            text = await action(turn.turn_id)
        except AgentError as exc:
            self._emit(CommandOutput(command, exc.message, is_error=True), turn.turn_id)
            error = TurnError("command_failed", exc.message, False)
            completed = TurnCompleted(turn.turn_id, "error", 0, Usage(), error)
        else:
            self._emit(CommandOutput(command, text), turn.turn_id)
            completed = TurnCompleted(turn.turn_id, "end_turn", 0, Usage())
        turn.ended = True
        self._emit(completed, turn.turn_id)

    def _start_continuation(self, turn: _Turn) -> None:
        """agent/continueTurn: the model answers the history's last user message (tool
        results, usually); after a reply that was cut at the limit it is asked to go on."""
        last = self.history[-1] if self.history else None
        if last is not None and last.role == "user":
            self._emit(TurnStarted(turn.turn_id, last.id, continued=True), turn.turn_id)
            return
        user = Message("user", (TextBlock(GO_ON_TEXT),))
        self._emit(TurnStarted(turn.turn_id, user.id, continued=True), turn.turn_id)
        self.history.append(user)
        self.transcript.record_message(user, turn.turn_id)
        self._on_event(MessageCompleted(user.id, "user", user.content), turn)

    async def _start_with_message(self, turn: _Turn) -> bool:
        """Add the turn's user message (False: hooks refused it, or the turn was aborted
        while they ran, and the turn has ended)."""
        user_id = new_id("msg")
        self._emit(TurnStarted(turn.turn_id, user_id), turn.turn_id)
        hooked = await self._prompt_hooks(turn)
        if hooked is None:
            return False
        first = not self.history
        if turn.data is not None or turn.intent is not None:
            if turn.data is not None:
                self.data.structured_data = turn.data
            if turn.intent is not None:
                self.data.user_intent = turn.intent
            self._save_state()
        self.transcript.touch(title=title_from(turn.text))
        recap = self._take_resume_recap()
        actions, self._user_actions = self._user_actions, []
        notes, self._shell_notes = self._shell_notes, []
        context = await asyncio.to_thread(
            user_context,
            self.workspace,
            self.cwd,
            first=first,
            data=turn.data,
            intent=turn.intent,
            attachments=turn.attachments,
            recap=recap,
            user_actions=actions,
            hook_context=hooked.context,
            notes=notes,
        )
        images = await asyncio.to_thread(
            attachment_images, self.workspace, self.cwd, turn.attachments
        )
        user = Message("user", (TextBlock(context), TextBlock(turn.text), *images), user_id)
        self.history.append(user)
        self.transcript.record_message(user, turn.turn_id)
        self._on_event(MessageCompleted(user.id, "user", user.content), turn)
        return True

    async def _prompt_hooks(self, turn: _Turn) -> PromptVerdict | None:
        """The hooks before a message (trust, SessionStart, UserPromptSubmit); None when
        they refused it or the turn was aborted meanwhile (the turn is then ended)."""
        if self.hooks.commands is None:
            return PromptVerdict()
        source = "resume" if self._resumed else "startup"
        work = self.hooks.before_prompt(
            turn.text, source, lambda event: self._on_event(event, turn), self
        )
        try:
            verdict = await unless_aborted(turn.abort, work)
        except Aborted:
            self._end_broken_turn(turn, "aborted", None)
            return None
        if verdict.blocked is None:
            return verdict
        message = f"A UserPromptSubmit hook refused the message: {verdict.blocked}"
        self._end_broken_turn(turn, "error", TurnError("prompt_blocked", message, False))
        return None

    def _make_hooks(self, callbacks: LoopCallbacks) -> LoopHooks:
        """The session's hooks: those the settings configure, and an embedder's callbacks."""
        problems: list[str] = []
        project = str(project_settings_file(self.cwd))
        config = parse_hooks(self.settings.hook_layers, project, problems)
        for problem in problems:
            log.warning("settings: %s", problem)
        commands = command_hooks(
            config,
            self.id,
            self.transcript.path,
            self.cwd,
            self.settings.home,
            lambda: self.gate.mode,
        )
        return LoopHooks(commands, callbacks)

    def _deps(self, turn: _Turn | None) -> LoopDeps:
        self._sync_mcp_tools()
        settings = self.settings
        context = ToolContext(
            self.workspace, self.read_cache, self.cwd, data=self.data, shells=self.shells
        )
        if settings.editor_diagnostics:
            context.diagnostics_wait = settings.diagnostics_wait
        if turn is not None:
            context.checkpoints = self.checkpoints.for_turn(turn.turn_id, self.workspace, self.cwd)
        model = (turn.model if turn is not None else None) or self.model
        gate = self.gate
        if turn is not None and turn.allowed:
            gate = TurnGate(self.gate, turn.allowed, cwd=self.cwd)
        deps = LoopDeps(
            provider=self.provider,
            registry=self.registry,
            tool_context=context,
            gate=gate,
            prompter=self,
            system=self.system,
            settings=LoopSettings(
                model=model,
                max_turns=settings.max_turns,
                max_tokens=settings.max_tokens,
                output_limit=output_limit_for(model, settings.max_output_tokens),
                price=price_for(model, settings.prices),
                thinking_budget=settings.thinking_budget,
                nudge_limit=settings.nudge_limit,
                idle_timeout=settings.idle_timeout,
                model_retries=settings.model_retries,
                retry_budget=settings.retry_budget,
                read_concurrency=settings.read_concurrency,
                context_window=self.context.window,
                budget=(turn.budget if turn is not None else None)
                or Budget(settings.max_budget_tokens, settings.max_budget_usd),
                stuck_threshold=settings.stuck_threshold,
            ),
            abort=turn.abort if turn is not None else asyncio.Event(),
            take_steering=self._steering_and_notes,
            journal=self.transcript,
            context=self.context,
            hooks=self.hooks,
        )
        if turn is not None and settings.subagent_depth > 0:
            deps.tool_context.subagents = SubagentRunner(
                deps,
                {t.name: t for t in self.agent_types},
                lambda event, agent_id, call_id, background: self._on_event(
                    event, None if background else turn, (call_id, agent_id)
                ),
                self.transcript.path.with_suffix("") / "agents",
                self._subagent_slots,
                SubagentLimits(settings.subagent_depth, settings.max_subagents),
                self._masker,
                self.tasks,
                lambda: self.history,
            )
        return deps

    def _cost(self, usage: Usage) -> float | None:
        """What `usage` cost at the current model's price; None without a known price."""
        price = price_for(self.model, self.settings.prices)
        return price.cost(usage) if price is not None else None

    def _context_window(self) -> ContextWindow:
        window = context_window_for(self.model, self.settings.context_window)
        prompt = self.system.static + self.system.dynamic
        spill = write_spill_file(self.transcript.spill_dir)
        return ContextWindow(window, overhead_tokens(prompt, self.registry.specs()), spill=spill)

    async def compact(self, instructions: str | None) -> tuple[int, int]:
        """Summarise the history now (agent/compact); SessionBusy while a turn runs."""
        if self.busy:
            raise SessionBusy(
                f"Session {self.id} is running a turn; compact when it has finished, "
                "or abort it first."
            )
        return await self.summarise(instructions, None)

    async def summarise(self, instructions: str | None, turn_id: str | None) -> tuple[int, int]:
        """Compact the history now (AgentError when it fails): for agent/compact outside
        turns, or in `turn_id`, the turn of a /compact command."""
        deps = self._deps(None)
        await self.hooks.pre_compact(
            "manual", instructions, lambda event: self._emit(event, turn_id)
        )
        try:
            compacted = await compact(
                self.history,
                deps,
                self.context,
                summarize=True,
                instructions=instructions,
            )
        except CompactionFailed as exc:
            raise AgentError(f"Compaction failed: {exc}") from exc
        if turn_id is None and self.busy:
            # A message arrived during the summary call; its turn owns the history now.
            raise SessionBusy(
                f"A turn started in session {self.id} while it was being compacted; "
                "nothing was changed. Compact again when the turn has finished."
            )
        event = apply_compaction(self.history, deps, compacted, "manual")
        self._emit(event, turn_id)
        await self.hooks.compacted(event, turn_id)
        return compacted.tokens_before, compacted.tokens_after

    def _take_steering(self) -> list[str]:
        taken, self._steering = self._steering, []
        return taken

    def _on_event(
        self, event: LoopEvent, turn: _Turn | None, origin: tuple[str, str] | None = None
    ) -> None:
        """Book-keep and send one event of the turn; `origin`, for a sub-agent's events, is
        the Task call and the agent's id (a background agent's events have no turn)."""
        if isinstance(event, TurnCompleted) and turn is not None and origin is None:
            self.last_stop = event.stop_reason
            self.usage = self.usage + event.usage
            self.transcript.touch(turn_done=True, spent=event.usage, cost=self._cost(event.usage))
            code = event.error.code if event.error else None
            self.transcript.write(TurnEnded(turn.turn_id, event.stop_reason, event.turns, code))
            turn.ended = True
        elif isinstance(event, ToolCallEvent) and event.kind in _CHANGING_KINDS:
            self._changing_calls[event.tool_call_id] = event.title
        elif isinstance(event, ToolCallUpdate):
            self._on_tool_update(event)
        elif isinstance(event, PlanEvent):
            self._save_state()
        self._emit(event, turn.turn_id if turn is not None else None, origin)

    def _on_tool_update(self, event: ToolCallUpdate) -> None:
        if event.status == "declined":
            self.denials.append(Denial(event.tool_call_id, event.content or ""))
        title = self._changing_calls.get(event.tool_call_id)
        if title is not None and event.status not in ("pending", "in_progress"):
            del self._changing_calls[event.tool_call_id]
            if event.status == "completed":
                self.data.completed_steps.append(title)
                self._save_state()

    def _take_resume_recap(self) -> Recap | None:
        """After a resume: the steps done and the questions a crash or close left open."""
        if not self._resumed:
            return None
        self._resumed = False
        unanswered = [str(q.get("question", "")) for q in self.data.pending_questions]
        if unanswered:
            self.data.pending_questions.clear()
            self._save_state()
        return Recap(tuple(self.data.completed_steps), tuple(unanswered))

    def _save_state(self) -> None:
        data = self.data
        self.transcript.write(
            StateSaved(
                data.structured_data,
                data.user_intent,
                tuple(data.completed_steps),
                tuple(data.pending_questions),
                data.plan,
            )
        )

    def _emit(
        self, event: LoopEvent, turn_id: str | None, origin: tuple[str, str] | None = None
    ) -> None:
        self._seq += 1
        call_id, agent_id = origin if origin is not None else (None, None)
        masked = self._masker.mask_value(event)
        envelope = SessionEvent(self.id, self._seq, turn_id, masked, call_id, agent_id)
        try:
            self._sink(envelope)
        except Exception:
            log.exception("could not deliver an event of session %s", self.id)


def scrub(value: Any) -> Any:
    """`value` with every lone surrogate in its strings (and dict keys) made U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value) if _has_surrogate(value) else value
    if isinstance(value, list):
        return [scrub(item) for item in value]
    if isinstance(value, dict):
        return {scrub(key): scrub(item) for key, item in value.items()}
    return value


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _rules(settings: Settings) -> list[Rule]:
    rules = []
    layers: tuple[tuple[Literal["deny", "ask", "allow"], tuple[str, ...]], ...] = (
        ("deny", settings.deny),
        ("ask", settings.ask),
        ("allow", settings.allow),
    )
    for behavior, texts in layers:
        for text in texts:
            try:
                rules.append(parse_rule(text, behavior))
            except ValueError as exc:
                log.warning("permission rule %r ignored: %s", text, exc)
    return rules


def _check_accepted_text(
    request_id: str, option_id: str, updated_input: dict[str, Any] | None, reviewable: bool
) -> None:
    """acceptedText answers only an allowed request that proposed a file change."""
    if not reviewable:
        raise InvalidParams(
            f"acceptedText is only for a request with a proposed change (diff); {request_id} "
            "has none",
            {"field": "acceptedText"},
        )
    if not option_id.startswith("allow"):
        raise InvalidParams(
            "acceptedText goes with an allow option; to refuse the change, reject it",
            {"field": "acceptedText"},
        )
    if updated_input is not None:
        raise InvalidParams(
            "give acceptedText or updatedInput, not both", {"field": "acceptedText"}
        )
