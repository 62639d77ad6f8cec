"""One session's context budget: how full the window is, and when to compact.

It remembers what must outlive a single turn: the provider's last reported size, the
warning already given, and consecutive failed compactions (the circuit breaker).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from agentls.context.budget import BudgetThresholds, TokenBudget, estimate_tokens
from agentls.context.results import ResultBudget, Spill, apply_result_budget
from agentls.messages import ToolResultBlock, ToolSpec


@dataclass(frozen=True, slots=True)
class CompactionSettings:
    thresholds: BudgetThresholds = field(default_factory=BudgetThresholds)
    # Snip keeps the tool results of this many recent turns verbatim.
    keep_recent_turns: int = 3
    # Microcompact shrinks any single result above this many characters.
    micro_max_chars: int = 20_000
    # A summary keeps about this many tokens of the most recent turns verbatim.
    keep_recent_tokens: int = 20_000
    max_failures: int = 3


class ContextWindow:
    """The budget of one session's model window, with its compaction state."""

    def __init__(
        self,
        window: int,
        overhead_tokens: int,
        settings: CompactionSettings | None = None,
        result_budget: ResultBudget | None = None,
        spill: Spill | None = None,
    ) -> None:
        self.settings = settings or CompactionSettings()
        self.budget = TokenBudget(window, self.settings.thresholds, overhead_tokens)
        self.result_budget = result_budget or ResultBudget()
        self.spill = spill
        self.failures = 0
        self.warned = False

    @property
    def window(self) -> int:
        return self.budget.window

    def budget_results(self, results: Sequence[ToolResultBlock]) -> list[ToolResultBlock]:
        """Results with oversized ones spilled to files (unchanged when there is no spill)."""
        if self.spill is None:
            return list(results)
        return apply_result_budget(results, self.result_budget, self.spill)

    def compacted(self) -> None:
        """A compaction succeeded: the old count is void and the breaker resets."""
        self.budget.reset_after_compaction()
        self.failures = 0
        self.warned = False


def overhead_tokens(system: str, tools: Sequence[ToolSpec]) -> int:
    """An estimate of what the system prompt and tool definitions occupy."""
    specs = json.dumps(
        [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in tools
        ]
    )
    return estimate_tokens(system) + estimate_tokens(specs)
