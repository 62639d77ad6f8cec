"""What the loop checks between steps, besides the turn limit: the turn's budget, and
whether the model is stuck repeating itself.

Both are plain state machines over what the loop already has (usage, messages, results),
so they are tested on their own and the loop only asks them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from agentls.messages import Message, ToolResultBlock, ToolUseBlock
from agentls.pricing import Price
from agentls.usage import Usage

BUDGET_SPENT = "Not run: the task's budget is spent (maxBudgetTokens / maxBudgetUsd)."
WRAP_UP_TEXT = (
    "The budget for this task is spent: this is your last response, and no tool will run. "
    "Do not call tools. Say briefly what you did, what is left undone, and what the user "
    "should do next."
)


@dataclass(frozen=True, slots=True)
class Budget:
    """A turn's spending limit (sub-agents included): tokens of every kind, and dollars."""

    tokens: int | None = None
    usd: float | None = None

    def overrun(
        self, spent: Usage, next_prompt: int, cached: int, price: Price | None
    ) -> str | None:
        """Why the next request (about `next_prompt` tokens, of which `cached` were sent
        before) would take the turn past the budget; None when it fits."""
        if self.tokens is not None:
            projected = spent.context_tokens + next_prompt
            if projected > self.tokens:
                return (
                    f"the turn has used {spent.context_tokens:,} tokens and the next request "
                    f"needs about {next_prompt:,}, over its budget of {self.tokens:,} "
                    "(maxBudgetTokens)"
                )
        if self.usd is not None and price is not None:
            reused = min(cached, next_prompt)
            upcoming = Usage(input_tokens=next_prompt - reused, cache_read_tokens=reused)
            so_far = price.cost(spent)
            if so_far + price.cost(upcoming) > self.usd:
                return (
                    f"the turn has cost ${so_far:.4f} and the next request about "
                    f"${price.cost(upcoming):.4f}, over its budget of ${self.usd:.2f} "
                    "(maxBudgetUsd)"
                )
        return None


Verdict = Literal["nudge", "stop"]


@dataclass(slots=True)
class _Run:
    """The current run of identical steps."""

    key: str = ""
    outcome: str = ""
    count: int = 0
    what: str = ""


class StuckDetector:
    """Notices a model that repeats itself: the same call with the same input failing or
    giving the same result `threshold` times in a row, or the same reply (no tool calls)
    `threshold` times in a row. The first time it says "nudge"; if the model goes on
    repeating after that, "stop". A threshold of 0 turns it off."""

    def __init__(self, threshold: int) -> None:
        self.threshold = threshold
        self.nudged = False
        self._calls = _Run()
        self._replies = _Run()
        self.repeated = ""

    def see_calls(self, message: Message, results: list[ToolResultBlock]) -> Verdict | None:
        """A message with tool calls and their results, in call order."""
        self._replies = _Run()
        by_id = {r.tool_use_id: r for r in results}
        verdict: Verdict | None = None
        for block in message.content:
            if not isinstance(block, ToolUseBlock) or block.id not in by_id:
                continue
            result = by_id[block.id]
            key = block.name + json.dumps(block.input, sort_keys=True, ensure_ascii=False)
            outcome = "error" if result.is_error else result.text()
            run = self._calls
            if run.count and key == run.key and (result.is_error or outcome == run.outcome):
                run.count += 1
            else:
                what = "failing" if result.is_error else "with the same result"
                self._calls = run = _Run(key, outcome, 1, f"{_call_text(block)}, {what}")
            verdict = self._judge(run) or verdict
        return verdict

    def see_reply(self, message: Message) -> Verdict | None:
        """A message without tool calls."""
        self._calls = _Run()
        text = " ".join(message.text().split())
        if not text:
            return None
        run = self._replies
        if run.count and text == run.key:
            run.count += 1
        else:
            shown = text if len(text) <= 80 else text[:77] + "..."
            self._replies = run = _Run(text, text, 1, f"the reply {shown!r}")
        return self._judge(run)

    def nudge_text(self) -> str:
        return (
            f"You have repeated the same step {self.threshold} times in a row "
            f"({self.repeated}). Repeating it will not change the outcome. Try a different "
            "approach, or stop and tell the user what is blocking you."
        )

    def _judge(self, run: _Run) -> Verdict | None:
        if not self.threshold or run.count < self.threshold:
            return None
        self.repeated = f"{run.what}, {run.count} times"
        if not self.nudged:
            self.nudged = True
            return "nudge"
        return "stop"


def _call_text(block: ToolUseBlock) -> str:
    shown = json.dumps(block.input, ensure_ascii=False)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return f"{block.name} {shown}"
