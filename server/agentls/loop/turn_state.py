"""What one running turn holds: its state, the parts it drives, where its events go.

`TurnRun` bundles the three (state, deps, emit) that every step of the loop needs, with the
few things every step does to them: append a message to the history, count a model
call's spend, finish or drop a streamed message, make a compacted history the turn's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from agentls.events import (
    Emit,
    MessageCompleted,
    MessageDiscarded,
    TurnError,
    TurnStopReason,
    UsageEvent,
)
from agentls.loop.assemble import AssistantAssembler
from agentls.loop.compaction_run import Compacted, apply_compaction
from agentls.loop.deps import LoopDeps
from agentls.loop.executor import ToolExecutor
from agentls.loop.guards import StuckDetector
from agentls.messages import Message
from agentls.pairing import Alternation, PairingCheck
from agentls.pricing import add_cost
from agentls.usage import Usage

Transition = Literal[
    "next_turn",
    "retry",
    "nudge",
    "steer",
    "stream_error_with_tools",
    "auto_compact",
    "reactive_compact_retry",
    "max_tokens_escalate",
    "max_tokens_continue",
    "output_limit_retry",
    "budget_wrap_up",
    "stuck_nudge",
    "stop_hook_blocking",
]
DiscardReason = Literal["retry", "max_tokens_escalate", "compacted", "error"]


@dataclass(slots=True)
class Inflight:
    """The model call being streamed, and the executor running its tool calls."""

    assembler: AssistantAssembler
    executor: ToolExecutor
    message_appended: bool = False


@dataclass(slots=True)
class QueryState:
    turn_id: str
    messages: list[Message]
    turn_count: int = 0
    nudges: int = 0
    model_errors: int = 0
    # Seconds waited before retries since the last successful model call.
    retry_waited: float = 0.0
    tool_failures: int = 0
    usage: Usage = field(default_factory=Usage)
    # What `usage` cost in dollars; None once a call's (or a sub-agent's) price was unknown.
    cost_usd: float | None = 0.0
    transitions: list[Transition] = field(default_factory=list)
    inflight: Inflight | None = None
    max_tokens_override: int | None = None
    continuations: int = 0
    reactive_tried: bool = False
    output_limit_tried: bool = False
    # The budget is spent: the next model call is the last, with no tool allowed to run.
    wrapping_up: bool = False
    # Tokens of the last request and reply: the prefix the next request sends again.
    last_prompt: int = 0
    stuck: StuckDetector = field(default_factory=lambda: StuckDetector(0))
    # A Stop hook sent the model back to work in this turn (hooks are told, to avoid loops).
    stop_hook_active: bool = False
    # Checks the history's pairing before each model call, walking only what is new, and
    # joins same-role runs for each request, handing back the same joined objects: a
    # session's turns share its own, so that what they keep outlasts each turn.
    pairing: PairingCheck = field(default_factory=PairingCheck)
    alternation: Alternation = field(default_factory=Alternation)


@dataclass(frozen=True, slots=True)
class TurnStop:
    reason: TurnStopReason
    error: TurnError | None = None


@dataclass(frozen=True, slots=True)
class TurnRun:
    """One turn as it runs: what it knows, what it drives, where its events go."""

    state: QueryState
    deps: LoopDeps
    emit: Emit

    def append(self, message: Message) -> None:
        # Journal first: a message that is complete is on disk before anything else happens.
        self.deps.journal.record_message(message, self.state.turn_id)
        self.state.messages.append(message)
        self.emit(MessageCompleted(message.id, message.role, message.content))

    def account(self, usage: Usage) -> None:
        """Count one model call's usage in the turn and report it."""
        if usage == Usage():
            return
        settings = self.deps.settings
        self.state.usage = self.state.usage + usage
        self.state.last_prompt = usage.context_tokens
        self.deps.spend.add(usage)
        cost = settings.price.cost(usage) if settings.price else None
        self.state.cost_usd = add_cost(self.state.cost_usd, cost)
        self.emit(
            UsageEvent(
                usage.input_tokens,
                usage.output_tokens,
                usage.cache_read_tokens,
                usage.cache_write_tokens,
                usage.context_tokens,
                settings.context_window,
                None if cost is None else round(cost, 6),
            )
        )

    def finish_message(self, inflight: Inflight) -> Message:
        """The streamed message, appended to the history once (if it says anything)."""
        message = inflight.assembler.message()
        if message.content and not inflight.message_appended:
            self.append(message)
        inflight.message_appended = True
        return message

    def discard(self, inflight: Inflight | None, reason: DiscardReason) -> None:
        """Tell clients to drop an attempt's streamed text before the model is asked again."""
        if inflight is not None and not inflight.message_appended and inflight.assembler.streamed():
            self.emit(MessageDiscarded(inflight.assembler.message_id, reason))

    async def compacted(self, compacted: Compacted, trigger: Literal["auto", "reactive"]) -> None:
        """Make the compacted history the turn's, count its summary call, tell everyone."""
        self.account(compacted.usage)
        event = apply_compaction(self.state.messages, self.deps, compacted, trigger)
        self.emit(event)
        await self.deps.hooks.compacted(event, self.state.turn_id)

    async def settle_abort(self) -> None:
        """Keep what the model said, and give every dispatched call a result."""
        inflight = self.state.inflight
        self.state.inflight = None
        if inflight is None:
            return
        self.finish_message(inflight)
        results = await inflight.executor.interrupt()
        if results:
            self.append(Message("user", tuple(results)))
