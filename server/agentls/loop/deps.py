"""What a turn needs from outside the loop: settings and the parts it drives, passed in."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from agentls.context.prompt import SystemPrompt
from agentls.context.window import ContextWindow
from agentls.events import Compaction
from agentls.loop.executor import PermissionPrompter
from agentls.messages import Message
from agentls.permissions.gate import PermissionGate
from agentls.providers.base import Provider
from agentls.tools.base import ToolContext
from agentls.tools.registry import ToolRegistry


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
    max_consecutive_errors: int = 3
    read_concurrency: int = 10
    context_window: int = 200_000
    retry_base_delay: float = 0.5
    retry_max_delay: float = 60.0
    # A response cut by max_tokens is asked again once with this cap (when it is higher).
    escalated_max_tokens: int = 32_000
    max_tokens_continuations: int = 3


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
