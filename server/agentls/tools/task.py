"""Task: hand a self-contained piece of work to a sub-agent, which runs its own loop in a
fresh context and returns only its report.

The tool itself only validates and describes; the session's sub-agent runner
(ToolContext.subagents) runs the child loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from agentls.subagents.types import AgentType
from agentls.tool_values import ToolKind
from agentls.tools.base import SubagentCall, Tool, ToolContext, ToolError, ToolOutput

# What the model is told of `isolation` (the benchmark measures what it adds to requests).
ISOLATION_GUIDE = (
    ' isolation: "worktree" runs the agent in its own git worktree and branch, made from the '
    "last commit (without uncommitted changes): it changes files there, at once with other "
    "such agents, never in the user's tree; you get its diff summary, the user merges it."
)


class TaskInput(BaseModel):
    description: str = Field(min_length=1, max_length=200, description="A 3-7 word summary")
    prompt: str = Field(
        min_length=1,
        description="The whole task for the agent: it sees nothing of this conversation",
    )
    subagent_type: str = Field(default="general", description="Which type of agent runs it")
    run_in_background: bool = Field(
        default=False,
        description="Return at once and go on; you are told with its report when it ends",
    )
    resume: str | None = Field(
        default=None, description="An earlier agent's id (agent_...) to continue, with its history"
    )
    isolation: Literal["worktree"] | None = Field(
        default=None,
        description="worktree: in its own git worktree and branch",
    )


class TaskTool(Tool[TaskInput]):
    """Runs a sub-agent of one of the session's types."""

    name: str = "Task"
    input_model: type[BaseModel] = TaskInput
    kind: ToolKind = "think"
    # Every call the agent makes meets the permission gate: the Task call itself asks only
    # when a rule says so (`Task(general)`), even for agents that write.
    calls_are_gated: bool = True

    def __init__(self, types: Sequence[AgentType]) -> None:
        self.types = {t.name: t for t in types}
        listed = "\n".join(f"- {t.name}: {t.description}" for t in types)
        self.description = (
            "Hands a self-contained task to a sub-agent that works in a fresh context with "
            "its own tools and returns only its final report (with the tokens, tool calls "
            "and time it took). Use it for searches across many files, research, or a "
            "well-defined change, so that your own context keeps only the result. The agent "
            "sees nothing of this conversation: put everything it needs in `prompt`, and say "
            "what the report should contain. Several Task calls in one message run at once "
            "when their agents only read. With run_in_background the call returns at once "
            "and you are told when the agent ends; resume continues an earlier agent."
            f"{ISOLATION_GUIDE}"
            f"\nAgent types (subagent_type):\n{listed}"
        )

    def is_read_only(self, args: TaskInput) -> bool:
        """Agents that only read run concurrently, and so do isolated ones (they write only
        in their own worktree); the others take the write lane."""
        agent = self.types.get(args.subagent_type)
        # A background agent returns at once; its own calls take their own lanes.
        isolated = args.isolation == "worktree"
        return args.run_in_background or isolated or (agent is not None and not agent.writes)

    def title(self, args: TaskInput) -> str:
        return f"{args.subagent_type} agent: {args.description}"

    def rule_content(self, args: TaskInput, cwd: Path) -> str | None:
        """Rules match the agent type, e.g. `Task(explore)`."""
        return args.subagent_type

    async def run(self, args: TaskInput, ctx: ToolContext) -> ToolOutput:
        if args.subagent_type not in self.types:
            raise ToolError(
                f"No agent type {args.subagent_type!r}; use one of {', '.join(self.types)}."
            )
        if ctx.subagents is None:
            raise ToolError("Sub-agents cannot run here (the nesting limit is reached).")
        call = SubagentCall(
            args.description,
            args.prompt,
            args.subagent_type,
            ctx.tool_call_id,
            background=args.run_in_background,
            resume=args.resume,
            isolation=args.isolation,
        )
        return await ctx.subagents.run(call, ctx.progress)
