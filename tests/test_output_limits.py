"""Output-token caps: the table, what refusals state, and the loop asking within them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentls.config import load_settings
from agentls.loop.run import QueryState, run_turn
from agentls.messages import user_text
from agentls.output_limits import output_limit_for, stated_output_limit
from agentls.providers.anthropic import AnthropicProvider
from agentls.providers.base import ModelRequest, ProviderError
from agentls.providers.openai_compat import OpenAIProvider
from agentls.providers.openai_request import RequestOptions, build_params, is_reasoning_model
from replay_server import ReplayServer, anthropic_error, openai_error, openai_turn
from test_loop import completed, make_deps

OPENAI_REFUSAL = (
    "max_tokens is too large: 32000. This model supports at most 16384 completion tokens, "
    "whereas you provided 32000."
)
ANTHROPIC_REFUSAL = (
    "max_tokens: 32000 > 8192, which is the maximum allowed number of output tokens for "
    "claude-3-5-haiku-20241022"
)
DEEPSEEK_REFUSAL = "Invalid max_tokens value, the valid range of max_tokens is [1, 8192]"
VLLM_REFUSAL = (
    "'max_tokens' or 'max_completion_tokens' is too large: 32000. This model's maximum "
    "context length is 4096 tokens and your request has 100 input tokens (32000 > 4096 - 100)."
)


@pytest.mark.parametrize(
    ("message", "limit"),
    [
        (OPENAI_REFUSAL, 16384),
        (ANTHROPIC_REFUSAL, 8192),
        (DEEPSEEK_REFUSAL, 8192),
        (VLLM_REFUSAL, 3996),
        ("This model's maximum context length is 4096 tokens. Your messages were long.", None),
        ("rate limited", None),
    ],
)
def test_the_cap_a_refusal_states(message: str, limit: int | None) -> None:
    assert stated_output_limit(message) == limit


@pytest.mark.parametrize(
    ("model", "limit"),
    [
        ("gpt-4o-2024-08-06", 16_384),
        ("openai/gpt-4o-mini", 16_384),
        ("gpt-4.1", 32_768),
        ("claude-3-5-haiku-latest", 8_192),
        ("claude-haiku-4-5", 64_000),
        ("claude-opus-4-1", 32_000),
        ("deepseek-chat", 8_192),
        ("o4-mini", 100_000),
        ("smollm2", None),
    ],
)
def test_the_table_knows_the_common_models(model: str, limit: int | None) -> None:
    assert output_limit_for(model) == limit


def test_the_setting_overrides_the_table(tmp_path: Path) -> None:
    settings = load_settings(tmp_path, {}, {"maxOutputTokens": 4000})
    assert output_limit_for("gpt-4o", settings.max_output_tokens) == 4000


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    with ReplayServer() as replay:
        yield replay


def request(model: str) -> ModelRequest:
    return ModelRequest(model, "system", "", [user_text("hi")], [], max_tokens=32_000)


async def test_provider_errors_carry_the_stated_cap(server: ReplayServer) -> None:
    server.enqueue(
        openai_error(400, "invalid_request_error", OPENAI_REFUSAL, code="invalid_value"),
        openai_error(400, "BadRequestError", VLLM_REFUSAL),
        anthropic_error(400, "invalid_request_error", ANTHROPIC_REFUSAL),
    )
    limits: list[tuple[str, int | None]] = []
    for provider in (
        OpenAIProvider("sk-test-key-123456", server.openai_base_url),
        OpenAIProvider("sk-test-key-123456", server.openai_base_url),
        AnthropicProvider("sk-test-key-123456", server.base_url),
    ):
        try:
            with pytest.raises(ProviderError) as caught:
                [e async for e in provider.stream(request("model-x"))]
        finally:
            await provider.aclose()
        limits.append((caught.value.kind, caught.value.output_limit))
    # vLLM words it as a context-length error; it is the output limit that is wrong.
    assert limits == [
        ("invalid_request", 16384),
        ("invalid_request", 3996),
        ("invalid_request", 8192),
    ]


def asked_max_tokens(log: Path) -> list[int]:
    """The output limit of each model request the scripted provider logged."""
    return [json.loads(line)["max_tokens"] for line in log.read_text().splitlines()]


async def test_a_refused_limit_is_asked_again_once_within_the_stated_cap(
    tmp_path: Path,
) -> None:
    log = tmp_path / "requests.jsonl"
    refusal = {"kind": "invalid_request", "message": OPENAI_REFUSAL, "retryable": False}
    deps, _ = make_deps(
        tmp_path,
        [{"error": {**refusal, "output_limit": 16384}}, {"text": "fine"}],
        request_log=log,
        max_tokens=20_000,
        model="refusing-model-a",
    )
    state = QueryState("turn_1", [user_text("go")])
    events = [e async for e in run_turn(state, deps)]
    assert completed(events).stop_reason == "end_turn"
    assert asked_max_tokens(log) == [20_000, 16_384]
    assert state.transitions == ["output_limit_retry"]
    # The cap is remembered for the model: the next turn starts within it.
    assert output_limit_for("refusing-model-a") == 16_384


async def test_a_second_refusal_ends_the_turn(tmp_path: Path) -> None:
    refusal = {"kind": "invalid_request", "message": "no", "retryable": False}
    deps, _ = make_deps(
        tmp_path,
        [{"error": {**refusal, "output_limit": 9000}}, {"error": {**refusal, "output_limit": 10}}],
        max_tokens=20_000,
        model="refusing-model-b",
    )
    events = [e async for e in run_turn(QueryState("t", [user_text("go")]), deps)]
    end = completed(events)
    assert end.error is not None and end.error.code == "invalid_request"


async def test_escalation_stays_within_the_models_cap(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    cut = {"text": "part", "stop_reason": "max_tokens"}
    deps, _ = make_deps(
        tmp_path, [cut, {"text": "whole"}], request_log=log, max_tokens=8192, output_limit=16_384
    )
    state = QueryState("turn_1", [user_text("go")])
    events = [e async for e in run_turn(state, deps)]
    assert completed(events).stop_reason == "end_turn"
    assert asked_max_tokens(log) == [8192, 16_384]
    [discarded] = [e for e in events if e.type == "message_discarded"]
    assert discarded.reason == "max_tokens_escalate"


async def test_no_escalation_when_the_cap_is_already_asked(tmp_path: Path) -> None:
    cut = {"text": "part", "stop_reason": "max_tokens"}
    deps, _ = make_deps(tmp_path, [cut, {"text": "more"}], max_tokens=8192, output_limit=8192)
    state = QueryState("turn_1", [user_text("go")])
    [e async for e in run_turn(state, deps)]
    assert state.transitions == ["max_tokens_continue"]


async def test_an_escalation_refused_by_a_server_continues_within_its_cap(
    tmp_path: Path, server: ReplayServer
) -> None:
    """The whole path through the real SDK: cut, escalate to 32,000, refused, 3,996."""
    server.enqueue(
        openai_turn(text="Part one", finish_reason="length"),
        openai_error(400, "BadRequestError", VLLM_REFUSAL),
        openai_turn(text="The whole answer."),
    )
    deps, _ = make_deps(tmp_path, [], max_tokens=2048, model="vllm-served-model")
    deps.provider = OpenAIProvider("x", server.openai_base_url)
    state = QueryState("turn_1", [user_text("go")])
    try:
        events = [e async for e in run_turn(state, deps)]
    finally:
        await deps.provider.aclose()
    assert completed(events).stop_reason == "end_turn"
    asked = [r.body["max_tokens"] for r in server.requests]
    assert asked == [2048, 32_000, 3996]
    assert state.transitions == ["max_tokens_escalate", "output_limit_retry"]


# --- OpenAI's reasoning models -------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "reasoning"),
    [
        ("o1", True),
        ("o3-mini", True),
        ("o4-mini", True),
        ("gpt-5-mini", True),
        ("gpt-4o", False),
        ("gpt-4.1", False),
        ("deepseek-reasoner", False),
    ],
)
def test_reasoning_models_get_max_completion_tokens(model: str, reasoning: bool) -> None:
    params = build_params(
        ModelRequest(model, "s", "", [user_text("q")], [], max_tokens=5000),
        options=RequestOptions(reasoning_effort="high"),
    )
    assert is_reasoning_model(model) is reasoning
    field = "max_completion_tokens" if reasoning else "max_tokens"
    other = "max_tokens" if reasoning else "max_completion_tokens"
    assert params[field] == 5000 and other not in params
    assert ("reasoning_effort" in params) is reasoning
    assert "temperature" not in params


def test_settings_turn_off_the_fields_strict_servers_refuse() -> None:
    options = RequestOptions(stream_usage=False, max_tokens_field="max_tokens")
    params = build_params(ModelRequest("o3", "s", "", [user_text("q")], []), options=options)
    assert "stream_options" not in params and "max_completion_tokens" not in params
    assert params["max_tokens"] == 8192


async def test_a_refused_field_names_the_setting_that_stops_it(server: ReplayServer) -> None:
    server.enqueue(
        openai_error(400, "invalid_request_error", "Unrecognized request argument: stream_options")
    )
    provider = OpenAIProvider("x", server.openai_base_url)
    try:
        with pytest.raises(ProviderError) as caught:
            [e async for e in provider.stream(request("old-server-model"))]
    finally:
        await provider.aclose()
    assert "openaiStreamUsage" in caught.value.message


def test_reasoning_settings_are_validated(tmp_path: Path) -> None:
    problems: list[str] = []
    settings = load_settings(
        tmp_path,
        {},
        {
            "reasoningEffort": "huge",
            "openaiStreamUsage": "no",
            "openaiMaxTokensField": "max_tokens",
        },
        problems,
    )
    assert settings.reasoning_effort is None and settings.openai_stream_usage is True
    assert settings.openai_max_tokens_field == "max_tokens"
    assert len(problems) == 2
