"""The loop and the context window: auto and reactive compaction, the circuit breaker,
the tool-result budget, and a byte-stable prompt prefix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentls.context.budget import BudgetThresholds
from agentls.context.results import write_spill_file
from agentls.context.window import CompactionSettings, ContextWindow, overhead_tokens
from agentls.events import Compaction
from agentls.messages import Message, TextBlock, user_text
from agentls.pairing import pairing_problems
from agentls.providers.anthropic import AnthropicProvider
from agentls.providers.openai_compat import OpenAIProvider
from replay_server import (
    ReplayServer,
    anthropic_text_turn,
    fixture_response,
    openai_text_turn,
)
from test_loop import completed, drive, make_deps

SUMMARY = {"text": "<summary>1. Task: answer questions about the notes.</summary>"}


def with_window(deps: Any, window: int, spill_dir: Path | None = None) -> ContextWindow:
    specs = deps.registry.specs()
    context = ContextWindow(
        window,
        overhead_tokens(deps.system.static + deps.system.dynamic, specs),
        CompactionSettings(thresholds=BudgetThresholds()),
        spill=write_spill_file(spill_dir) if spill_dir else None,
    )
    deps.context = context
    return context


def earlier_turn(size: int) -> list[Message]:
    return [user_text("notes: " + "n" * size), Message("assistant", (TextBlock("noted"),))]


async def test_crossing_the_block_level_summarises_before_the_request(tmp_path: Path) -> None:
    deps, provider = make_deps(tmp_path, [SUMMARY, {"text": "answer"}])
    with_window(deps, 8_000)
    history = earlier_turn(24_000)
    state, events = await drive(deps, "and now?", history)
    assert completed(events).stop_reason == "end_turn"
    assert state.transitions == ["auto_compact"]
    (compaction,) = [e for e in events if isinstance(e, Compaction)]
    assert compaction.trigger == "auto" and compaction.tokens_after < compaction.tokens_before
    assert "1. Task: answer questions" in state.messages[0].text()
    assert "n" * 1000 not in "".join(m.text() for m in state.messages)
    assert pairing_problems(state.messages) == []
    assert provider.remaining == 0
    usage = [e for e in events if e.type == "usage"]
    assert len(usage) == 2, "the summary call is a model call and is counted"
    assert completed(events).usage.input_tokens == sum(u.input_tokens for u in usage)


async def test_three_failed_compactions_end_the_turn(tmp_path: Path) -> None:
    tool_instead = {"tool_calls": [{"name": "Glob", "input": {"pattern": "*"}}]}
    deps, provider = make_deps(tmp_path, [tool_instead, tool_instead, tool_instead, {"text": "x"}])
    context = with_window(deps, 8_000)
    _state, events = await drive(deps, "and now?", earlier_turn(24_000))
    end = completed(events)
    assert end.stop_reason == "error" and end.error is not None
    assert end.error.code == "compaction_failed" and "3 times" in end.error.message
    assert provider.remaining == 1
    assert context.failures == 3


async def test_a_huge_tool_result_is_spilled_and_readable(tmp_path: Path) -> None:
    big = "".join(f"line {i:06d} " + "x" * 80 + "\n" for i in range(3000))
    (tmp_path / "big.txt").write_text(big)
    spill_dir = tmp_path / "spill"
    deps, _ = make_deps(
        tmp_path,
        [
            {
                "tool_calls": [
                    {"id": "r1", "name": "Read", "input": {"file_path": "big.txt", "limit": 3000}}
                ]
            },
            {"text": "seen"},
        ],
    )
    deps.tool_context.workspace.policy.roots += (spill_dir,)
    with_window(deps, 1_000_000, spill_dir)
    state, events = await drive(deps)
    assert completed(events).stop_reason == "end_turn"
    stub = state.messages[2].tool_results()[0].content
    assert "<persisted-output>" in stub and len(stub) < 5_000
    spilled = next(spill_dir.iterdir())
    assert str(spilled) in stub
    assert "line 002999" in spilled.read_text()


async def prefilled_reactive(provider: Any, tmp_path: Path, replay: ReplayServer) -> None:
    deps, _ = make_deps(tmp_path, [])
    deps.provider = provider
    with_window(deps, 200_000)
    history = earlier_turn(400) + earlier_turn(400)
    state, events = await drive(deps, "latest question", history)
    assert completed(events).stop_reason == "end_turn"
    assert state.transitions == ["reactive_compact_retry"]
    (compaction,) = [e for e in events if isinstance(e, Compaction)]
    assert compaction.trigger == "reactive"
    assert len(replay.requests) == 3
    summary_request, retried = replay.requests[1].body, replay.requests[2].body
    assert "<summary>" in json.dumps(summary_request["messages"][-1])
    assert len(json.dumps(retried["messages"])) < len(
        json.dumps(replay.requests[0].body["messages"])
    )


async def test_anthropic_prompt_too_long_compacts_once_and_retries(tmp_path: Path) -> None:
    with ReplayServer() as replay:
        replay.enqueue(
            fixture_response("anthropic/07c_http_400_prompt_too_long"),
            anthropic_text_turn("<summary>the notes so far</summary>"),
            anthropic_text_turn("answer"),
        )
        provider = AnthropicProvider("test", replay.base_url)
        await prefilled_reactive(provider, tmp_path, replay)


async def test_openai_context_length_exceeded_compacts_once_and_retries(tmp_path: Path) -> None:
    with ReplayServer() as replay:
        replay.enqueue(
            fixture_response("openai/07b_http_400_context_length"),
            openai_text_turn("<summary>the notes so far</summary>"),
            openai_text_turn("answer"),
        )
        provider = OpenAIProvider("test", replay.openai_base_url)
        await prefilled_reactive(provider, tmp_path, replay)


async def test_a_second_too_long_error_is_surfaced(tmp_path: Path) -> None:
    with ReplayServer() as replay:
        replay.enqueue(
            fixture_response("anthropic/07c_http_400_prompt_too_long"),
            anthropic_text_turn("<summary>s</summary>"),
            fixture_response("anthropic/07c_http_400_prompt_too_long"),
        )
        deps, _ = make_deps(tmp_path, [])
        deps.provider = AnthropicProvider("test", replay.base_url)
        with_window(deps, 200_000)
        _state, events = await drive(deps, "q", earlier_turn(100) + earlier_turn(100))
    end = completed(events)
    assert end.stop_reason == "error" and end.error is not None
    assert end.error.code == "prompt_too_long"
