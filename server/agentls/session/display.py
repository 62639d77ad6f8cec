"""What a conversation shows a client: its messages, and the turn each user message began.

A client that shows a resumed (or forked, or paged-in) history offers Rewind and Changes
on the messages the user wrote; both requests name a turn, so each user message that
opened a turn carries that turn's id (the transcript records every message's turn).
A reply's tool calls are announced again as they were when they ran (title, kind and
places, from the session's tools), so a resumed chat's cards read as the live ones did.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentls import api
from agentls.events import ToolCallEvent
from agentls.loop.executor import recorded_call_event
from agentls.messages import Message
from agentls.tools.registry import ToolRegistry


@dataclass(frozen=True, slots=True)
class DisplayHistory:
    """Messages as a client shows them, oldest first."""

    messages: list[Message]
    # The user messages that began a turn: message id -> the turn's id.
    turn_starts: dict[str, str] = field(default_factory=dict)

    def turn_of(self, message: Message) -> str | None:
        """The turn `message` began, when it began one."""
        return self.turn_starts.get(message.id)


def first_of_turn(turns: Sequence[str | None]) -> list[bool]:
    """For each position of a display's turn ids: whether its turn begins there."""
    seen: set[str] = set()
    firsts = []
    for turn in turns:
        firsts.append(turn is not None and turn not in seen)
        if turn is not None:
            seen.add(turn)
    return firsts


def turn_starts(
    messages: Sequence[Message | None], turns: Sequence[str | None], firsts: Sequence[bool]
) -> dict[str, str]:
    """The user messages among `messages` that began their turn (`turns` and `firsts` run
    beside them): message id -> turn id."""
    starts: dict[str, str] = {}
    for message, turn, first in zip(messages, turns, firsts, strict=True):
        if message is not None and turn is not None and first and message.role == "user":
            starts[message.id] = turn
    return starts


def display_calls(
    message: Message, registry: ToolRegistry, cwd: Path
) -> list[api.DisplayToolCall] | None:
    """How each tool_use block of a reply was announced when it ran (in the blocks' order);
    None when it has none."""
    if message.role != "assistant":
        return None
    calls = [recorded_call_event(registry, block, cwd) for block in message.tool_uses()]
    return [_display_call(call) for call in calls] or None


def _display_call(call: ToolCallEvent) -> api.DisplayToolCall:
    # Built from checked values without validating them again (a third of the cost).
    places = call.locations
    return api.DisplayToolCall.model_construct(
        tool_call_id=call.tool_call_id,
        kind=call.kind,
        title=call.title,
        locations=None
        if places is None
        else [api.DisplayLocation.model_construct(path=at.path, line=at.line) for at in places],
    )
