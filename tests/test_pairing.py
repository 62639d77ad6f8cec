"""The history invariants: every tool_use has exactly one tool_result in the next message, and
a request's roles alternate."""

from __future__ import annotations

from agentls.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, user_text
from agentls.pairing import INTERRUPTED, alternating, pairing_problems, repair_pairing


def assistant(*calls: str) -> Message:
    return Message("assistant", tuple(ToolUseBlock(c, "Read", {}) for c in calls))


def results(*ids: str) -> Message:
    return Message("user", tuple(ToolResultBlock(i, "ok") for i in ids))


def test_a_paired_history_has_no_problems() -> None:
    history = [user_text("hi"), assistant("a", "b"), results("a", "b")]
    assert pairing_problems(history) == []
    assert repair_pairing(history) == history


def test_a_trailing_tool_use_gets_interrupted_results() -> None:
    history = [user_text("hi"), assistant("a", "b")]
    assert len(pairing_problems(history)) == 2
    repaired = repair_pairing(history)
    assert pairing_problems(repaired) == []
    assert [r.content for r in repaired[-1].tool_results()] == [INTERRUPTED, INTERRUPTED]


def test_a_missing_result_is_added_in_call_order_and_extra_text_kept() -> None:
    partial = Message("user", (ToolResultBlock("b", "ok"), TextBlock("also this")))
    repaired = repair_pairing([user_text("hi"), assistant("a", "b"), partial])
    assert pairing_problems(repaired) == []
    assert [b.tool_use_id for b in repaired[-1].tool_results()] == ["a", "b"]
    assert repaired[-1].text() == "also this"


def test_orphan_and_duplicate_results_are_dropped() -> None:
    history = [user_text("hi"), results("ghost"), assistant("a"), results("a", "a")]
    assert len(pairing_problems(history)) == 2
    repaired = repair_pairing(history)
    assert pairing_problems(repaired) == []
    assert [m.role for m in repaired] == ["user", "assistant", "user"]


def test_a_request_joins_messages_of_one_role_in_a_row() -> None:
    # A failed turn left "first" unanswered; the next turn's message follows it.
    history = [user_text("first"), user_text("second"), assistant("a"), results("a")]
    joined = alternating(history)
    assert [m.role for m in joined] == ["user", "assistant", "user"]
    assert joined[0].content == history[0].content + history[1].content
    assert joined[0].id == history[0].id and joined[1:] == history[2:]
    assert alternating(joined) == joined
