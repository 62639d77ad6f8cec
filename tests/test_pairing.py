"""The history invariants: every tool_use has exactly one tool_result in the next message, and
a request's roles alternate."""

from __future__ import annotations

from agentls.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, user_text
from agentls.pairing import (
    INTERRUPTED,
    Alternation,
    PairingCheck,
    alternating,
    pairing_problems,
    repair_pairing,
)


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


def _call(n: int) -> list[Message]:
    use = ToolUseBlock(f"toolu_{n}", "Read", {"file_path": "a.py"})
    return [
        Message("assistant", (TextBlock("reading"), use)),
        Message("user", (ToolResultBlock(use.id, "1\tx"),)),
    ]


def test_pairing_check_walks_only_the_new_tail_of_a_growing_history() -> None:
    check = PairingCheck()
    history = [user_text("go")]
    for n in range(30):
        history += _call(n)
        assert check.problems(history) == []
        # The two new messages and the last one kept (paired with the one after it).
        assert check.walked == 3
    assert len(history) == 61


def test_pairing_check_finds_what_a_whole_walk_finds() -> None:
    check = PairingCheck()
    history = [user_text("go"), *_call(0), *_call(1)]
    assert check.problems(history) == pairing_problems(history) == []
    # A tool call whose result is missing after a kept prefix.
    unanswered = [*history, Message("assistant", (ToolUseBlock("toolu_x", "Read", {}),))]
    assert check.problems(unanswered) == pairing_problems(unanswered) != []
    # Found broken, nothing is kept: the next history is walked whole.
    assert check.walked == 2
    orphan = [*history, Message("user", (ToolResultBlock("toolu_gone", "?"),))]
    assert check.problems(orphan) == pairing_problems(orphan) != []
    assert check.walked == len(orphan)
    # A history rewritten in the middle (new objects there) is walked from where it differs.
    rewritten = [history[0], *_call(0), *history[3:]]
    check.problems(history)
    assert check.problems(rewritten) == pairing_problems(rewritten) == []
    assert check.walked == len(rewritten)
    # The kept message that a new one must answer is checked again with it.
    dangling = [*history, Message("assistant", (ToolUseBlock("toolu_y", "Read", {}),))]
    check.problems(history)
    answered_twice = [
        *dangling,
        Message("user", (ToolResultBlock("toolu_y", "1"), ToolResultBlock("toolu_y", "2"))),
    ]
    assert check.problems(answered_twice) == pairing_problems(answered_twice) != []


def test_a_joined_run_is_the_same_object_at_every_call_while_the_history_holds_it() -> None:
    """The request bodies keep each message's JSON by identity: a run joined afresh at every
    call made every request re-encode the history from the join on."""
    alternation = Alternation()
    history = [user_text("first"), user_text("second"), *_call(1)]
    earlier = alternation(history)
    for n in range(2, 5):
        history += [*_call(n)]
        now = alternation(history)
        assert now == alternating(history)
        assert now[0] is earlier[0] and all(
            a is b for a, b in zip(now[: len(earlier)], earlier, strict=True)
        )
        earlier = now
    # A run that changed (here: a third message in a row at the end) is joined again.
    history += [user_text("third"), user_text("fourth")]
    assert alternation(history) == alternating(history)
    rewritten = [user_text("other"), *history[1:]]
    again = alternation(rewritten)
    assert again == alternating(rewritten) and again[0] is not earlier[0]
