"""Sub-agents: a Task call runs a child loop, the same `run_turn` as the session's, in a
context of its own, and returns its report.

The child shares the parent's provider, permission gate and prompter (its permission
requests reach the client like the parent's, tagged with the agent), its workspace and
session data. It gets its own history, transcript (a side file of the session), context
window and usage. Its requests show the parent's tool definitions and static system
prompt, so both share the cached prefix; it may call only its type's tools.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from agentls.context.prompt import SystemPrompt
from agentls.context.window import ContextWindow, overhead_tokens
from agentls.events import (
    LoopEvent,
    SubagentCompleted,
    SubagentStarted,
    ToolCallEvent,
    TurnCompleted,
    TurnStarted,
)
from agentls.loop.run import LoopDeps, QueryState, run_turn
from agentls.messages import Message, TextBlock, new_id
from agentls.redact import Masker
from agentls.session.store import SessionMeta, Transcript
from agentls.subagents.types import AgentType
from agentls.tools.base import SubagentCall, ToolError, ToolOutput
from agentls.tools.registry import ToolRegistry
from agentls.usage import Usage

# Tools a sub-agent never gets: the plan belongs to the main agent.
MAIN_AGENT_ONLY = ("TodoWrite",)
# A child event goes to the client with the agent it came from and the Task call.
ChildEmit = Callable[[LoopEvent, str, str], None]


@dataclass(frozen=True, slots=True)
class SubagentLimits:
    depth: int = 3
    concurrent: int = 20


@dataclass(slots=True)
class SubagentRunner:
    """Runs the sub-agents of one loop (the session's, or a sub-agent's own)."""

    parent: LoopDeps
    types: Mapping[str, AgentType]
    emit: ChildEmit
    # Where children's transcripts go (the session's side folder).
    folder: Path
    slots: asyncio.Semaphore
    limits: SubagentLimits
    masker: Masker
    depth: int = 1

    async def run(self, call: SubagentCall, progress: Callable[[str], None]) -> ToolOutput:
        agent = self.types.get(call.subagent_type)
        if agent is None:
            raise ToolError(f"No agent type {call.subagent_type!r}.")
        agent_id = new_id("agent")
        self.emit(
            SubagentStarted(agent_id, call.tool_call_id, agent.name, call.description),
            agent_id,
            call.tool_call_id,
        )
        started = time.monotonic()
        transcript = Transcript(
            self.folder / f"{agent_id}.jsonl",
            SessionMeta(agent_id, str(self.parent.tool_context.cwd), title=call.description),
            self.masker,
        )
        try:
            async with self.slots:
                state, ended, calls = await self._loop(agent, agent_id, call, transcript, progress)
        except asyncio.CancelledError:
            # The parent was aborted: the child stopped with it (its loop settled itself).
            elapsed = int((time.monotonic() - started) * 1000)
            stopped = SubagentCompleted(
                agent_id, call.tool_call_id, "aborted", 0, 0, Usage(), elapsed
            )
            self.emit(stopped, agent_id, call.tool_call_id)
            raise
        finally:
            transcript.close()
        duration_ms = int((time.monotonic() - started) * 1000)
        self.emit(
            SubagentCompleted(
                agent_id,
                call.tool_call_id,
                ended.stop_reason,
                ended.turns,
                calls,
                ended.usage,
                duration_ms,
            ),
            agent_id,
            call.tool_call_id,
        )
        return _report(agent, agent_id, state.messages, ended, calls, duration_ms)

    async def _loop(
        self,
        agent: AgentType,
        agent_id: str,
        call: SubagentCall,
        transcript: Transcript,
        progress: Callable[[str], None],
    ) -> tuple[QueryState, TurnCompleted, int]:
        deps = self._child_deps(agent, transcript)
        task = Message("user", (TextBlock(call.prompt),))
        state = QueryState(new_id("turn"), [task])
        transcript.record_message(task, state.turn_id)
        ended: TurnCompleted | None = None
        calls = 0
        async for event in run_turn(state, deps):
            if isinstance(event, TurnCompleted):
                ended = event
                continue
            if isinstance(event, TurnStarted):
                continue
            if isinstance(event, ToolCallEvent):
                calls += 1
                progress(f"{event.title}\n")
            self.emit(event, agent_id, call.tool_call_id)
        assert ended is not None  # run_turn always ends with one
        return state, ended, calls

    def _child_deps(self, agent: AgentType, transcript: Transcript) -> LoopDeps:
        parent = self.parent
        nested = self.depth < self.limits.depth
        names = [
            name
            for name in (agent.tools or parent.registry.names())
            if name not in MAIN_AGENT_ONLY and (nested or name != "Task")
        ]
        tools = [tool for tool in (parent.registry.get(n) for n in names) if tool is not None]
        registry = ToolRegistry(tools, shown=parent.registry.specs())
        allowed = ", ".join(t.name for t in tools)
        instructions = (
            f"{agent.instructions}\n\nYou are the {agent.name} agent. Of the tools described, "
            f"you may use only: {allowed}."
        )
        dynamic = "\n\n".join(p for p in (parent.system.dynamic, instructions) if p)
        system = SystemPrompt(parent.system.static, dynamic)
        child = replace(
            parent,
            registry=registry,
            system=system,
            settings=replace(parent.settings, model=agent.model or parent.settings.model),
            abort=asyncio.Event(),
            take_steering=lambda: [],
            journal=transcript,
            context=_window(parent.context, system, registry) if parent.context else None,
        )
        runner = replace(self, parent=child, depth=self.depth + 1) if nested else None
        child.tool_context = replace(parent.tool_context, subagents=runner)
        return child


def _window(parent: ContextWindow, system: SystemPrompt, registry: ToolRegistry) -> ContextWindow:
    """A context window like the parent's, for the child's own history."""
    overhead = overhead_tokens(system.static + system.dynamic, registry.specs())
    return ContextWindow(
        parent.window, overhead, parent.settings, parent.result_budget, parent.spill
    )


def _report(
    agent: AgentType,
    agent_id: str,
    messages: list[Message],
    ended: TurnCompleted,
    calls: int,
    duration_ms: int,
) -> ToolOutput:
    """The Task call's result: the agent's last words, and what the work cost."""
    replies = [m.text().strip() for m in messages if m.role == "assistant" and m.text().strip()]
    report = replies[-1] if replies else "(The agent gave no report.)"
    usage = ended.usage
    tokens = usage.context_tokens
    footer = (
        f"[{agent.name} agent {agent_id}: {ended.stop_reason} after {ended.turns} model calls "
        f"and {calls} tool calls, {tokens:,} tokens, {duration_ms / 1000:.1f} s]"
    )
    failed = ended.stop_reason not in ("end_turn", "max_turns", "budget_exceeded")
    if ended.error is not None:
        footer += f"\n{ended.error.message}"
    return ToolOutput(f"{report}\n\n{footer}", is_error=failed, usage=usage)
