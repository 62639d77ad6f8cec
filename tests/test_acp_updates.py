"""ACP updates for events ACP has no word for: a discarded attempt's streamed answer."""

from __future__ import annotations

from acp import schema as acp

from agentls.acp.updates import CUT_NOTES, SessionUpdates
from agentls.events import (
    LoopEvent,
    MessageDiscarded,
    SessionEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
)


def _texts(updates: SessionUpdates, *events: LoopEvent, parent: str | None = None) -> list[str]:
    said = []
    for seq, event in enumerate(events):
        for update in updates.updates(SessionEvent("s", seq, "t", event, parent)):
            assert isinstance(update, acp.AgentMessageChunk | acp.AgentThoughtChunk)
            assert isinstance(update.content, acp.TextContentBlock)
            said.append(f"{update.session_update}:{update.content.text}")
    return said


def test_a_retried_answer_is_marked_where_it_broke_off() -> None:
    said = _texts(
        SessionUpdates(),
        TextDeltaEvent("m1", "The port is 80"),
        MessageDiscarded("m1", "retry"),
        TextDeltaEvent("m2", "The port is 8000."),
    )
    assert said == [
        "agent_message_chunk:The port is 80",
        f"agent_message_chunk:\n\n[{CUT_NOTES['retry']}]\n\n",
        "agent_message_chunk:The port is 8000.",
    ]


def test_an_answer_cut_by_an_error_says_so() -> None:
    said = _texts(SessionUpdates(), TextDeltaEvent("m1", "Half"), MessageDiscarded("m1", "error"))
    assert said[-1] == f"agent_message_chunk:\n\n[{CUT_NOTES['error']}]\n\n"


def test_no_note_when_no_answer_text_was_shown() -> None:
    updates = SessionUpdates()
    assert _texts(updates, ThinkingDeltaEvent("m1", "hmm"), MessageDiscarded("m1", "retry")) == [
        "agent_thought_chunk:hmm"
    ]
    nested = [TextDeltaEvent("m2", "sub"), MessageDiscarded("m2", "retry")]
    assert _texts(updates, *nested, parent="task1") == []
    # A message already marked is not marked twice.
    assert _texts(updates, TextDeltaEvent("m3", "x"), MessageDiscarded("m3", "retry"))[-1:] == [
        f"agent_message_chunk:\n\n[{CUT_NOTES['retry']}]\n\n"
    ]
