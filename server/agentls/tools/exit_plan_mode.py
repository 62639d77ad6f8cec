"""ExitPlanMode: in plan mode, the model presents its plan and the user decides.

Approved, the session leaves plan mode (for `default` or `acceptEdits`, the user's choice)
and the same turn goes on to carry the plan out; sent back, the model reads the user's
feedback and keeps planning; rejected, the model is told to stop. Outside plan mode the
call is refused: the tool is offered from the session's first time in plan mode on, so the
tool list (part of the prompt-cache prefix) does not change each time the mode does.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentls.events import PLAN_OPTIONS
from agentls.tool_values import ToolKind
from agentls.tools.base import (
    PlanVerdict,
    ReadOnlyTool,
    ToolContext,
    ToolError,
    ToolOutput,
    UserQuestionCancelled,
    short_title,
)

EXIT_PLAN_MODE = "ExitPlanMode"
FEEDBACK_MARK = "\x00feedback\x00"


class ExitPlanModeInput(BaseModel):
    plan: str = Field(
        min_length=1, description="The plan, in markdown: the steps, the files, how to check"
    )


def verdict_text(verdict: PlanVerdict) -> str:
    """What the model reads for the user's answer."""
    if verdict.choice == "approve":
        return (
            f"The user approved your plan. The session is now in {verdict.mode} mode: carry "
            "the plan out now, step by step."
        )
    if verdict.choice == "keep_planning":
        said = f" They said: {verdict.feedback}" if verdict.feedback else ""
        return (
            "The user did not approve the plan yet and wants you to keep planning (still in "
            f"plan mode: change nothing).{said} Revise the plan, then present it again with "
            f"{EXIT_PLAN_MODE}."
        )
    said = f" They said: {verdict.feedback}" if verdict.feedback else ""
    return (
        f"The user rejected the plan.{said} Do not carry it out and do not present it again: "
        "end your turn now with a one-line acknowledgement, and wait for the user."
    )


class ExitPlanModeTool(ReadOnlyTool[ExitPlanModeInput]):
    """Presents the plan to the user, who approves it, sends it back or rejects it."""

    name: str = EXIT_PLAN_MODE
    description: str = (
        "Only in plan mode: when your research is done, present your plan (markdown) for "
        "the user to approve. Approved, you leave plan mode and carry it out at once; else "
        "you get the user's feedback. Only for a plan of changes to make, not for answering "
        "questions."
    )
    input_model: type[BaseModel] = ExitPlanModeInput
    kind: ToolKind = "other"

    def title(self, args: ExitPlanModeInput) -> str:
        """`Plan: <first line>`."""
        first = args.plan.strip().splitlines()[0].lstrip("# ") if args.plan.strip() else ""
        return short_title("Plan", first)

    async def run(self, args: ExitPlanModeInput, ctx: ToolContext) -> ToolOutput:
        """The user's verdict, after switching the mode when they approved."""
        if ctx.permission_mode() != "plan":
            raise ToolError(
                f"You are not in plan mode (the mode is {ctx.permission_mode()}): there is "
                "no plan to approve. Go on with the task."
            )
        if ctx.switch_mode is None:
            raise ToolError("Only the main agent can present a plan; report it instead.")
        try:
            verdict = await ctx.review_plan(args.plan)
        except UserQuestionCancelled as exc:
            raise ToolError(
                f"The plan could not be shown to the user ({exc}). Stay in plan mode and end "
                "your turn with the plan in your reply."
            ) from exc
        if verdict.choice == "approve" and verdict.mode is not None:
            ctx.switch_mode(verdict.mode)
        return ToolOutput(verdict_text(verdict))


def recorded_answer(result: str) -> tuple[str, str | None]:
    """The option id and feedback of the answer whose `verdict_text` is `result` (what a
    replay answers a plan request with, to get the recorded result again)."""
    for option in PLAN_OPTIONS:
        if result == verdict_text(plan_verdict(option.option_id, None)):
            return option.option_id, None
        # The same words around the feedback: what the sentinel stands in for.
        marked = verdict_text(plan_verdict(option.option_id, FEEDBACK_MARK))
        before, found, after = marked.partition(FEEDBACK_MARK)
        fits = len(result) > len(before) + len(after)
        if found and fits and result.startswith(before) and result.endswith(after):
            return option.option_id, result[len(before) : len(result) - len(after)]
    return "plan_reject", None


def plan_verdict(option_id: str, message: str | None) -> PlanVerdict:
    """The verdict a plan request's answer gives (its options are events.PLAN_OPTIONS)."""
    if option_id == "plan_approve":
        return PlanVerdict("approve", "default")
    if option_id == "plan_approve_accept_edits":
        return PlanVerdict("approve", "acceptEdits")
    if option_id == "plan_keep_planning":
        return PlanVerdict("keep_planning", feedback=message)
    return PlanVerdict("reject", feedback=message)
