"""The loop's guards on their own: the budget's projection and the stuck detector."""

from __future__ import annotations

from agentls.loop.guards import Budget, StuckDetector
from agentls.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from agentls.pricing import Price
from agentls.usage import Usage


def call(call_id: str, name: str = "Read", path: str = "a.py") -> Message:
    return Message("assistant", (ToolUseBlock(call_id, name, {"file_path": path}),))


def result(call_id: str, text: str, error: bool = False) -> list[ToolResultBlock]:
    return [ToolResultBlock(call_id, text, is_error=error)]


def test_no_budget_never_overruns() -> None:
    assert Budget().overrun(Usage(10**9, 10**9), 10**9, 0, Price(1, 1, 1, 1)) is None


def test_tokens_count_what_was_spent_plus_the_next_prompt() -> None:
    budget = Budget(tokens=1000)
    assert budget.overrun(Usage(400, 100), 500, 0, None) is None
    over = budget.overrun(Usage(400, 100), 501, 0, None)
    assert over is not None and "1,000" in over and "maxBudgetTokens" in over


def test_dollars_count_the_resent_prefix_at_the_cache_price() -> None:
    price = Price(input=10.0, output=10.0, cache_read=1.0, cache_write=0.0)
    budget = Budget(usd=0.02)
    # 1,000 spent tokens cost $0.01; 1,100 next, 1,000 of them cached: $0.001 + $0.001.
    assert budget.overrun(Usage(900, 100), 1100, 1000, price) is None
    assert budget.overrun(Usage(900, 100), 1100, 0, price) is not None
    # Without a price a dollar budget cannot be judged (the session warns about it).
    assert budget.overrun(Usage(900, 100), 10**6, 0, None) is None


def test_the_same_successful_call_is_nudged_at_the_threshold_then_stopped() -> None:
    stuck = StuckDetector(3)
    verdicts = [stuck.see_calls(call(f"c{i}"), result(f"c{i}", "same")) for i in range(5)]
    assert verdicts == [None, None, "nudge", "stop", "stop"]
    assert "Read" in stuck.repeated and "4 times" not in stuck.nudge_text()


def test_a_different_result_or_input_breaks_the_run() -> None:
    stuck = StuckDetector(3)
    assert stuck.see_calls(call("a"), result("a", "one")) is None
    assert stuck.see_calls(call("b"), result("b", "two")) is None
    assert stuck.see_calls(call("c", path="b.py"), result("c", "two")) is None
    assert stuck.see_calls(call("d", path="b.py"), result("d", "two")) is None
    assert stuck.see_calls(call("e", path="b.py"), result("e", "two")) == "nudge"


def test_failing_calls_count_whatever_their_errors_say() -> None:
    stuck = StuckDetector(2)
    assert stuck.see_calls(call("a"), result("a", "timeout 1", error=True)) is None
    assert stuck.see_calls(call("b"), result("b", "timeout 2", error=True)) == "nudge"
    assert "failing" in stuck.repeated


def test_the_same_reply_repeated_is_caught_and_whitespace_does_not_hide_it() -> None:
    stuck = StuckDetector(3)
    replies = ["I will fix it now.", "I will  fix it now.\n", "I will fix it now."]
    verdicts = [stuck.see_reply(Message("assistant", (TextBlock(t),))) for t in replies]
    assert verdicts == [None, None, "nudge"]
    assert "the reply 'I will fix it now.'" in stuck.repeated


def test_a_threshold_of_zero_turns_the_detector_off() -> None:
    stuck = StuckDetector(0)
    assert all(stuck.see_calls(call(f"c{i}"), result(f"c{i}", "x")) is None for i in range(9))
