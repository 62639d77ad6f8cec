"""AgentSession: one conversation. History, one running turn at a time, a queue behind it.

The session turns loop events into wire payloads (stamping `sessionId`, `seq`, `turnId`),
persists every complete message before it is sent, and answers permission requests.
The class holds the state and the public operations; the work is in its helper modules:
`turns` and `turn_start` (running a turn), `events_out` (sending events),
`permission_answers` (pending questions), `loop_deps` (what the loop is given),
`mcp_wiring`, `background_notes` and `manual_compaction`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections import deque
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from agentls.commands.builtin import standard_catalog
from agentls.config import Settings
from agentls.context.memory import find_memory_files, memory_prompt
from agentls.context.prompt import UserAttachment, system_prompt, user_action_note
from agentls.errors import NothingToContinue, SessionBusy
from agentls.events import (
    AvailableCommands,
    CommandInfo,
    PlanEvent,
    TurnCompleted,
    TurnError,
    TurnStopReason,
)
from agentls.hooks.callbacks import LoopCallbacks
from agentls.loop.guards import Budget
from agentls.mcp_servers.servers import McpServers
from agentls.messages import Message, new_id
from agentls.names import Delivery, PermissionMode
from agentls.pairing import repair_pairing
from agentls.permissions.asking import PermissionAnswer
from agentls.permissions.gate import PermissionGate
from agentls.permissions.remembered import RuleFiles
from agentls.permissions.rules import Rule, parse_rule
from agentls.pricing import price_for
from agentls.providers.base import Provider
from agentls.redact import Masker
from agentls.sandbox import prepare_sandbox
from agentls.session import background_notes, manual_compaction, mcp_wiring
from agentls.session.checkpoints import CheckpointStore
from agentls.session.events_out import Denial, EventOut, EventSink
from agentls.session.loop_deps import context_window, make_hooks, tool_registry
from agentls.session.permission_answers import PendingAnswers
from agentls.session.records import HistoryCleared, StateSaved, TurnEnded
from agentls.session.store import Transcript
from agentls.session.subagents import BackgroundTasks
from agentls.session.turns import LocalAction, Turn, work
from agentls.subagents.types import agent_types
from agentls.tools.background import BackgroundShells
from agentls.tools.base import SessionData
from agentls.tools.read_cache import FileReadCache
from agentls.usage import Usage
from agentls.web_config import WebOptions
from agentls.workspace.view import WorkspaceView

log = logging.getLogger(__name__)
_SURROGATE = re.compile("[\ud800-\udfff]")


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
        self.registry = tool_registry(self)
        self._subagent_slots = asyncio.Semaphore(max(1, settings.max_subagents))
        self.tasks = BackgroundTasks(
            lambda record, output: background_notes.task_finished(self, record, output)
        )
        self.shells = BackgroundShells(lambda shell: background_notes.shell_changed(self, shell))
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
        self.context = context_window(self)
        self.hooks = make_hooks(self, callbacks or LoopCallbacks())
        self._masker = masker or Masker()
        self._out = EventOut(session_id, sink, self._masker)
        self._queue: deque[Turn] = deque()
        self._running: Turn | None = None
        self._worker: asyncio.Task[None] | None = None
        self._steering: list[str] = []
        self.data = SessionData()
        # The session's PermissionPrompter: the requests and questions turns wait on.
        self._answers = PendingAnswers(session_id, self.data, self._save_state)
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
        mcp_wiring.start_mcp_servers(self)

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
        turn = Turn(new_id("turn"), text, data, intent, attachments, budget)
        turn.allowed, turn.model = tuple(allowed), model
        return self._enqueue(turn, front=delivery == "interrupt")

    def submit_local(
        self, command: str, action: LocalAction, delivery: Delivery = "queue"
    ) -> tuple[str, bool]:
        """A local slash command, run in its place in the turn queue (so it never acts on
        a history a turn is using); its turn sends `command_output`, then turn_completed."""
        turn = Turn(new_id("turn"), f"/{command}", command=command, action=action)
        return self._enqueue(turn, front=delivery == "interrupt")

    def announce_commands(self) -> None:
        """Tell clients the session's slash commands (an event outside any turn)."""
        listed = tuple(
            CommandInfo(c.name, c.description, c.argument_hint, c.source)
            for c in self.commands.listed()
        )
        self._out.emit(AvailableCommands(listed), None)

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
            self._out.emit(PlanEvent(()), turn_id)

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
        turn = Turn(new_id("turn"), "", continued=True)
        return self._enqueue(turn, front=False)[0]

    def _enqueue(self, turn: Turn, front: bool) -> tuple[str, bool]:
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
            self._worker = asyncio.create_task(work(self))
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
                self._out.emit(TurnCompleted(turn.turn_id, "aborted", 0, Usage()), turn.turn_id)
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

    def abandon(self) -> None:
        """Record the running turn's end (aborted) now, without waiting for it to unwind:
        the process is leaving (a second Ctrl-C in `agentls run`)."""
        self.abort()
        running = self._running
        if running is not None:
            self._end_broken_turn(running, "aborted", None)

    def _take_steering(self) -> list[str]:
        taken, self._steering = self._steering, []
        return taken

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
        answer = PermissionAnswer(option_id, message, updated_input, accepted_text)
        self._answers.respond_permission(request_id, answer)

    def respond_ask_user(self, request_id: str, answer: str) -> None:
        """Answer a pending AskUser question (UnknownPermissionRequest if there is none)."""
        self._answers.respond_ask_user(request_id, answer)

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
        self.context = context_window(self)

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

    def _end_broken_turn(self, turn: Turn, reason: TurnStopReason, error: TurnError | None) -> None:
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
        self._out.emit(TurnCompleted(turn.turn_id, reason, 0, Usage(), error), turn.turn_id)

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
        return await manual_compaction.summarise(self, instructions, turn_id)

    def _cost(self, usage: Usage) -> float | None:
        """What `usage` cost at the current model's price; None without a known price."""
        price = price_for(self.model, self.settings.prices)
        return price.cost(usage) if price is not None else None

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
