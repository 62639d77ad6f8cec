"""AgentSession: one conversation. History, one running turn at a time, a queue behind it.

The session composes small parts, each owning its state: the `Conversation` (history and
the caller's data, as recorded), `SessionEvents` (what goes out, and the books it keeps),
the `Inbox` (what the model has not heard yet), the `TurnQueue` and its `TurnRunner` (the
turns, one at a time, each to its one end), `PendingAnswers` (the questions turns ask
the user) and the `Toolbox` (tools and MCP servers). What the loop is given is built in
`loop_deps`; the MCP servers' start and approval in `mcp_wiring`; compaction the user
asks for in `manual_compaction`.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

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
    TurnStopReason,
)
from agentls.hooks.callbacks import LoopCallbacks
from agentls.json_text import scrub
from agentls.loop.guards import Budget
from agentls.mcp_servers.servers import McpServers
from agentls.messages import Message, new_id
from agentls.names import Delivery, PermissionMode
from agentls.permissions.asking import PermissionAnswer
from agentls.permissions.gate import PermissionGate
from agentls.permissions.remembered import RuleFiles
from agentls.permissions.rules import Rule, rules_from
from agentls.pricing import price_for
from agentls.providers.base import Provider
from agentls.redact import Masker
from agentls.sandbox import prepare_sandbox
from agentls.session import manual_compaction
from agentls.session.background_notes import BackgroundReports
from agentls.session.checkpoints import CheckpointStore
from agentls.session.conversation import Conversation
from agentls.session.events_out import EventOut, EventSink, SessionEvents
from agentls.session.inbox import Inbox
from agentls.session.loop_deps import context_window, loop_deps, make_hooks
from agentls.session.mcp_wiring import McpWiring
from agentls.session.permission_answers import PendingAnswers
from agentls.session.records import StateSaved
from agentls.session.store import Transcript
from agentls.session.subagents import BackgroundTasks
from agentls.session.toolbox import Toolbox
from agentls.session.turn import LocalAction, Submission, Turn
from agentls.session.turn_start import TurnOpening
from agentls.session.turns import TurnQueue, TurnRunner
from agentls.subagents.types import agent_types
from agentls.tools.background import BackgroundShells
from agentls.tools.base import SessionData
from agentls.tools.read_cache import FileReadCache
from agentls.tools.registry import ToolRegistry
from agentls.usage import Usage
from agentls.web_config import WebOptions
from agentls.workspace.view import WorkspaceView

log = logging.getLogger(__name__)


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
        self.transcript = transcript
        self.closing = False
        # The parts of a conversation: what was said, what goes out, what waits to be heard,
        # the turns, and the questions they ask the user.
        self.conversation = Conversation(transcript)
        self.masker = masker or Masker()
        out = EventOut(session_id, sink, self.masker)
        self.events = SessionEvents(out, transcript, self.conversation, self._cost)
        self.inbox = Inbox()
        self.answers = PendingAnswers(session_id, self.data, self.conversation.save_state)
        # What the model may use: tools, sub-agents, background work, the read files.
        self.agent_types = agent_types(project_root or cwd)
        self.commands = standard_catalog(project_root or cwd)
        self.sandbox = prepare_sandbox(settings.sandbox)
        web = WebOptions.from_settings(
            settings.web_fetch_allow_private, settings.web_search, os.environ
        )
        self.toolbox = Toolbox(workspace, self.agent_types, self.sandbox, web, settings.todo_write)
        # Sub-agents running at once, the session's and its turns' alike.
        self.subagent_slots = asyncio.Semaphore(max(1, settings.max_subagents))
        self.read_cache = FileReadCache()
        # What the model may do without asking, and the rules kept in settings files.
        self.gate = PermissionGate(
            settings.permission_mode,
            rules_from(deny=settings.deny, ask=settings.ask, allow=settings.allow),
            cwd=cwd,
        )
        self.gate.on_remember = self._remember_rule
        self.rule_files = RuleFiles(self.gate, cwd, settings.home)
        # What files held before each turn's writes (agent/rewind, agent/turnDiff).
        self.checkpoints = CheckpointStore(
            transcript.path.with_suffix("") / "checkpoints", settings.home
        )
        memory = memory_prompt(find_memory_files(project_root or cwd, cwd, settings.home))
        # Built once: the system prompt must stay byte-identical for the whole session.
        self.system = system_prompt(settings.append_system_prompt, memory)
        self.context = context_window(self)
        self.hooks = make_hooks(self, callbacks or LoopCallbacks())
        self.mcp_wiring = McpWiring(
            lambda: self.settings,
            cwd,
            transcript.path.with_suffix("") / "mcp",
            self.toolbox,
            self.commands,
            self.events,
            self.answers,
            self.announce_commands,
        )
        self.turns = TurnQueue(self._turn_runner().run_to_end, self._steering_left)
        reports = BackgroundReports(
            self.events, self.inbox, self.turns, self.submit, lambda: self.closing
        )
        self.tasks = BackgroundTasks(reports.task_finished)
        self.shells = BackgroundShells(reports.shell_changed)

    def _turn_runner(self) -> TurnRunner:
        opening = TurnOpening(
            self.events,
            self.conversation,
            self.transcript,
            self.inbox,
            self.hooks,
            self.answers,
            self.workspace,
            self.cwd,
        )
        return TurnRunner(
            opening,
            self.events,
            self.transcript,
            self.conversation,
            self.mcp_wiring.approve,
            lambda: self.mcp,
            lambda: self.settings.mcp_startup_timeout,
            lambda turn: loop_deps(self, turn),
        )

    @property
    def registry(self) -> ToolRegistry:
        return self.toolbox.registry

    @property
    def mcp(self) -> McpServers | None:
        return self.toolbox.mcp

    @property
    def history(self) -> list[Message]:
        return self.conversation.history

    @property
    def data(self) -> SessionData:
        return self.conversation.data

    @property
    def usage(self) -> Usage:
        return self.events.usage

    @property
    def last_stop(self) -> TurnStopReason | None:
        return self.events.last_stop

    def restore(self, history: list[Message], state: StateSaved) -> None:
        """Take over a resumed session's history and state (before any turn runs); the
        next turn recaps what was done and left unanswered."""
        self.conversation.restore(history, state)

    def adopt(self, history: list[Message], state: StateSaved, save: bool = False) -> None:
        """Take `history` and the state (its open questions aside) as this session's own;
        `save` writes the state to this session's transcript (a fork's first state)."""
        self.conversation.adopt(history, state, save)

    def start_mcp_servers(self) -> None:
        """Start the configured MCP servers in the background (their tools join the
        session's once ready; a turn waits a little for servers still starting)."""
        self.mcp_wiring.start()

    @property
    def model(self) -> str:
        return self.settings.resolved_model()

    @property
    def busy(self) -> bool:
        return self.turns.busy

    def submit(
        self,
        text: str,
        *,
        data: Any = None,
        intent: str | None = None,
        attachments: Sequence[UserAttachment] = (),
        delivery: Delivery = "queue",
        budget: Budget | None = None,
    ) -> tuple[str, bool]:
        """Accept a user message; returns its turn id and whether it waits behind another."""
        return self.send(Submission(text, data, intent, attachments, delivery, budget))

    def send(self, message: Submission) -> tuple[str, bool]:
        """`submit`, given the message as one value (what slash commands pass on)."""
        running = self.turns.running
        # JSON may carry lone surrogates ("\ud800"); no provider or file takes them.
        text, data, intent = scrub(message.text), scrub(message.data), scrub(message.intent)
        if message.delivery == "steer" and running is not None:
            self.inbox.steer(text)
            return running.turn_id, False
        turn = Turn(new_id("turn"), text, data, intent, message.attachments, message.budget)
        turn.allowed, turn.model = tuple(message.allowed), message.model
        return self._enqueue(turn, front=message.delivery == "interrupt")

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
        self.events.emit(AvailableCommands(listed), None)

    def clear(self, turn_id: str) -> None:
        """/clear: the conversation starts afresh in this session. The history, the plan,
        the data and what the model read are forgotten, and the transcript records it, so
        a resume starts empty too."""
        had_plan = self.conversation.clear()
        self.read_cache = FileReadCache()
        self.inbox.drop_user_actions()
        self.events.last_stop = None
        self.context.compacted()
        if had_plan:
            self.events.emit(PlanEvent(()), turn_id)

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
        return turn.turn_id, self.turns.enqueue(turn, front)

    def _steering_left(self, turn: Turn) -> Turn | None:
        """Steering that arrived as `turn` ended becomes the next turn; an aborted turn's
        steering goes with it."""
        leftover = self.inbox.take_steering()
        if not leftover or turn.abort.is_set():
            return None
        return Turn(new_id("turn"), "\n\n".join(leftover))

    def note_user_action(self, text: str) -> None:
        """Something the user did outside the conversation (undid an edit): the running
        turn gets it at its next step, else the next message carries it."""
        text = scrub(text)
        running = self.turns.running
        # A local command's turn has no model to tell: the next message carries it.
        if running is not None and running.action is None and not running.abort.is_set():
            self.inbox.steer(user_action_note(text))
        else:
            self.inbox.note_user_action(text)

    def abort(self, turn_id: str | None = None) -> bool:
        """Abort the running turn (and drop queued ones), or one turn by id. Idempotent."""
        aborted = False
        for turn in self.turns.drop_waiting(turn_id):
            self.events.emit(TurnCompleted(turn.turn_id, "aborted", 0, Usage()), turn.turn_id)
            aborted = True
        running = self.turns.running
        if running is not None and turn_id in (None, running.turn_id):
            aborted = aborted or not running.abort.is_set()
            running.abort.set()
            self.inbox.drop_steering()
        if turn_id is None:
            # Stop means stop: background agents too.
            aborted = aborted or bool(self.tasks.running())
            self.tasks.cancel_all()
        return aborted

    def abandon(self) -> None:
        """Record the running turn's end (aborted) now, without waiting for it to unwind:
        the process is leaving (a second Ctrl-C in `agentls run`)."""
        self.abort()
        running = self.turns.running
        if running is not None:
            self.events.end_broken_turn(running, "aborted", None)

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
        self.answers.respond_permission(request_id, answer)

    def respond_ask_user(self, request_id: str, answer: str) -> None:
        """Answer a pending AskUser question (UnknownPermissionRequest if there is none)."""
        self.answers.respond_ask_user(request_id, answer)

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
        self.closing = True
        self.abort()
        await self.tasks.stop_all()
        if self.mcp is not None:
            await self.mcp.close()
        await self.shells.kill_all()
        await self.turns.settled()
        self.transcript.close()

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
        deps = loop_deps(self, None)
        return await manual_compaction.summarise(
            self.id,
            self.history,
            deps,
            self.context,
            self.events.emit,
            lambda: self.busy,
            instructions,
            turn_id,
        )

    def _cost(self, usage: Usage) -> float | None:
        """What `usage` cost at the current model's price; None without a known price."""
        price = price_for(self.model, self.settings.prices)
        return price.cost(usage) if price is not None else None
