"""AskUser: the model asks the user a question and waits for the answer (with choices,
or free text). Not a data tool: it covers the gap no tool can, a decision only the user can
make."""

from __future__ import annotations

import json

from pydantic import BaseModel, Field

from agentls.tool_values import ToolKind
from agentls.tools.base import (
    ReadOnlyTool,
    ToolContext,
    ToolError,
    ToolOutput,
    UserQuestionCancelled,
    short_title,
)


class AskUserInput(BaseModel):
    question: str = Field(min_length=1, description="One clear, self-contained question")
    choices: list[str] | None = Field(
        default=None, description="Answers to offer, when the answer is one of a few options"
    )


def _answer_text(answer: str, choices: list[str] | None) -> str:
    if not answer.strip():
        return "The user answered with an empty reply."
    text = f"The user answered: {answer}"
    offered = {choice.strip().casefold() for choice in choices or []}
    if offered and answer.strip().casefold() not in offered:
        listed = ", ".join(json.dumps(choice, ensure_ascii=False) for choice in choices or [])
        text += f"\n(That is not one of the offered choices ({listed}); they typed it.)"
    return text


class AskUserTool(ReadOnlyTool[AskUserInput]):
    """Asks the user a question and waits for the answer."""

    name: str = "AskUser"
    description: str = (
        "Asks the user a question and waits for the answer; returns "
        '"The user answered: …". Use it only when the task cannot continue without the '
        "user's input: a decision only they can make, or information that is not in the "
        "structured data, the workspace or the conversation. Otherwise make a reasonable "
        "assumption and say so. Ask one clear, self-contained question; pass choices when "
        "the answer is one of a few options (the user may still type something else). "
        "Fails when the question is cancelled (the turn was aborted, or the client cannot "
        "ask questions)."
    )
    input_model: type[BaseModel] = AskUserInput
    kind: ToolKind = "other"

    def title(self, args: AskUserInput) -> str:
        """`Ask the user: <question>`."""
        return short_title("Ask the user", args.question)

    async def run(self, args: AskUserInput, ctx: ToolContext) -> ToolOutput:
        """The user's answer, or a ToolError when the question was cancelled."""
        choices = args.choices or None
        try:
            answer = await ctx.ask_user(args.question, choices)
        except UserQuestionCancelled as exc:
            reason = str(exc) or "no reason given"
            raise ToolError(
                f"The question was cancelled ({reason}). Continue without the answer if you "
                "can, or stop and say what you need from the user."
            ) from exc
        return ToolOutput(_answer_text(answer, choices))
