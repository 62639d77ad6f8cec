"""What a session gives the agent loop: its tools, context window, hooks and LoopDeps.

Everything here is derived from the session's settings and state when a turn (or a manual
compaction) starts, so building it is kept apart from the session's own book-keeping.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Protocol

from agentls.config import Settings, project_settings_file
from agentls.context.budget import context_window_for
from agentls.context.prompt import SystemPrompt
from agentls.context.results import write_spill_file
from agentls.context.window import ContextWindow, overhead_tokens
from agentls.events import Notice
from agentls.hooks.callbacks import LoopCallbacks
from agentls.hooks.config import parse_hooks
from agentls.hooks.points import LoopHooks, command_hooks
from agentls.loop.guards import Budget
from agentls.loop.run import LoopDeps, LoopSettings
from agentls.messages import Message
from agentls.names import PermissionMode
from agentls.output_limits import output_limit_for
from agentls.permissions.asking import PermissionPrompter
from agentls.permissions.gate import PermissionGate
from agentls.permissions.inline_edit import InlineEditGate
from agentls.permissions.plugin_trust import PluginTrust
from agentls.permissions.scoped import TurnGate
from agentls.plugins.loaded import SessionPlugins
from agentls.pricing import price_for
from agentls.providers.base import Provider
from agentls.redact import Masker
from agentls.sandbox import READ_ONLY_WRITES, Sandbox
from agentls.session.checkpoints import CheckpointStore
from agentls.session.events_out import SessionEvents
from agentls.session.inbox import Inbox
from agentls.session.inline_turn import inline_registry
from agentls.session.skills import SessionSkills
from agentls.session.store import Transcript
from agentls.session.subagents import BackgroundTasks, SubagentLimits, SubagentRunner
from agentls.session.toolbox import Toolbox
from agentls.session.turn import Turn
from agentls.session.worktrees import SessionWorktrees
from agentls.subagents.types import AgentType
from agentls.tools.background import BackgroundShells
from agentls.tools.base import SessionData, ToolContext
from agentls.tools.read_cache import FileReadCache
from agentls.tools.registry import ToolRegistry
from agentls.workspace.view import WorkspaceView

log = logging.getLogger(__name__)


class SessionParts(Protocol):
    """The parts of a session that the loop's deps are built from (AgentSession has them)."""

    id: str
    cwd: Path
    settings: Settings
    provider: Provider
    workspace: WorkspaceView
    transcript: Transcript
    system: SystemPrompt
    context: ContextWindow
    hooks: LoopHooks
    gate: PermissionGate
    read_cache: FileReadCache
    checkpoints: CheckpointStore
    shells: BackgroundShells
    tasks: BackgroundTasks
    toolbox: Toolbox
    inbox: Inbox
    events: SessionEvents
    masker: Masker
    agent_types: list[AgentType]
    subagent_slots: asyncio.Semaphore
    skills: SessionSkills
    plugins: SessionPlugins
    plugin_trust: PluginTrust
    worktrees: SessionWorktrees
    sandbox: Sandbox

    @property
    def answers(self) -> PermissionPrompter: ...

    def set_permission_mode(self, mode: PermissionMode, turn_id: str | None = None) -> None: ...

    @property
    def model(self) -> str: ...

    @property
    def registry(self) -> ToolRegistry: ...

    @property
    def history(self) -> list[Message]: ...

    @property
    def data(self) -> SessionData: ...


def context_window(session: SessionParts) -> ContextWindow:
    """The current model's window, less what the system prompt and tool specs take."""
    window = context_window_for(session.model, session.settings.context_window)
    prompt = session.system.static + session.system.dynamic
    spill = write_spill_file(session.transcript.spill_dir)
    return ContextWindow(window, overhead_tokens(prompt, session.registry.specs()), spill=spill)


def make_hooks(session: SessionParts, callbacks: LoopCallbacks) -> LoopHooks:
    """The session's hooks: those the settings configure, and an embedder's callbacks."""
    problems: list[str] = []
    project = str(project_settings_file(session.cwd))
    config = parse_hooks(session.settings.hook_layers, project, problems)
    config = session.plugins.add_hooks(config, problems)
    for problem in problems:
        log.warning("settings: %s", problem)
    commands = command_hooks(
        config,
        session.id,
        session.transcript.path,
        session.cwd,
        session.settings.home,
        lambda: session.gate.mode,
        session.plugin_trust,
    )
    return LoopHooks(commands, callbacks)


def loop_deps(session: SessionParts, turn: Turn | None) -> LoopDeps:
    """What the loop needs for `turn` (None: a manual compaction outside turns)."""
    _sync_mcp_tools(session)
    settings = session.settings
    context = ToolContext(
        session.workspace, session.read_cache, session.cwd, data=session.data, shells=session.shells
    )
    context.permission_mode = lambda: session.gate.mode
    if session.sandbox.mode == "read-only":
        context.file_writes_refused = READ_ONLY_WRITES
    if turn is not None:
        # An approved plan switches the session's mode, announced in its turn.
        context.switch_mode = lambda mode: session.set_permission_mode(mode, turn.turn_id)
    if settings.editor_diagnostics:
        context.diagnostics_wait = settings.diagnostics_wait
    if turn is not None:
        context.checkpoints = session.checkpoints.for_turn(
            turn.turn_id, session.workspace, session.cwd
        )
    model = (turn.model if turn is not None else None) or session.model
    gate = session.gate
    if turn is not None:
        _start_skill(session, turn)
    if turn is not None and (turn.allowed or session.skills.tool is not None):
        gate = TurnGate(session.gate, turn.allowed, cwd=session.cwd, skill=session.skills.active)
    registry = session.registry
    if turn is not None and turn.inline_edit is not None:
        registry = inline_registry(registry)
        gate = InlineEditGate(session.gate, cwd=session.cwd)
    deps = LoopDeps(
        provider=session.provider,
        registry=registry,
        tool_context=context,
        gate=gate,
        prompter=session.answers,
        system=session.system,
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
            context_window=session.context.window,
            budget=(turn.budget if turn is not None else None)
            or Budget(settings.max_budget_tokens, settings.max_budget_usd),
            stuck_threshold=settings.stuck_threshold,
        ),
        abort=turn.abort if turn is not None else asyncio.Event(),
        take_steering=session.inbox.take_for_step,
        journal=session.transcript,
        context=session.context,
        hooks=session.hooks,
    )
    if turn is not None and settings.subagent_depth > 0:
        deps.tool_context.subagents = SubagentRunner(
            deps,
            {t.name: t for t in session.agent_types},
            lambda event, agent_id, call_id, background: session.events.send(
                event, None if background else turn, (call_id, agent_id)
            ),
            session.transcript.path.with_suffix("") / "agents",
            session.subagent_slots,
            SubagentLimits(settings.subagent_depth, settings.max_subagents),
            session.masker,
            session.tasks,
            lambda: session.history,
            price_of=lambda model: price_for(model, settings.prices),
            worktrees=session.worktrees,
            turn_id=turn.turn_id,
        )
    return deps


def _start_skill(session: SessionParts, turn: Turn) -> None:
    """A turn starts in its command's skill or in none; the skills' problems are told in
    the session's first turn (after its user message), once."""
    found, active = session.skills.found, session.skills.active
    skill = found.find(turn.skill) if turn.skill else None
    if skill is not None:
        active.start(skill.name, skill.allowed)
    else:
        active.end()
    for problem in found.untold_problems():
        session.events.send(Notice("warning", problem), turn)


def _sync_mcp_tools(session: SessionParts) -> None:
    """Take the MCP servers' tools when their set changed (between turns' calls)."""
    if session.toolbox.refresh():
        session.context = context_window(session)
