"""TodoWrite: the model keeps a plan of the task, which clients show as it changes.

The whole list is written each time (no patching by index, which models get wrong). The
plan lives in the session's data, so it survives compaction (the summary restates it) and
resume.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentls.tool_values import PlanEntry, PlanPriority, PlanStatus, ToolKind
from agentls.tools.base import ReadOnlyTool, ToolContext, ToolOutput

MAX_ITEMS = 100
_MARKS = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}


class TodoItem(BaseModel):
    content: str = Field(min_length=1, max_length=500, description="What to do, imperative")
    status: PlanStatus = Field(description="pending, in_progress (one at a time) or completed")
    priority: PlanPriority = "medium"


class TodoWriteInput(BaseModel):
    todos: list[TodoItem] = Field(
        max_length=MAX_ITEMS, description="The whole plan, in order; it replaces the last one"
    )


def plan_text(plan: tuple[PlanEntry, ...]) -> str:
    """The plan as a checklist: `[x]` done, `[~]` in progress, `[ ]` pending."""
    return "\n".join(f"{_MARKS[e.status]} {e.content}" for e in plan)


class TodoWriteTool(ReadOnlyTool[TodoWriteInput]):
    """Writes the plan of the task (a checklist) for the user to follow."""

    name: str = "TodoWrite"
    description: str = (
        "Writes your plan for the task as a checklist the user sees, replacing the previous "
        "one. Use it for work of three steps or more: write the plan before you start, mark "
        "one item in_progress when you start it and completed as soon as it is done (not in "
        "batches), and add items you discover. Give every item; the list replaces the last. "
        "Skip it for a single simple step or a question."
    )
    input_model: type[BaseModel] = TodoWriteInput
    kind: ToolKind = "think"

    def title(self, args: TodoWriteInput) -> str:
        done = sum(1 for t in args.todos if t.status == "completed")
        return f"Update the plan ({done}/{len(args.todos)} done)"

    async def run(self, args: TodoWriteInput, ctx: ToolContext) -> ToolOutput:
        plan = tuple(PlanEntry(t.content, t.status, t.priority) for t in args.todos)
        ctx.data.plan = plan
        if not plan:
            return ToolOutput("The plan is now empty.", plan=plan)
        working = sum(1 for e in plan if e.status == "in_progress")
        note = (
            "\nMore than one item is in progress: finish one before starting the next."
            if working > 1
            else ""
        )
        return ToolOutput(f"The plan now reads:\n{plan_text(plan)}{note}", plan=plan)
