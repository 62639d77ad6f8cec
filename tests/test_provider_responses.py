"""The OpenAI Responses provider against wire-exact replays, through the real `openai` SDK.

The fixtures in tests/fixtures/openai_responses/ are first checked against the SDK's own
`responses.stream()` helper (its final Response object), then driven through our provider.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from agentls.config import load_settings
from agentls.loop.assemble import AssistantAssembler
from agentls.messages import (
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    block_from_dict,
    block_to_dict,
    user_text,
)
from agentls.providers.base import ModelRequest, ProviderError, StreamEvent
from agentls.providers.factory import make_provider, openai_api
from agentls.providers.openai_compat import OpenAIProvider
from agentls.providers.openai_responses import OpenAIResponsesProvider
from agentls.providers.responses_request import ResponsesOptions, build_params
from agentls.usage import Usage
from replay_server import (
    Collected,
    RawFrame,
    ReplayServer,
    collect,
    fixture_names,
    fixture_response,
    load_fixture,
    openai_error,
)
from responses_replay import responses_turn

API_KEY = "sk-responses-test-secret-key"
FIXTURES = fixture_names("openai_responses")
STREAMS = [n for n in FIXTURES if "raises" not in load_fixture(n)["expect"]]
READ = ToolSpec("Read", "Read a file.", {"type": "object", "properties": {}})

# kind, retryable, status, retry_after per failing fixture.
EXPECTED_ERRORS: dict[str, tuple[str, bool, int | None, float | None]] = {
    "openai_responses/06_error_event_midstream": ("server", True, None, None),
    "openai_responses/07_response_failed": ("server", True, None, None),
    "openai_responses/08_http_400_context_length": ("prompt_too_long", False, 400, None),
    "openai_responses/09_http_429_rate_limit": ("rate_limit", True, 429, 3.0),
    "openai_responses/11_litellm_function_call_failed": ("server", True, None, None),
}


def make_request(messages: list[Message] | None = None, **kwargs: Any) -> ModelRequest:
    return ModelRequest(
        model=kwargs.pop("model", "gpt-4.1"),
        system_static="You are a coding agent.",
        system_dynamic="cwd: /repo",
        messages=messages if messages is not None else [user_text("hi")],
        tools=kwargs.pop("tools", [READ]),
        **kwargs,
    )


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    with ReplayServer() as replay:
        yield replay


def provider_for(server: ReplayServer, **options: Any) -> OpenAIResponsesProvider:
    chat = OpenAIProvider(api_key=API_KEY, base_url=server.openai_base_url, timeout=30.0)
    return OpenAIResponsesProvider(chat, options=ResponsesOptions(**options))


async def replay(
    server: ReplayServer, request: ModelRequest | None = None, **options: Any
) -> tuple[list[StreamEvent], ProviderError | None]:
    provider = provider_for(server, **options)
    events: list[StreamEvent] = []
    try:
        async for event in provider.stream(request or make_request()):
            events.append(event)
    except ProviderError as exc:
        return events, exc
    finally:
        await provider.aclose()
    return events, None


async def run_ok(server: ReplayServer, request: ModelRequest | None = None) -> Collected:
    events, error = await replay(server, request)
    assert error is None, error
    return collect(events)


# --- the fixtures, parsed by the SDK's own stream helper ------------------------------


@pytest.mark.parametrize("split", [None, 7])
@pytest.mark.parametrize("name", FIXTURES)
async def test_fixture_parses_with_the_sdk_stream_helper(
    server: ReplayServer, name: str, split: int | None
) -> None:
    fixture = load_fixture(name)
    expect = fixture["expect"]
    server.enqueue(fixture_response(fixture, split=split))
    client = openai.AsyncOpenAI(api_key=API_KEY, base_url=server.openai_base_url, max_retries=0)
    body = dict(fixture["request"]["json"])
    body.pop("stream")
    try:
        if "http_status" in expect:
            with pytest.raises(openai.APIStatusError) as raised:
                async with client.responses.stream(**body) as stream:
                    await stream.get_final_response()
            assert raised.value.status_code == expect["http_status"]
            assert raised.value.code == expect["error_code"]
            assert raised.value.request_id == expect["request_id"]
            return
        async with client.responses.stream(**body) as stream:
            seen = [event async for event in stream]
        types = [e.type for e in seen]
        if "stream_error" in expect:
            assert types[-1] == "error" and seen[-1].code == expect["stream_error"]["code"]
            return
        final = seen[-1].response
        assert final.status == expect["status"]
        if final.status == "failed":
            assert final.error is not None and final.error.code == expect["error_code"]
            return
        check_final_response(final, expect)
    finally:
        await client.close()


def check_final_response(final: Any, expect: dict[str, Any]) -> None:
    assert final.usage.model_dump(exclude_none=True) == expect["usage"]
    if "output_text" in expect:
        assert final.output_text == expect["output_text"]
    if "incomplete_reason" in expect:
        assert final.incomplete_details.reason == expect["incomplete_reason"]
    if "refusal" in expect:
        assert final.output[0].content[0].type == "refusal"
        assert final.output[0].content[0].refusal == expect["refusal"]
    calls = [item for item in final.output if item.type == "function_call"]
    assert [(c.call_id, c.name) for c in calls] == [
        (c["call_id"], c["name"]) for c in expect.get("function_calls", [])
    ]
    reasoning = [item for item in final.output if item.type == "reasoning"]
    if "encrypted_content" in expect:
        assert reasoning[0].encrypted_content == expect["encrypted_content"]
        assert [s.text for s in reasoning[0].summary] == expect["reasoning_summary"]


# --- the fixtures, through the provider -----------------------------------------------


def expected_blocks(expect: dict[str, Any]) -> list[dict[str, Any]]:
    """The fixture's output in our blocks: reasoning, text (or refusal), then calls."""
    blocks: list[dict[str, Any]] = []
    if "reasoning_summary" in expect:
        thinking = "\n\n".join(expect["reasoning_summary"])
        blocks.append(
            {
                "type": "thinking",
                "thinking": thinking,
                "signature": None,
                "encrypted_content": expect["encrypted_content"],
            }
        )
    text = expect.get("output_text") or expect.get("refusal")
    if text:
        blocks.append({"type": "text", "text": text})
    for call in expect.get("function_calls", []):
        blocks.append(
            {
                "type": "tool_use",
                "id": call["call_id"],
                "name": call["name"],
                "input": call["parsed"],
            }
        )
    return blocks


@pytest.mark.parametrize("split", [None, 7])
@pytest.mark.parametrize("name", STREAMS)
async def test_stream_fixture_folds_to_the_expected_message(
    server: ReplayServer, name: str, split: int | None
) -> None:
    expect = load_fixture(name)["expect"]
    server.enqueue(fixture_response(name, split=split))
    folded = await run_ok(server)
    assert folded.content == expected_blocks(expect)
    usage = expect["usage"]
    cached = usage.get("input_tokens_details", {}).get("cached_tokens", 0)
    assert folded.usage == Usage(usage["input_tokens"] - cached, usage["output_tokens"], cached)
    stops = {"max_output_tokens": "max_tokens"}
    if "refusal" in expect:
        assert folded.stop_reason == "refusal"
    elif "incomplete_reason" in expect:
        assert folded.stop_reason == stops[expect["incomplete_reason"]]
    else:
        assert folded.stop_reason == ("tool_use" if "function_calls" in expect else "end_turn")
    assert sorted(folded.stopped) == sorted(folded.blocks)


@pytest.mark.parametrize("name", sorted(EXPECTED_ERRORS))
async def test_failure_fixture_becomes_a_classified_provider_error(
    server: ReplayServer, name: str
) -> None:
    server.enqueue(fixture_response(name))
    _events, error = await replay(server)
    assert error is not None
    kind, retryable, status, retry_after = EXPECTED_ERRORS[name]
    assert (error.kind, error.retryable, error.status) == (kind, retryable, status)
    assert error.retry_after == retry_after
    assert error.request_id == load_fixture(name)["expect"]["request_id"]
    assert API_KEY not in error.message


async def test_a_refused_request_failure_is_not_retried(server: ReplayServer) -> None:
    fixture = load_fixture("openai_responses/07_response_failed")
    failed = fixture["response"]["sse_events"][-1]["data"]
    failed["response"]["error"] = {"code": "invalid_prompt", "message": "Invalid prompt."}
    server.enqueue(fixture_response(fixture))
    _events, error = await replay(server)
    assert error is not None and (error.kind, error.retryable) == ("invalid_request", False)


async def test_a_stream_cut_before_response_completed_is_retryable(server: ReplayServer) -> None:
    whole = fixture_response("openai_responses/02_text_then_function_call")
    assert whole.frames is not None
    server.enqueue(whole.cut(len(whole.frames) - 3))
    events, error = await replay(server)
    assert error is not None and (error.kind, error.retryable) == ("connection", True)
    assert not any(e.type == "message_stop" for e in events)


async def test_an_event_without_its_fields_is_skipped(server: ReplayServer) -> None:
    """The SDK builds events without checking them (a missing field reads as None): a
    delta with no text or place adds nothing, and the answer around it is whole."""
    broken = RawFrame(
        b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta"}\n\n'
    )
    server.enqueue(responses_turn(text="hello there").insert(3, broken))
    folded = await run_ok(server)
    assert folded.text() == "hello there" and folded.stop_reason == "end_turn"


async def test_a_dropped_connection_mid_stream_is_a_retryable_connection_error(
    server: ReplayServer,
) -> None:
    server.enqueue(responses_turn(text="a long answer " * 20, drop_after=4))
    _events, error = await replay(server)
    assert error is not None and error.retryable and error.kind == "connection"


async def test_abort_mid_stream_closes_the_connection(server: ReplayServer) -> None:
    server.enqueue(responses_turn(text="x" * 600, frame_delay=0.02))
    provider = provider_for(server)
    stream = provider.stream(make_request())
    seen = [await anext(stream) for _ in range(3)]
    await stream.aclose()  # what the loop does when the user interrupts
    await provider.aclose()
    assert [e.type for e in seen] == ["text_delta"] * 3
    # The server is free for the next request at once: the aborted one holds nothing.
    server.enqueue(responses_turn(text="next"))
    assert (await run_ok(server)).text() == "next"


# --- what is sent ------------------------------------------------------------------------


def history() -> list[Message]:
    image = ImageBlock("image/png", "iVBORw0KGgo=")
    return [
        user_text("Which port?"),
        Message(
            "assistant",
            (
                ThinkingBlock("**Plan**\n\nRead app.py.", None, "gAAAA-encrypted"),
                TextBlock("Let me read it."),
                ToolUseBlock("call_1", "Read", {"file_path": "app.py"}),
                ToolUseBlock("toolu_2", "Read", {"file_path": "b.png"}),
            ),
        ),
        Message(
            "user",
            (
                ToolResultBlock("call_1", "PORT = 8000"),
                ToolResultBlock("toolu_2", (TextBlock("an image"), image)),
                TextBlock("And the host?"),
            ),
        ),
        Message("assistant", (ThinkingBlock("Anthropic's", "sig-anthropic"), TextBlock("0.0.0.0"))),
    ]


def test_history_becomes_input_items_paired_by_call_id() -> None:
    params = build_params(make_request(history(), model="gpt-5-codex"), vision=True)
    assert params["input"] == [
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "Which port?"}],
        },
        {
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "**Plan**\n\nRead app.py."}],
            "encrypted_content": "gAAAA-encrypted",
        },
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Let me read it."}],
        },
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "Read",
            "arguments": '{"file_path": "app.py"}',
        },
        {
            "type": "function_call",
            "call_id": "toolu_2",
            "name": "Read",
            "arguments": '{"file_path": "b.png"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "PORT = 8000"},
        {
            "type": "function_call_output",
            "call_id": "toolu_2",
            "output": [
                {"type": "input_text", "text": "an image"},
                {
                    "type": "input_image",
                    "image_url": "data:image/png;base64,iVBORw0KGgo=",
                    "detail": "auto",
                },
            ],
        },
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "And the host?"}],
        },
        # Anthropic's signed thinking is not this API's: only the text goes.
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "0.0.0.0"}],
        },
    ]
    assert params["instructions"] == "You are a coding agent.\n\ncwd: /repo"
    assert params["store"] is False and params["max_output_tokens"] == 8192
    assert params["include"] == ["reasoning.encrypted_content"]
    assert params["reasoning"] == {"summary": "auto"}
    assert params["tools"] == [
        {
            "type": "function",
            "name": "Read",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {}},
            "strict": False,
        }
    ]


def test_a_model_that_does_not_reason_is_not_asked_for_reasoning() -> None:
    params = build_params(make_request(model="gpt-4.1", tool_choice="none"))
    assert "reasoning" not in params and "include" not in params
    assert params["tool_choice"] == "none"
    effort = build_params(make_request(model="o4-mini"), options=ResponsesOptions("high"))
    assert effort["reasoning"] == {"summary": "auto", "effort": "high"}


async def test_the_sdk_sends_the_request_as_built(server: ReplayServer) -> None:
    server.enqueue(responses_turn(text="ok"))
    request = make_request(history(), model="o3")
    await run_ok(server, request)
    sent = server.requests[0]
    assert sent.path == "/v1/responses"
    assert sent.api_key() == API_KEY
    expected = build_params(request)
    assert sent.body == {**expected, "stream": True}


async def test_reasoning_is_kept_and_sent_back_with_the_next_request(server: ReplayServer) -> None:
    """A reasoning model's chain across a tool call: the encrypted item of the first
    response is on the assistant message, survives the transcript, and goes back."""
    server.enqueue(fixture_response("openai_responses/03_reasoning_then_function_call"))
    events, error = await replay(server, make_request(model="gpt-5-codex"))
    assert error is None
    assembler = AssistantAssembler()
    for event in events:
        assembler.feed(event)
    assistant = assembler.message()
    stored = Message(
        "assistant", tuple(block_from_dict(block_to_dict(b)) for b in assistant.content)
    )
    thinking = stored.content[0]
    assert isinstance(thinking, ThinkingBlock)
    encrypted = load_fixture("openai_responses/03_reasoning_then_function_call")["expect"][
        "encrypted_content"
    ]
    assert thinking.encrypted_content == encrypted
    results = Message("user", (ToolResultBlock("call_R3aS0n1ngC4ll00001", "PORT = 8000"),))
    server.enqueue(responses_turn(text="Port 8000."))
    follow_up = make_request([user_text("Which port?"), stored, results], model="gpt-5-codex")
    assert (await run_ok(server, follow_up)).text() == "Port 8000."
    items = server.requests[-1].body["input"]
    assert [i.get("type") for i in items] == [
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
    ]
    assert items[1]["encrypted_content"] == encrypted and "id" not in items[1]
    assert items[2]["call_id"] == items[3]["call_id"] == "call_R3aS0n1ngC4ll00001"


async def test_usage_splits_cached_input_and_prices_it(server: ReplayServer) -> None:
    server.enqueue(
        responses_turn(
            text="ok", input_tokens=5000, cached_tokens=4000, output_tokens=70, reasoning_tokens=50
        )
    )
    folded = await run_ok(server)
    assert folded.usage == Usage(input_tokens=1000, output_tokens=70, cache_read_tokens=4000)


async def test_summary_parts_are_paragraphs_and_a_refusal_is_text(server: ReplayServer) -> None:
    server.enqueue(responses_turn(reasoning=(["First.", "Second."], "enc"), refusal="No."))
    folded = await run_ok(server)
    assert folded.content[0]["thinking"] == "First.\n\nSecond."
    assert folded.content[1] == {"type": "text", "text": "No."}
    assert folded.stop_reason == "refusal"


async def test_http_errors_keep_their_retry_after_and_hide_the_key(server: ReplayServer) -> None:
    server.enqueue(
        openai_error(
            401,
            "invalid_request_error",
            f"Incorrect API key provided: {API_KEY}",
            code="invalid_api_key",
        )
    )
    _events, error = await replay(server)
    assert error is not None and (error.kind, error.retryable) == ("authentication", False)
    assert API_KEY not in error.message


# --- choosing the API ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "api"),
    [
        ({}, "responses"),
        ({"openaiBaseUrl": "https://api.openai.com/v1"}, "responses"),
        ({"openaiBaseUrl": "http://127.0.0.1:8080/v1"}, "chat"),
        ({"openaiBaseUrl": "http://127.0.0.1:8080/v1", "model": "gpt-5-codex"}, "responses"),
        ({"openaiBaseUrl": "http://127.0.0.1:8080/v1", "openaiApi": "responses"}, "responses"),
        ({"openaiApi": "chat"}, "chat"),
    ],
)
def test_openai_api_auto_picks_responses_for_openai_and_its_only_models(
    tmp_path: Path, settings: dict[str, Any], api: str
) -> None:
    loaded = load_settings(tmp_path, {"OPENAI_API_KEY": API_KEY}, settings)
    assert openai_api(loaded) == api
    provider = make_provider(loaded)
    expected = OpenAIResponsesProvider if api == "responses" else OpenAIProvider
    assert type(provider) is expected and provider.name == "openai"


def test_a_bad_openai_api_value_is_reported_and_auto_kept(tmp_path: Path) -> None:
    problems: list[str] = []
    loaded = load_settings(tmp_path, {}, {"openaiApi": "assistants"}, problems=problems)
    assert loaded.openai_api == "auto"
    assert any("openaiApi" in p for p in problems)
