"""The quirks of real third-party model servers, replayed from streams captured from them.

Each fixture in `tests/fixtures/servers/` was recorded from a real server on this machine
(see its `sources`); each test names the quirk it pins. The live servers themselves are
driven end to end in `test_e2e_real_servers.py`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from agentls.loop.assemble import AssistantAssembler, ToolCallReady
from agentls.messages import Message, ToolResultBlock, ToolSpec, ToolUseBlock, user_text
from agentls.providers.anthropic import AnthropicProvider
from agentls.providers.base import ModelInfo, ModelRequest, ProviderError, StreamEvent
from agentls.providers.catalog import ModelCatalog, ModelListUnavailable
from agentls.providers.openai_compat import OpenAIProvider
from replay_server import (
    ReplayServer,
    ScriptedResponse,
    ToolCall,
    collect,
    fixture_response,
    load_fixture,
    openai_error,
    openai_tool_turn,
)

READ_TOOL = ToolSpec(
    "Read",
    "Read a file",
    {"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]},
)


def request(messages: list[Message] | None = None) -> ModelRequest:
    return ModelRequest(
        model="smollm2",
        system_static="You are a coding agent.",
        system_dynamic="",
        messages=messages or [user_text("Read the file README.md")],
        tools=[READ_TOOL],
        max_tokens=200,
    )


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    with ReplayServer() as replay:
        yield replay


async def stream(provider: OpenAIProvider | AnthropicProvider) -> list[StreamEvent]:
    try:
        return [event async for event in provider.stream(request())]
    finally:
        await provider.aclose()


def openai(server: ReplayServer, api_key: str = "x") -> OpenAIProvider:
    return OpenAIProvider(api_key=api_key, base_url=server.openai_base_url)


def anthropic(server: ReplayServer) -> AnthropicProvider:
    return AnthropicProvider(api_key="sk-litellm-local-key", base_url=server.base_url)


def fragments(fixture: dict[str, Any]) -> str:
    """The tool input as the server split it: every input_json_delta joined."""
    joined = ""
    for frame in fixture["response"]["sse_events"]:
        data = json.loads(frame["data"])
        if data.get("delta", {}).get("type") == "input_json_delta":
            joined += data["delta"]["partial_json"]
    return joined


# --- llama.cpp (llama-cpp-python's OpenAI-compatible server) ---------------------------


@pytest.mark.parametrize("split", [None, 7], ids=["whole", "split7"])
async def test_llamacpp_fragments_that_repeat_the_id_and_name_are_one_call(
    server: ReplayServer, split: int | None
) -> None:
    server.enqueue(fixture_response("servers/llamacpp_01_tool_call_fragments", split=split))
    folded = collect(await stream(openai(server)))
    [call] = folded.content
    assert call["type"] == "tool_use" and call["name"] == "Read"
    assert call["id"].startswith("call__0_Read_")
    assert set(call["input"]) == {"file_path"}
    assert folded.stop_reason == "tool_use"
    # It sends no usage chunk, though `stream_options.include_usage` was asked for.
    assert folded.usage is None


async def test_llamacpp_text_after_a_tool_result(server: ReplayServer) -> None:
    server.enqueue(fixture_response("servers/llamacpp_02_text_after_tool_result"))
    folded = collect(await stream(openai(server)))
    assert folded.text().strip()
    assert folded.stop_reason == "end_turn"


async def test_llamacpp_refuses_null_content_and_we_never_send_it(server: ReplayServer) -> None:
    server.enqueue(fixture_response("servers/llamacpp_03_http_500_null_content"))
    with pytest.raises(ProviderError) as caught:
        await stream(openai(server))
    assert caught.value.status == 500 and "validation errors" in caught.value.message
    # What agentls sends for the same history: a string, so the refusal cannot happen.
    server.enqueue(openai_tool_turn(ToolCall("call_2", "Read", {"file_path": "b"})))
    history = [
        user_text("Read the file README.md"),
        Message("assistant", (ToolUseBlock("call_1", "Read", {"file_path": "README.md"}),)),
        Message("user", (ToolResultBlock("call_1", "# Hello"),)),
    ]
    provider = openai(server)
    try:
        [event async for event in provider.stream(request(history))]
    finally:
        await provider.aclose()
    sent = server.requests[-1].body["messages"]
    assistant = next(m for m in sent if m["role"] == "assistant")
    assert assistant["content"] == "" and assistant["tool_calls"][0]["id"] == "call_1"


# --- LiteLLM's Anthropic endpoint ----------------------------------------------------


@pytest.mark.parametrize("split", [None, 7], ids=["whole", "split7"])
async def test_litellm_blocks_that_repeat_one_id_are_one_call(
    server: ReplayServer, split: int | None
) -> None:
    fixture = load_fixture("servers/litellm_01_tool_use_split_blocks")
    starts = sum('"content_block_start"' in f["data"] for f in fixture["response"]["sse_events"])
    assert starts > 5  # the quirk is there: many blocks for one call
    server.enqueue(fixture_response(fixture, split=split))
    events = await stream(anthropic(server))
    assert sum(e.type == "tool_use_start" for e in events) == 1
    folded = collect(events)
    [call] = folded.content
    assert call["name"] == "Read" and call["input"] == json.loads(fragments(fixture))
    assert folded.stop_reason == "tool_use"
    # message_start says zero; the counts come in message_delta.
    delta = next(
        json.loads(f["data"])
        for f in fixture["response"]["sse_events"]
        if f.get("event") == "message_delta"
    )
    assert folded.usage.output_tokens == delta["usage"]["output_tokens"] > 0


async def test_litellm_split_call_runs_once_with_its_whole_input(server: ReplayServer) -> None:
    server.enqueue(fixture_response("servers/litellm_01_tool_use_split_blocks"))
    assembler = AssistantAssembler()
    ready = [r for e in await stream(anthropic(server)) for r in assembler.feed(e)]
    calls = [r for r in ready if isinstance(r, ToolCallReady)]
    assert len(calls) == 1 and calls[0].input_error is None
    [block] = [b for b in assembler.message().content if isinstance(b, ToolUseBlock)]
    assert block.name == "Read" and "file_path" in block.input


async def test_litellm_answer_after_a_tool_result(server: ReplayServer) -> None:
    # LiteLLM forwards the tool-only assistant message to llama.cpp with content null,
    # which the server cannot render: the answer comes back as one empty text block.
    server.enqueue(fixture_response("servers/litellm_02_text_after_tool_result"))
    folded = collect(await stream(anthropic(server)))
    assert folded.stop_reason == "end_turn" and folded.text() == ""


# --- tool calls start before the stream ends -----------------------------------------


async def test_openai_calls_close_as_soon_as_their_arguments_are_whole(
    server: ReplayServer,
) -> None:
    server.enqueue(fixture_response("openai/03a_parallel_tool_calls_sequential"))
    events = await stream(openai(server))
    kinds = [(e.type, getattr(e, "index", None)) for e in events]
    second_start = next(i for i, e in enumerate(events) if e.type == "tool_use_start" and i > 0)
    first = next(e for e in events if e.type == "tool_use_start")
    assert ("block_stop", first.index) in kinds[:second_start]
    # The message stops at finish_reason; the usage chunk after it still counts.
    stop = next(i for i, e in enumerate(events) if e.type == "message_stop")
    assert events[-1].type == "usage_update" and stop < len(events) - 1


async def test_interleaved_calls_stay_open_until_the_finish_reason(server: ReplayServer) -> None:
    fixture = load_fixture("openai/03b_parallel_tool_calls_interleaved")
    server.enqueue(fixture_response(fixture))
    folded = collect(await stream(openai(server)))
    calls = [(b["name"], b["input"]) for b in folded.content if b["type"] == "tool_use"]
    assert calls == [(c["name"], c["parsed"]) for c in fixture["expect"]["tool_calls"]]


# --- keys -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "masked"), [("x", False), ("ollama", False), ("sk-proj-0123456789abcdef", True)]
)
async def test_only_keys_that_can_be_secrets_are_masked_in_errors(
    server: ReplayServer, key: str, masked: bool
) -> None:
    message = f"Incorrect API key provided: {key}. Expected a valid key."
    server.enqueue(openai_error(401, "invalid_request_error", message, code="invalid_api_key"))
    with pytest.raises(ProviderError) as caught:
        await stream(openai(server, api_key=key))
    text = caught.value.message
    assert "Expected a valid key" in text and "***pected" not in text
    assert (key not in text) == masked


# --- model lists ----------------------------------------------------------------------


async def test_llamacpp_model_list(server: ReplayServer) -> None:
    server.enqueue(fixture_response("servers/llamacpp_04_models"))
    provider = openai(server)
    try:
        assert await provider.list_models() == [ModelInfo("smollm2")]
    finally:
        await provider.aclose()
    assert server.requests[-1].method == "GET" and server.requests[-1].path == "/v1/models"


async def test_litellm_model_list_in_anthropics_shape(server: ReplayServer) -> None:
    server.enqueue(fixture_response("servers/litellm_03_models_anthropic"))
    provider = anthropic(server)
    try:
        assert await provider.list_models() == [ModelInfo("smollm2", "smollm2")]
    finally:
        await provider.aclose()


async def test_the_catalog_caches_per_server_and_puts_the_configured_model_first(
    server: ReplayServer,
) -> None:
    now = [0.0]
    catalog = ModelCatalog(ttl=600, clock=lambda: now[0])
    listing = '{"object":"list","data":[{"id":"a","object":"model"},{"id":"b","object":"model"}]}'
    for _ in range(2):
        headers = (("content-type", "application/json"),)
        server.enqueue(ScriptedResponse(200, headers, body=listing.encode()))
    provider = openai(server)
    try:
        first = await catalog.models(provider, "b")
        again = await catalog.models(provider, "b")
        now[0] = 601
        expired = await catalog.models(provider, "custom-model")
    finally:
        await provider.aclose()
    assert [m.id for m in first.models] == ["b", "a"] and not first.cached
    assert again.cached and again.models == first.models
    assert [m.id for m in expired.models] == ["custom-model", "a", "b"] and not expired.cached
    assert sum(r.method == "GET" for r in server.requests) == 2


async def test_a_server_without_a_model_list_gets_a_clear_error(server: ReplayServer) -> None:
    provider = openai(server)
    try:
        with pytest.raises(ModelListUnavailable) as caught:
            await ModelCatalog().models(provider, "smollm2")
    finally:
        await provider.aclose()
    assert "has no model list" in caught.value.message and "agent/setModel" in caught.value.message
    assert caught.value.code == 1005
