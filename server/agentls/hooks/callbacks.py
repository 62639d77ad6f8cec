"""In-process hooks for programs that embed agentls's Python API.

    manager = SessionManager(sink, callbacks=LoopCallbacks(on_iteration_complete=record))

Each callback takes one typed value and may be a plain function or a coroutine function.
They run in the loop's task, so they should be quick; an exception in one is logged and
never ends a turn. Sub-agents' loops call them too, with their `agent_id`.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, TypeVar

from agentls.usage import Usage

log = logging.getLogger(__name__)
T = TypeVar("T")
Callback = Callable[[T], Awaitable[None] | None]


@dataclass(frozen=True, slots=True)
class LoopStart:
    """A loop begins a turn (the session's, or a sub-agent's task)."""

    turn_id: str
    model: str
    # Messages in the history the loop starts from, its user message included.
    messages: int
    agent_id: str | None = None


@dataclass(frozen=True, slots=True)
class IterationComplete:
    """One model call and its tool calls are done; the loop goes round again or stops."""

    turn_id: str
    # Model calls made in this turn so far.
    iteration: int
    tool_calls: int
    # Why the loop goes round again (`next_turn`, `stop_hook_blocking`, …), or None.
    transition: str | None
    # Why it stops (`end_turn`, `max_turns`, …), or None when it goes on.
    stop_reason: str | None
    usage: Usage
    agent_id: str | None = None


@dataclass(frozen=True, slots=True)
class ContextCompact:
    """The history was compacted."""

    trigger: Literal["auto", "manual", "reactive"]
    tokens_before: int
    tokens_after: int
    turn_id: str | None = None
    agent_id: str | None = None


@dataclass(frozen=True, slots=True)
class LoopCallbacks:
    on_loop_start: Callback[LoopStart] | None = None
    on_iteration_complete: Callback[IterationComplete] | None = None
    on_context_compact: Callback[ContextCompact] | None = None


async def call_safely(callback: Callback[T] | None, value: T) -> None:
    """Call an embedder's callback (awaiting it when it is async); its failure is logged."""
    if callback is None:
        return
    try:
        result = callback(value)
        if inspect.isawaitable(result):
            await result
    except Exception:
        log.exception("the %s callback failed (the turn goes on)", type(value).__name__)
