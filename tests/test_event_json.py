"""`wire.event_json` writes an event's params straight from the dataclass: the text must be
exactly what dumping `event_payload`'s dict gives, for every kind of event and envelope."""

from __future__ import annotations

import json
from typing import cast

import pytest

from agentls.events import (
    PLAN_OPTIONS,
    AvailableCommands,
    CommandInfo,
    LoopEvent,
    MessageCompleted,
    Notice,
    PermissionModeChanged,
    PermissionRequest,
    PermissionResolved,
    PlanEvent,
    SessionEvent,
    SubagentCompleted,
    SubagentStarted,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCallEvent,
    ToolCallUpdate,
    TurnCompleted,
    TurnError,
    TurnStarted,
    UsageEvent,
)
from agentls.json_compact import dumps
from agentls.messages import TextBlock, ToolUseBlock
from agentls.tool_values import FileDiff, Location, PlanEntry
from agentls.usage import Usage
from agentls.wire import event_json, event_payload

ODD_TEXT = 'caf\u00e9 \U0001f680 "quoted" \\ back\nslash \x00 \u2028 end'

EVENTS: list[LoopEvent] = [
    TextDeltaEvent("msg_1", "x"),
    TextDeltaEvent("msg_1", ODD_TEXT),
    TextDeltaEvent("msg_1", ""),
    ThinkingDeltaEvent("msg_2", "hmm"),
    PermissionResolved("perm_1", "cancelled"),
    PermissionResolved("perm_1", "selected", "allow_once"),
    PermissionModeChanged("plan"),
    TurnStarted("turn_9", "msg_3"),
    TurnStarted("turn_9", "msg_3", continued=True),
    MessageCompleted(
        "msg_4", "assistant", (TextBlock(ODD_TEXT), ToolUseBlock("t1", "Read", {"a_b": [1, 2.5]}))
    ),
    ToolCallEvent("t1", "Read", "read", "Read a.py", {"file_path": "a.py"}, (Location("/a"),)),
    ToolCallUpdate("t1", "completed", "out", FileDiff("/a", "old", "new"), truncated=False),
    ToolCallUpdate("t1", "in_progress"),
    PlanEvent((PlanEntry("do it", "pending", "high"),)),
    PermissionRequest("perm_1", "t1", "Edit a", {"x": None}, PLAN_OPTIONS, plan="# plan"),
    UsageEvent(1, 2, 3, 4, 5, 6, cost_usd=0.000123),
    Notice("warning", ODD_TEXT, retrying=True, attempt=2, delay=1.5),
    SubagentStarted("agent_1", "t1", "explore", "look"),
    SubagentCompleted("agent_1", "t1", "end_turn", 1, 0, Usage(1, 2), 33, cost_usd=None),
    TurnCompleted("turn_9", "error", 2, Usage(5, 6), TurnError("boom", "it broke", True), 0.5),
    AvailableCommands((CommandInfo("help", "List", None), CommandInfo("x", "y", "[z]", "user"))),
]
ORIGINS: list[tuple[str | None, str | None]] = [(None, None), ("t1", "agent_1"), (None, "agent_2")]


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("turn_id", [None, "turn_1"])
@pytest.mark.parametrize("origin", ORIGINS)
def test_event_json_is_the_text_of_the_payload_dict(
    event: LoopEvent, turn_id: str | None, origin: tuple[str | None, str | None]
) -> None:
    envelope = SessionEvent("sess_\u00e9", 42, turn_id, event, *origin)
    text = event_json(envelope)
    assert text == dumps(event_payload(envelope))
    assert json.loads(text) == event_payload(envelope)


def test_a_delta_whose_text_is_not_text_is_written_field_by_field() -> None:
    odd = TextDeltaEvent("msg_1", cast(str, None))
    envelope = SessionEvent("sess_1", 1, "turn_1", odd)
    assert event_json(envelope) == dumps(event_payload(envelope))
    assert "text" not in json.loads(event_json(envelope))
