"""What a turn needs from outside the loop: settings and the parts it drives, passed in."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from agentls.context.prompt import SystemPrompt
from agentls.context.window import ContextWindow
from agentls.events import Compaction
from agentls.hooks.points import LoopHooks
from agentls.loop.guards import Budget
from agentls.messages import Message
from agentls.permissions.asking import PermissionPrompter
from agentls.permissions.gate import PermissionGate
from agentls.pricing import Price
from agentls.providers.base import Provider
from agentls.tools.base import ToolContext
from agentls.tools.registry import ToolRegistry
from agentls.usage import Usage


class Clock(Protocol):
    async def sleep(self, seconds: float) -> None: ...


class Journal(Protocol):
    """Where complete messages and compactions are persisted, in history order."""

    def record_message(self, message: Message, turn_id: str | None) -> None: ...

    def record_compaction(
        self, history: Sequence[Message], event: Compaction, steps: Sequence[str]
    ) -> None: ...


class NoJournal:
    def record_message(self, message: Message, turn_id: str | None) -> None:
        pass

    def record_compaction(
        self, history: Sequence[Message], event: Compaction, steps: Sequence[str]
    ) -> None:
        pass


class SystemClock:
    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


@dataclass(frozen=True, slots=True)
class LoopSettings:
    model: str
    max_turns: int = 100
    max_tokens: int = 8192
    thinking_budget: int | None = None
    nudge_limit: int = 2
    idle_timeout: float = 300.0
    # Rounds in a row where every tool call failed before the turn stops.
    max_consecutive_errors: int = 3
    read_concurrency: int = 10
    context_window: int = 200_000
    # Retryable model errors (429, 529, 5xx, dropped streams): up to `model_retries` more
    # tries with exponential backoff and jitter, waiting at most `retry_budget` seconds
    # in all (a server's retry-after included).
    model_retries: int = 10
    retry_budget: float = 120.0
    retry_base_delay: float = 1.0
    retry_max_delay: float = 30.0
    # A response cut by max_tokens is asked again once with this cap (when it is higher).
    escalated_max_tokens: int = 32_000
    max_tokens_continuations: int = 3
    # The model's output-token cap (agentls.output_limits); None: unknown, no clamp.
    output_limit: int | None = None
    # Its per-token price (agentls.pricing); None: usage events carry no cost.
    price: Price | None = None
    # The turn's spending limit; when the next call would pass it, one last call wraps up.
    budget: Budget = field(default_factory=Budget)
    # Identical steps in a row before the stuck detector nudges (then stops); 0: off.
    stuck_threshold: int = 3

    def output_tokens(self, wanted: int | None = None) -> int:
        """`wanted` (else `max_tokens`) within the model's output cap."""
        tokens = wanted or self.max_tokens
        return min(tokens, self.output_limit) if self.output_limit else tokens


@dataclass(slots=True)
class Spend:
    """What a turn has spent so far; its sub-agents' loops add to the same object, so the
    turn's budget counts them too."""

    usage: Usage = field(default_factory=Usage)

    def add(self, usage: Usage) -> None:
        self.usage = self.usage + usage


@dataclass(slots=True)
class LoopDeps:
    provider: Provider
    registry: ToolRegistry
    tool_context: ToolContext
    gate: PermissionGate
    prompter: PermissionPrompter
    system: SystemPrompt
    settings: LoopSettings
    abort: asyncio.Event = field(default_factory=asyncio.Event)
    take_steering: Callable[[], list[str]] = field(default=lambda: [])
    clock: Clock = field(default_factory=SystemClock)
    journal: Journal = field(default_factory=NoJournal)
    # Token budget, compaction and the tool-result budget; None turns all three off.
    context: ContextWindow | None = None
    # Shared with the turn's sub-agents (their deps are copies of these).
    spend: Spend = field(default_factory=Spend)
    # User-configured command hooks and an embedder's callbacks (none by default).
    hooks: LoopHooks = field(default_factory=LoopHooks)
