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
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agentls.context.prompt import SystemPrompt
from agentls.context.window import ContextWindow, overhead_tokens
from agentls.events import (
    LoopEvent,
    SubagentCompleted,
    SubagentStarted,
    ToolCallEvent,
    TurnCompleted,
    TurnStarted,
    WorktreeSummary,
)
from agentls.loop.deps import LoopSettings
from agentls.loop.run import LoopDeps, QueryState, run_turn
from agentls.messages import Message, TextBlock, ToolUseBlock, is_id, new_id
from agentls.plural import counted
from agentls.pricing import Price
from agentls.redact import Masker
from agentls.session.records import SessionStarted
from agentls.session.store import SessionMeta, Transcript, load_transcript
from agentls.session.worktree_git import WorktreeGitError
from agentls.session.worktrees import (
    SessionWorktrees,
    WorktreeLease,
    isolated_context,
    summary_text,
    worktree_note,
)
from agentls.subagents.types import AgentType
from agentls.tools.base import SubagentCall, ToolError, ToolOutput
from agentls.tools.registry import ToolRegistry
from agentls.usage import Usage

# Tools a sub-agent never gets: the plan belongs to the main agent, and so do skills
# (a skill narrows the turn's gate, which a sub-agent shares).
MAIN_AGENT_ONLY = ("TodoWrite", "Skill")
# A child event goes to the client with the agent it came from, the Task call, and
# whether it runs in the background (its events then belong to no turn).
ChildEmit = Callable[[LoopEvent, str, str, bool], None]


@dataclass(frozen=True, slots=True)
class SubagentLimits:
    depth: int = 3
    concurrent: int = 20


@dataclass(slots=True)
class TaskRecord:
    """A background sub-agent, as agent/listTasks shows it."""

    agent_id: str
    subagent_type: str
    description: str
    started_at: float
    status: str = "running"
    duration_ms: int | None = None
    task: asyncio.Task[ToolOutput] | None = None


class BackgroundTasks:
    """A session's background sub-agents: started by Task calls, told to the session (and
    so to the model) when they end, stopped on request or when the session closes."""

    def __init__(self, finished: Callable[[TaskRecord, ToolOutput | None], None]) -> None:
        self._finished = finished
        self.records: dict[str, TaskRecord] = {}

    def start(self, record: TaskRecord, work: Coroutine[Any, Any, ToolOutput]) -> None:
        record.task = asyncio.create_task(work)
        self.records[record.agent_id] = record
        record.task.add_done_callback(lambda task: self._done(record, task))

    def _done(self, record: TaskRecord, task: asyncio.Task[ToolOutput]) -> None:
        record.duration_ms = int((time.time() - record.started_at) * 1000)
        if task.cancelled():
            record.status = "stopped"
            self._finished(record, None)
            return
        error = task.exception()
        output = task.result() if error is None else ToolOutput(f"Failed: {error}", True)
        record.status = "failed" if output.is_error else "completed"
        self._finished(record, output)

    def running(self) -> list[TaskRecord]:
        return [r for r in self.records.values() if r.status == "running"]

    async def stop(self, agent_id: str) -> bool:
        """Stop one running background agent; False when it is not running."""
        record = self.records.get(agent_id)
        if record is None or record.task is None or record.task.done():
            return False
        record.task.cancel()
        await asyncio.gather(record.task, return_exceptions=True)
        return True

    async def stop_all(self) -> None:
        for record in self.running():
            await self.stop(record.agent_id)

    def cancel_all(self) -> None:
        """Stop every running background agent without waiting (an abort)."""
        for record in self.running():
            if record.task is not None:
                record.task.cancel()


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
    background: BackgroundTasks
    # The history of the loop this runner serves (what a `fork` agent starts from).
    history: Callable[[], list[Message]]
    depth: int = 1
    # A model's price (the `prices` setting over the table), for an agent on its own model.
    price_of: Callable[[str], Price | None] = lambda _model: None
    # The session's worktrees (Task `isolation: "worktree"`), the turn that runs this loop,
    # and the worktree this loop itself works in (its agents work there too, not isolated).
    worktrees: SessionWorktrees | None = None
    turn_id: str | None = None
    lease: WorktreeLease | None = None

    async def run(self, call: SubagentCall, progress: Callable[[str], None]) -> ToolOutput:
        earlier: list[Message] = []
        agent_id = new_id("agent")
        kind = call.subagent_type
        if call.resume:
            agent_id, kind, earlier = self._resumed(call.resume, call.subagent_type)
        agent = self.types.get(kind)
        if agent is None:
            raise ToolError(f"No agent type {kind!r}.")
        lease = await self._worktree(agent_id, call)
        if not call.background:
            return await self._run_agent(agent, agent_id, call, earlier, progress, False, lease)
        record = TaskRecord(agent_id, agent.name, call.description, time.time())
        work = self._run_agent(agent, agent_id, call, earlier, lambda _text: None, True, lease)
        self.background.start(record, work)
        return ToolOutput(
            f"Started the {agent.name} agent {agent_id} in the background. Go on with other "
            "work: you will be told when it finishes, with its report. (Resume it later "
            f"with resume: {agent_id}.)"
        )

    async def _worktree(self, agent_id: str, call: SubagentCall) -> WorktreeLease | None:
        """The agent's own worktree: made for an isolated call, or the one a resumed agent
        had; None for an agent that works in the session's tree."""
        known = self.worktrees.find(agent_id) if self.worktrees is not None else None
        if call.isolation != "worktree" and known is None:
            return None
        if self.worktrees is None or self.lease is not None:
            raise ToolError(
                'isolation: "worktree" is not available here (an agent that works in a '
                "worktree runs its own agents in that worktree)."
            )
        if known is not None and known.cwd.is_dir():
            return known
        try:
            return await self.worktrees.create(
                self.parent.tool_context.cwd, agent_id, call.description, self.turn_id
            )
        except (WorktreeGitError, OSError) as exc:
            raise ToolError(f'isolation: "worktree" needs a git repository: {exc}') from None

    def _resumed(self, agent_id: str, wanted: str) -> tuple[str, str, list[Message]]:
        """An earlier agent of this session: its id, type and history."""
        if not is_id(agent_id, "agent") or not (self.folder / f"{agent_id}.jsonl").is_file():
            raise ToolError(f"No agent {agent_id[:80]!r} to resume in this session.")
        path = self.folder / f"{agent_id}.jsonl"
        if agent_id in {r.agent_id for r in self.background.running()}:
            raise ToolError(f"Agent {agent_id} is still running; wait for its report.")
        loaded = load_transcript(path)
        kind = str(loaded.overrides.get("subagentType") or wanted)
        return agent_id, kind, loaded.history

    async def _run_agent(
        self,
        agent: AgentType,
        agent_id: str,
        call: SubagentCall,
        earlier: list[Message],
        progress: Callable[[str], None],
        background: bool,
        lease: WorktreeLease | None = None,
    ) -> ToolOutput:
        if lease is None or self.worktrees is None:
            return await self._run_in(agent, agent_id, call, earlier, progress, background, None)
        self.worktrees.running.add(agent_id)
        try:
            return await self._run_in(agent, agent_id, call, earlier, progress, background, lease)
        finally:
            self.worktrees.running.discard(agent_id)

    async def _run_in(
        self,
        agent: AgentType,
        agent_id: str,
        call: SubagentCall,
        earlier: list[Message],
        progress: Callable[[str], None],
        background: bool,
        lease: WorktreeLease | None,
    ) -> ToolOutput:
        def emit(event: LoopEvent) -> None:
            self.emit(event, agent_id, call.tool_call_id, background)

        emit(SubagentStarted(agent_id, call.tool_call_id, agent.name, call.description))
        started = time.monotonic()
        path = self.folder / f"{agent_id}.jsonl"
        meta = SessionMeta(agent_id, str(self.parent.tool_context.cwd), title=call.description)
        first_time = not path.exists()
        transcript = Transcript(path, meta, self.masker)
        if first_time:
            identity = {"subagentType": agent.name, "description": call.description}
            transcript.write(SessionStarted(agent_id, meta.cwd, settings=identity))
        try:
            async with self.slots:
                state, ended, calls = await self._loop(
                    agent, call, earlier, transcript, progress, emit, lease
                )
        except asyncio.CancelledError:
            # The parent was aborted (or the task stopped): the child's loop settled itself.
            elapsed = int((time.monotonic() - started) * 1000)
            emit(SubagentCompleted(agent_id, call.tool_call_id, "aborted", 0, 0, Usage(), elapsed))
            raise
        finally:
            transcript.close()
        worktree, note = await self._settled(lease)
        duration_ms = int((time.monotonic() - started) * 1000)
        emit(
            SubagentCompleted(
                agent_id,
                call.tool_call_id,
                ended.stop_reason,
                ended.turns,
                calls,
                ended.usage,
                duration_ms,
                ended.cost_usd,
                worktree,
            )
        )
        report = _report(agent, agent_id, state.messages, ended, calls, duration_ms)
        return replace(report, content=f"{report.content}\n{note}") if note else report

    async def _settled(self, lease: WorktreeLease | None) -> tuple[WorktreeSummary | None, str]:
        """An isolated agent's changes committed on its branch, summed up for the event and
        the model; (None, "") for an agent that worked in the session's tree."""
        if lease is None or self.worktrees is None:
            return None, ""
        try:
            worktree = await self.worktrees.settle(lease)
        except (WorktreeGitError, OSError) as exc:
            return None, f"[worktree {lease.path}: its changes could not be read: {exc}]"
        return worktree, summary_text(lease, worktree)

    async def _loop(
        self,
        agent: AgentType,
        call: SubagentCall,
        earlier: list[Message],
        transcript: Transcript,
        progress: Callable[[str], None],
        emit: Callable[[LoopEvent], None],
        lease: WorktreeLease | None,
    ) -> tuple[QueryState, TurnCompleted, int]:
        if agent.fork:
            # The parent's history up to this call: the child's first request then repeats
            # the parent's last one byte for byte, and reads it from the cache.
            earlier = _before_call(self.history(), call.tool_call_id)
            for message in earlier:
                transcript.record_message(message, None)
            text = f"{FORK_NOTE}\n\n{call.prompt}"
        else:
            text = call.prompt
        if lease is not None:
            # In the message, not the system prompt: the cached prefix stays the parent's.
            text = f"{worktree_note(lease)}\n\n{text}"
        task = Message("user", (TextBlock(text),))
        state = QueryState(new_id("turn"), [*earlier, task])
        transcript.record_message(task, state.turn_id)
        deps = self._child_deps(agent, transcript, state, lease)
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
            emit(event)
        assert ended is not None  # run_turn always ends with one
        return state, ended, calls

    def _child_deps(
        self,
        agent: AgentType,
        transcript: Transcript,
        state: QueryState,
        lease: WorktreeLease | None,
    ) -> LoopDeps:
        parent = self.parent
        nested = self.depth < self.limits.depth
        names = [
            name
            for name in (agent.tools or parent.registry.names())
            if name not in MAIN_AGENT_ONLY and (nested or name != "Task")
        ]
        tools = [tool for tool in (parent.registry.get(n) for n in names) if tool is not None]
        registry = ToolRegistry(tools, shown=parent.registry.specs())
        system = parent.system
        if not agent.fork:
            # A fork keeps the parent's system prompt whole (its prefix is the cache's);
            # other agents get their instructions after the static part.
            allowed = ", ".join(t.name for t in tools)
            instructions = (
                f"{agent.instructions}\n\nYou are the {agent.name} agent. Of the tools "
                f"described, you may use only: {allowed}."
            )
            dynamic = "\n\n".join(p for p in (parent.system.dynamic, instructions) if p)
            system = SystemPrompt(parent.system.static, dynamic)
        child = replace(
            parent,
            registry=registry,
            system=system,
            settings=self._child_settings(agent),
            abort=asyncio.Event(),
            take_steering=lambda: [],
            journal=transcript,
            context=_window(parent.context, system, registry) if parent.context else None,
            # Its Stop hooks are SubagentStop hooks; the transcript is named by the agent.
            hooks=parent.hooks.for_subagent(transcript.meta.session_id, agent.name),
        )
        context = (
            parent.tool_context if lease is None else isolated_context(parent.tool_context, lease)
        )
        child.tool_context = context
        runner = (
            replace(
                self,
                parent=child,
                depth=self.depth + 1,
                history=lambda: state.messages,
                lease=lease or self.lease,
            )
            if nested
            else None
        )
        # A sub-agent cannot end plan mode: only the main agent presents the plan.
        child.tool_context = replace(context, subagents=runner, switch_mode=None)
        return child

    def _child_settings(self, agent: AgentType) -> LoopSettings:
        """The parent's settings, on the agent's own model (and at its price) if it has one."""
        parent = self.parent.settings
        if agent.model is None or agent.model == parent.model:
            return parent
        return replace(parent, model=agent.model, price=self.price_of(agent.model))


FORK_NOTE = (
    "<fork>You are a fork of the agent whose conversation is above: you know all it knew. "
    "Do only the task below, then answer with a short report; it is all the other agent "
    "sees of your work.</fork>"
)


def _before_call(history: list[Message], tool_call_id: str) -> list[Message]:
    """The history as the model last saw it, without the reply that made this call."""
    messages = list(history)
    if (
        messages
        and messages[-1].role == "assistant"
        and any(isinstance(b, ToolUseBlock) and b.id == tool_call_id for b in messages[-1].content)
    ):
        messages.pop()
    return messages


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
        f"[{agent.name} agent {agent_id}: {ended.stop_reason} after "
        f"{counted(ended.turns, 'model call')} and {counted(calls, 'tool call')}, "
        f"{counted(tokens, 'token')}, {duration_ms / 1000:.1f} s]"
    )
    failed = ended.stop_reason not in ("end_turn", "max_turns", "budget_exceeded")
    if ended.error is not None:
        footer += f"\n{ended.error.message}"
    return ToolOutput(
        f"{report}\n\n{footer}", is_error=failed, usage=usage, cost_usd=ended.cost_usd
    )
