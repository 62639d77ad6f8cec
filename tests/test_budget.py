"""The token budget: the estimator, window defaults, threshold levels, reported-plus-estimate."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentls.context.budget import (
    BLOCK_OVERHEAD,
    DEFAULT_WINDOW,
    MESSAGE_OVERHEAD,
    BudgetThresholds,
    TokenBudget,
    context_window_for,
    estimate_message_tokens,
    estimate_messages_tokens,
    estimate_tokens,
)
from agentls.messages import (
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    user_text,
)


def test_empty_text_costs_nothing() -> None:
    assert estimate_tokens("") == 0


def test_ascii_costs_about_a_quarter_token_per_character() -> None:
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    prose = "The quick brown fox jumps over the lazy dog. " * 100
    assert estimate_tokens(prose) == len(prose) // 4


def test_non_ascii_costs_more_than_ascii() -> None:
    assert estimate_tokens("漢字" * 100) == 200
    assert estimate_tokens("é" * 8) == 5
    assert estimate_tokens("🙂" * 8) == 11
    assert estimate_tokens("漢" * 40) > estimate_tokens("a" * 40) * 3


def test_a_lone_surrogate_is_estimated_not_an_error() -> None:
    assert estimate_tokens("\ud800") == 1


@given(st.text(), st.text())
def test_appending_text_never_lowers_the_estimate(prefix: str, suffix: str) -> None:
    assert estimate_tokens(prefix + suffix) >= estimate_tokens(prefix)


@given(st.text())
def test_the_estimate_lies_between_a_quarter_and_two_tokens_per_character(text: str) -> None:
    tokens = estimate_tokens(text)
    assert len(text) / 4 <= tokens <= 2 * len(text)


def test_a_message_costs_its_blocks_plus_framing() -> None:
    message = Message(
        "assistant",
        (
            TextBlock("abcd"),
            ThinkingBlock("abcdabcd", signature="s" * 400),
            ToolUseBlock("t1", "Read", {"path": "a.py"}),
        ),
    )
    text, thinking, tool_use = 1, 2, estimate_tokens('Read{"path":"a.py"}')
    expected = MESSAGE_OVERHEAD + 3 * BLOCK_OVERHEAD + text + thinking + tool_use
    assert estimate_message_tokens(message) == expected


def test_a_history_costs_the_sum_of_its_messages() -> None:
    history = [user_text("hello"), Message("user", (ToolResultBlock("t1", "x" * 400),))]
    assert estimate_messages_tokens(history) == sum(estimate_message_tokens(m) for m in history)
    assert estimate_messages_tokens([]) == 0


@pytest.mark.parametrize(
    ("model", "window"),
    [
        ("claude-sonnet-4-5", 200_000),
        ("claude-3-5-haiku-latest", 200_000),
        ("gpt-4.1", 1_047_576),
        ("gpt-4.1-mini", 1_047_576),
        ("gpt-4o", 128_000),
        ("gpt-4o-mini", 128_000),
        ("gpt-4-turbo", 128_000),
        ("o1", 200_000),
        ("o3-mini", 200_000),
        ("o4-mini", 200_000),
        ("gpt-5", 400_000),
        ("gpt-5-mini", 400_000),
        ("deepseek-chat", 128_000),
        ("Qwen/Qwen2.5-Coder-32B-Instruct", 131_072),
        ("meta-llama/Llama-3.1-8B-Instruct", 131_072),
        ("llama3.1:8b", 131_072),
        ("mistral-large", 32_768),
        ("mixtral-8x7b", 32_768),
        ("openai/gpt-4o", 128_000),
        ("some-local-model", DEFAULT_WINDOW),
    ],
)
def test_the_window_table_gives_defaults_by_model_name(model: str, window: int) -> None:
    assert context_window_for(model, None) == window


def test_a_configured_window_wins_over_the_table() -> None:
    assert context_window_for("claude-sonnet-4-5", 50_000) == 50_000
    assert context_window_for("unknown", 1_000_000) == 1_000_000


def test_the_default_thresholds_are_valid() -> None:
    assert BudgetThresholds() == BudgetThresholds(0.60, 0.80, 0.95)
    assert BudgetThresholds(0.1, 0.2, 1.0).block == 1.0


@pytest.mark.parametrize(
    ("warn", "compact", "block"),
    [(0, 0.8, 0.95), (0.8, 0.8, 0.95), (0.6, 0.95, 0.9), (0.6, 0.8, 1.01), (-0.1, 0.5, 0.9)],
)
def test_thresholds_out_of_order_or_range_are_rejected(
    warn: float, compact: float, block: float
) -> None:
    with pytest.raises(ValueError, match="0 < warn < compact < block <= 1"):
        BudgetThresholds(warn, compact, block)


@pytest.mark.parametrize(
    ("tokens", "level"),
    [
        (0, "normal"),
        (599, "normal"),
        (600, "warn"),
        (799, "warn"),
        (800, "compact"),
        (949, "compact"),
        (950, "block"),
        (1_000, "block"),
        (5_000, "block"),
    ],
)
def test_each_level_starts_exactly_at_its_threshold(tokens: int, level: str) -> None:
    budget = TokenBudget(1_000, BudgetThresholds(), overhead_tokens=0)
    assert budget.level(tokens) == level


def test_boundaries_hold_for_a_large_window() -> None:
    budget = TokenBudget(200_000, BudgetThresholds(), overhead_tokens=0)
    assert budget.level(119_800) == "normal"
    assert budget.level(120_000) == "warn"
    assert budget.level(160_000) == "compact"
    assert budget.level(190_000) == "block"
    assert budget.fraction(50_000) == 0.25


def test_a_budget_rejects_a_bad_window_or_overhead() -> None:
    with pytest.raises(ValueError):
        TokenBudget(0, BudgetThresholds(), 0)
    with pytest.raises(ValueError):
        TokenBudget(1_000, BudgetThresholds(), -1)


def history(count: int) -> list[Message]:
    return [user_text("x" * 40) for _ in range(count)]


def test_without_a_report_everything_is_estimated_plus_overhead() -> None:
    budget = TokenBudget(200_000, BudgetThresholds(), overhead_tokens=3_000)
    messages = history(3)
    assert budget.estimate(messages) == 3_000 + estimate_messages_tokens(messages)


def test_a_report_covers_its_messages_and_only_new_ones_are_estimated() -> None:
    budget = TokenBudget(200_000, BudgetThresholds(), overhead_tokens=3_000)
    messages = history(5)
    budget.record_usage(10_000, message_count=3)
    assert budget.estimate(messages[:3]) == 10_000
    assert budget.estimate(messages) == 10_000 + estimate_messages_tokens(messages[3:])


def test_a_newer_report_replaces_the_older_one() -> None:
    budget = TokenBudget(200_000, BudgetThresholds(), overhead_tokens=3_000)
    messages = history(6)
    budget.record_usage(10_000, message_count=3)
    budget.record_usage(12_500, message_count=5)
    assert budget.estimate(messages) == 12_500 + estimate_message_tokens(messages[5])


def test_a_history_shorter_than_the_report_is_fully_estimated() -> None:
    budget = TokenBudget(200_000, BudgetThresholds(), overhead_tokens=3_000)
    budget.record_usage(150_000, message_count=40)
    compacted = history(2)
    assert budget.estimate(compacted) == 3_000 + estimate_messages_tokens(compacted)


def test_reset_after_compaction_estimates_until_the_next_report() -> None:
    budget = TokenBudget(200_000, BudgetThresholds(), overhead_tokens=3_000)
    budget.record_usage(150_000, message_count=2)
    budget.reset_after_compaction()
    messages = history(4)
    assert budget.estimate(messages) == 3_000 + estimate_messages_tokens(messages)
    budget.record_usage(9_000, message_count=4)
    assert budget.estimate(messages) == 9_000
