"""AgentSession: one conversation. History, one running turn at a time, a queue behind it.

The session composes small parts, each owning its state: the `Conversation` (history and
the caller's data, as recorded), `SessionEvents` (what goes out, and the books it keeps),
the `Inbox` (what the model has not heard yet), the `TurnIntake` with its queue and the
`TurnRunner` (the turns, one at a time, each to its one end), `PendingAnswers` (the
questions turns ask the user) and the `Toolbox` (tools and MCP servers). Front ends use
the parts directly (`session.answers`, `session.intake`); the session keeps `submit` and
`abort`, which every front end needs. What the loop is given is built in
`loop_deps`; the MCP servers' start and approval in `mcp_wiring`; compaction the user
asks for in `manual_compaction`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from agentls.commands.builtin import standard_catalog
from agentls.config import Settings
from agentls.context.memory import find_memory_files, memory_prompt
from agentls.context.prompt import SubmittedAttachment, system_prompt
from agentls.errors import SessionBusy
from agentls.events import (
    AvailableCommands,
    CommandInfo,
    PermissionModeChanged,
    PlanEvent,
    TurnStopReason,
)
from agentls.hooks.callbacks import LoopCallbacks
from agentls.loop.guards import Budget
from agentls.mcp_servers.servers import McpServers
from agentls.messages import Message
from agentls.names import Delivery, PermissionMode
from agentls.permissions.gate import PermissionGate
from agentls.permissions.remembered import RuleFiles
from agentls.permissions.rules import rules_from
from agentls.plugins.loaded import SessionPlugins
from agentls.providers.base import Provider
from agentls.redact import Masker
from agentls.sandbox import prepare_sandbox
from agentls.session import manual_compaction
from agentls.session.background_notes import BackgroundReports
from agentls.session.checkpoints import CheckpointStore, checkpoints_root
from agentls.session.conversation import Conversation
from agentls.session.events_out import EventOut, EventSink, SessionEvents
from agentls.session.inbox import Inbox
from agentls.session.intake import TurnIntake
from agentls.session.loop_deps import context_window, loop_deps, make_hooks
from agentls.session.mcp_wiring import McpWiring
from agentls.session.mentions import MentionResolver
from agentls.session.permission_answers import PendingAnswers
from agentls.session.skills import SessionSkills
from agentls.session.store import Transcript
from agentls.session.subagents import BackgroundTasks
from agentls.session.toolbox import Toolbox
from agentls.session.turn import Submission
from agentls.session.turn_start import TurnOpening
from agentls.session.turns import TurnRunner
from agentls.session.worktrees import SessionWorktrees
from agentls.subagents.types import agent_types
from agentls.tools.background import BackgroundShells
from agentls.tools.base import SessionData
from agentls.tools.read_cache import FileReadCache
from agentls.tools.registry import ToolRegistry
from agentls.usage import Usage
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
        self.events = SessionEvents(out, transcript, self.conversation)
        self.inbox = Inbox()
        self.answers = PendingAnswers(session_id, self.data, self.conversation.save_state)
        # Where the project's commands, skills, agents and memory file are.
        self.project_root = project_root or cwd
        self._find_extensions(settings.home)
        self.sandbox = prepare_sandbox(settings.sandbox)
        self.toolbox = Toolbox.for_settings(
            workspace, self.agent_types, self.sandbox, settings, self.skills.tool
        )
        # Sub-agents running at once, the session's and its turns' alike.
        self.subagent_slots = asyncio.Semaphore(max(1, settings.max_subagents))
        self.read_cache = FileReadCache()
        # What the model may do without asking, and the rules kept in settings files.
        self.gate = PermissionGate(
            settings.permission_mode,
            rules_from(deny=settings.deny, ask=settings.ask, allow=settings.allow),
            cwd=cwd,
        )
        self.rule_files = RuleFiles(
            self.gate, cwd, settings.home, lambda: self.settings.permission_rules_scope
        )
        # What files held before each turn's writes (agent/rewind, agent/turnDiff).
        self.checkpoints = CheckpointStore(checkpoints_root(transcript.path), settings.home)
        # Isolated agents' git worktrees (Task `isolation: "worktree"`), kept in its folder.
        self.worktrees = SessionWorktrees(transcript.path.with_suffix("") / "worktrees")
        self.memory_files = find_memory_files(project_root or cwd, cwd, settings.home)
        # The memory files' part of the prompt (/context tells what it takes).
        self.memory_text = memory_prompt(self.memory_files)
        # Built once: the system prompt must stay byte-identical for the whole session.
        self.system = system_prompt(settings.append_system_prompt, self.memory_text)
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
            self.plugins.mcp_servers(),
            self.plugin_trust,
        )
        self.intake = TurnIntake(
            session_id, self._turn_runner().run_to_end, self.inbox, self.events
        )
        reports = BackgroundReports(
            self.events, self.inbox, self.intake.queue, self.submit, lambda: self.closing
        )
        self.tasks = BackgroundTasks(reports.task_finished)
        self.shells = BackgroundShells(reports.shell_changed)

    def _find_extensions(self, home: Path) -> None:
        """The session's plugins, agent types, skills and slash commands."""
        # The enabled plugins add commands, agent types, skills, hooks and MCP servers.
        self.plugins = SessionPlugins.load(home)
        self.plugin_trust = self.plugins.trust(home)
        # Sub-agent types the model may start with Task.
        self.agent_types = self.plugins.agent_types(agent_types(self.project_root))
        # Skills: listed to the model by the Skill tool, to the user as `/<name>` commands.
        plugins = self.plugins
        self.skills = SessionSkills.load(
            self.project_root, home, plugins.skills(), plugins.problems
        )
        self.commands = standard_catalog(
            self.project_root, skills=self.skills.commands(), plugins=self.plugins.commands()
        )

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
            MentionResolver(self.workspace, self.cwd, self.settings.home),
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

    @property
    def model(self) -> str:
        return self.settings.resolved_model()

    @property
    def busy(self) -> bool:
        return self.intake.busy

    def submit(
        self,
        text: str,
        *,
        data: Any = None,
        intent: str | None = None,
        attachments: Sequence[SubmittedAttachment] = (),
        delivery: Delivery = "queue",
        budget: Budget | None = None,
    ) -> tuple[str, bool]:
        """Accept a user message; returns its turn id and whether it waits behind another."""
        return self.intake.send(Submission(text, data, intent, attachments, delivery, budget))

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

    def abort(self, turn_id: str | None = None) -> bool:
        """Abort the running turn (and drop queued ones), or one turn by id. Idempotent."""
        aborted = self.intake.abort(turn_id)
        if turn_id is None:
            # Stop means stop: background agents too.
            aborted = aborted or bool(self.tasks.running())
            self.tasks.cancel_all()
        return aborted

    def abandon(self) -> None:
        """Record the running turn's end (aborted) now, without waiting for it to unwind:
        the process is leaving (a second Ctrl-C in `agentls run`)."""
        self.abort()
        self.intake.record_running_aborted()

    def set_permission_mode(self, mode: PermissionMode, turn_id: str | None = None) -> None:
        """Switch mode (the gate decides by it from its next call) and tell the clients;
        `turn_id` is the turn that switched it (an approved plan)."""
        changed = mode != self.gate.mode
        self.gate.mode = mode
        self.settings = replace(self.settings, permission_mode=mode)
        if mode == "plan" and self.toolbox.offer_plan_exit():
            self.context = context_window(self)
        if changed:
            self.events.emit(PermissionModeChanged(mode), turn_id)

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
        await self.intake.queue.settled()
        self.transcript.close()

    async def compact(
        self, instructions: str | None, turn_id: str | None = None
    ) -> tuple[int, int]:
        """Summarise the history now (AgentError when it fails): agent/compact outside
        turns (SessionBusy while one runs), or in `turn_id`, the turn of a /compact."""
        if turn_id is None and self.busy:
            raise SessionBusy(
                f"Session {self.id} is running a turn; compact when it has finished, "
                "or abort it first."
            )
        return await manual_compaction.summarise(
            self.id,
            self.history,
            loop_deps(self, None),
            self.context,
            self.events.emit,
            lambda: self.busy,
            instructions,
            turn_id,
        )
