"""Compaction steps: snip, microcompact, the boundary, and the summary's way in and out."""

from __future__ import annotations

import re
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentls.context.compaction_steps import (
    COMPACTED_PREFIX,
    SNIP_PREFIX,
    choose_boundary,
    compacted_history,
    microcompact,
    parse_summary,
    shrink_text,
    snip_old_tool_results,
    summary_message,
    summary_request,
)
from agentls.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, user_text
from agentls.pairing import pairing_problems

BIG = "line of output\n" * 200
MARKER = re.compile(r"\[\.\.\. ([\d,]+) characters omitted to save context \.\.\.\]\n")


def ask(text: str, msg_id: str | None = None) -> Message:
    blocks = (TextBlock("<userContext>\n<cwd>/w</cwd>\n</userContext>"), TextBlock(text))
    return Message("user", blocks, msg_id) if msg_id else Message("user", blocks)


def call(call_id: str, name: str = "Read", **args: str) -> Message:
    return Message("assistant", (TextBlock("Let me look."), ToolUseBlock(call_id, name, args)))


def result(call_id: str, content: str = BIG, *, error: bool = False) -> Message:
    return Message("user", (ToolResultBlock(call_id, content, error),))


def answer(text: str = "Done.") -> Message:
    return Message("assistant", (TextBlock(text),))


def turn(n: int) -> list[Message]:
    """One realistic turn: a request, two tool rounds, a final answer."""
    return [
        ask(f"step {n}: fix the bug in src/mod{n}.py"),
        call(f"r{n}", file_path=f"src/mod{n}.py"),
        result(f"r{n}"),
        call(f"b{n}", "Bash", command=f"pytest tests/test_mod{n}.py -q"),
        result(f"b{n}", "1 passed\n" * 50),
        answer(f"Fixed mod{n}."),
    ]


def history(turns: int) -> list[Message]:
    return [m for n in range(turns) for m in turn(n)]


def tokens(message: Message) -> int:
    chars = 0
    for block in message.content:
        if isinstance(block, TextBlock):
            chars += len(block.text)
        elif isinstance(block, ToolResultBlock):
            chars += len(block.content)
        elif isinstance(block, ToolUseBlock):
            chars += len(str(block.input))
    return chars // 4


def results_of(messages: list[Message]) -> list[ToolResultBlock]:
    return [r for m in messages for r in m.tool_results()]


def test_snip_keeps_recent_turns_and_stubs_older_results_naming_tool_and_argument() -> None:
    messages = history(4)
    snipped, stats = snip_old_tool_results(messages, keep_recent_turns=2)
    assert snipped[12:] == messages[12:]
    assert all(a is b for a, b in zip(snipped[12:], messages[12:], strict=True))
    old = results_of(snipped[:12])
    assert all(r.content.startswith(SNIP_PREFIX) for r in old)
    assert old[0].content == (
        f"{SNIP_PREFIX} Read of src/mod0.py, {len(BIG):,} characters. "
        "Call the tool again if you need it.]"
    )
    assert "Bash: pytest tests/test_mod1.py -q" in old[3].content
    assert stats.results_snipped == 4
    before = sum(len(r.content) for r in results_of(messages))
    assert stats.chars_removed == before - sum(len(r.content) for r in results_of(snipped))


def test_snip_keeps_message_ids_and_does_not_touch_the_input() -> None:
    messages = history(3)
    original = list(messages)
    snipped, _ = snip_old_tool_results(messages, keep_recent_turns=1)
    assert [m.id for m in snipped] == [m.id for m in messages]
    assert messages == original


def test_snip_is_idempotent() -> None:
    once, _ = snip_old_tool_results(history(4), keep_recent_turns=1)
    twice, stats = snip_old_tool_results(once, keep_recent_turns=1)
    assert twice == once
    assert stats.results_snipped == 0 and stats.chars_removed == 0


def test_snip_leaves_error_results_and_results_shorter_than_a_stub() -> None:
    messages = [
        ask("go"),
        call("a", "Bash", command="rm -rf build"),
        result("a", "Permission denied by the user. " * 20, error=True),
        call("b", file_path="x.py"),
        result("b", "ok"),
        answer(),
        ask("next"),
    ]
    snipped, stats = snip_old_tool_results(messages, keep_recent_turns=1)
    assert snipped == messages
    assert stats.results_snipped == 0


def test_snip_shortens_a_long_command_to_one_line() -> None:
    command = "python - <<'EOF'\n" + "print('x')\n" * 40 + "EOF"
    messages = [ask("go"), call("a", "Bash", command=command), result("a"), answer(), ask("n")]
    snipped, _ = snip_old_tool_results(messages, keep_recent_turns=1)
    stub = snipped[2].tool_results()[0].content
    assert "\n" not in stub and "Bash: python - <<'EOF' print('x')" in stub and "…" in stub


def test_snip_keeps_pairing_intact() -> None:
    snipped, _ = snip_old_tool_results(history(5), keep_recent_turns=2)
    assert pairing_problems(snipped) == []


def test_microcompact_keeps_head_and_tail_with_marker() -> None:
    lines = "".join(f"line {i:04d}\n" for i in range(2_000))
    messages = [ask("go"), call("a", "Bash", command="seq"), result("a", lines), answer()]
    shrunk, removed = microcompact(messages, max_result_chars=3_000)
    text = shrunk[2].tool_results()[0].content
    assert len(text) <= 3_000
    assert removed == len(lines) - len(text)
    match = MARKER.search(text)
    assert match is not None
    head, tail = text[: match.start()], text[match.end() :]
    assert head.startswith("line 0000\n") and tail.endswith("line 1999\n")
    assert int(match.group(1).replace(",", "")) == len(lines) - len(head) - len(tail)
    assert len(head) > len(tail) > 0
    assert all(re.fullmatch(r"line \d{4}", line) for line in (head + tail).splitlines())
    assert shrunk[2].id == messages[2].id


def test_microcompact_is_idempotent_and_leaves_small_results() -> None:
    messages = [ask("go"), call("a"), result("a", "x" * 10_000), answer()]
    once, removed = microcompact(messages, max_result_chars=1_000)
    assert removed > 0
    twice, again = microcompact(once, max_result_chars=1_000)
    assert twice == once and again == 0
    assert once[:2] == messages[:2] and once[3] is messages[3]


@given(st.text(st.sampled_from("ab\n\u00e9\U0001f600"), max_size=5_000), st.integers(200, 3_000))
def test_shrunk_text_fits_the_limit_and_shrinks_no_further(text: str, limit: int) -> None:
    short = shrink_text(text, limit)
    assert len(short) <= limit
    assert shrink_text(short, limit) == short
    assert short == text or "characters omitted to save context" in short


def test_microcompact_refuses_a_limit_too_small_for_its_marker() -> None:
    with pytest.raises(ValueError):
        microcompact([], max_result_chars=50)


def test_boundary_is_a_real_user_message_not_a_tool_result_message() -> None:
    messages = history(6)
    boundary = choose_boundary(messages, keep_recent_tokens=1_500, estimate=tokens)
    assert boundary is not None and boundary > 0
    assert messages[boundary].role == "user" and not messages[boundary].tool_results()
    assert pairing_problems(messages[:boundary]) == []
    assert pairing_problems(messages[boundary:]) == []


def test_boundary_keeps_the_last_turn_even_when_it_is_too_big() -> None:
    messages = history(3)
    assert choose_boundary(messages, keep_recent_tokens=0, estimate=tokens) == 12


def test_boundary_is_none_with_a_single_turn() -> None:
    assert choose_boundary(turn(0), keep_recent_tokens=0, estimate=tokens) is None
    assert choose_boundary([], keep_recent_tokens=0, estimate=tokens) is None


def test_boundary_is_none_when_everything_fits() -> None:
    assert choose_boundary(history(3), keep_recent_tokens=10**9, estimate=tokens) is None


def test_boundary_keeps_as_many_recent_turns_as_fit() -> None:
    messages = history(6)
    per_turn = sum(tokens(m) for m in turn(0))
    assert choose_boundary(messages, keep_recent_tokens=per_turn * 3, estimate=tokens) == 18
    assert choose_boundary(messages, keep_recent_tokens=per_turn * 3 - 1, estimate=tokens) == 24


def test_summary_request_ends_with_one_user_message_holding_the_sections() -> None:
    before = history(2)
    request = summary_request(before, "Focus on the database migration.")
    assert request[:-1] == before
    assert before[-1].role == "assistant"
    last = request[-1]
    assert last.role == "user" and request[-2].role == "assistant"
    text = last.text()
    for section in (
        "1. Task",
        "2. Decisions and findings",
        "3. Files touched",
        "4. Open questions and next steps",
        "5. The user's latest instructions, verbatim",
        "<summary>",
        "Do NOT call any tools",
        "Focus on the database migration.",
    ):
        assert section in text
    assert pairing_problems(request) == []


def test_summary_request_merges_into_a_trailing_user_message() -> None:
    before = [*history(1), ask("and also rename it", "msg_last")]
    request = summary_request(before, None)
    assert len(request) == len(before)
    last = request[-1]
    assert last.id == "msg_last"
    assert last.content[:2] == before[-1].content
    assert len(last.content) == 3 and "1. Task" in last.text()


def test_summary_request_answers_a_trailing_tool_use() -> None:
    before = [ask("go"), call("a")]
    request = summary_request(before, None)
    assert pairing_problems(request) == []
    assert request[-1].role == "user" and request[-1].tool_results()
    assert "1. Task" in request[-1].text()


def test_parse_summary_with_and_without_tags() -> None:
    assert parse_summary("<analysis>x</analysis>\n<summary>\n 1. Task: y \n</summary>") == (
        "1. Task: y"
    )
    assert parse_summary("  plain summary \n") == "plain summary"
    assert parse_summary("<summary>cut off by max_tokens") == "cut off by max_tokens"
    assert parse_summary("<summary>a </summary> b</summary>") == "a </summary> b"
    assert parse_summary("") is None
    assert parse_summary("<summary>  \n </summary>") is None


def test_summary_message_says_what_happened_and_holds_the_summary() -> None:
    message = summary_message("1. Task: fix the bug", 14)
    assert message.role == "user"
    text = message.text()
    assert text.startswith(f"{COMPACTED_PREFIX} 14 earlier messages were replaced")
    assert "<summary>\n1. Task: fix the bug\n</summary>" in text
    assert "Do not ask the user to repeat" in text


def test_compacted_ten_turn_history_has_no_consecutive_users_and_valid_pairing() -> None:
    messages = history(10)
    boundary = choose_boundary(messages, keep_recent_tokens=2_000, estimate=tokens)
    assert boundary is not None
    kept = messages[boundary:]
    summary = summary_message("1. Task: fix all the bugs", boundary)
    compacted = compacted_history(summary, kept)
    roles = [m.role for m in compacted]
    assert all(not (a == b == "user") for a, b in pairwise(roles))
    assert pairing_problems(compacted) == []
    assert compacted[0].id == kept[0].id
    assert compacted[0].content == (*summary.content, *kept[0].content)
    assert compacted[1:] == kept[1:]


def test_compacted_history_puts_the_summary_first_when_kept_starts_with_the_assistant() -> None:
    summary = summary_message("s", 3)
    kept = [answer("hello")]
    assert compacted_history(summary, kept) == [summary, *kept]
    assert compacted_history(summary, []) == [summary]


def test_compaction_steps_compose_on_a_long_session() -> None:
    messages = [*history(10), user_text("now the next thing")]
    snipped, _ = snip_old_tool_results(messages, keep_recent_turns=3)
    shrunk, _ = microcompact(snipped, max_result_chars=1_000)
    boundary = choose_boundary(shrunk, keep_recent_tokens=1_000, estimate=tokens)
    assert boundary is not None
    request = summary_request(shrunk[:boundary], None)
    assert pairing_problems(request) == []
    compacted = compacted_history(summary_message("s", boundary), shrunk[boundary:])
    assert pairing_problems(compacted) == []
    assert compacted[-1].text() == "now the next thing"
