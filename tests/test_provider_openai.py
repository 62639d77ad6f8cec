"""OpenAIProvider against wire-exact replays, through the real `openai` SDK."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentls.config import load_settings
from agentls.messages import (
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    user_text,
)
from agentls.providers.base import ModelRequest, ProviderError, StreamEvent
from agentls.providers.factory import make_provider
from agentls.providers.openai_compat import OpenAIProvider
from agentls.providers.openai_request import PLACEHOLDER_API_KEY, build_params
from agentls.usage import Usage
from replay_server import (
    Collected,
    RawFrame,
    ReplayServer,
    ToolCall,
    collect,
    fixture_names,
    fixture_response,
    load_fixture,
    openai_error,
    openai_stream,
    openai_text_turn,
    openai_tool_turn,
    openai_turn,
)

API_KEY = "sk-openai-test-secret-key"
FIXTURES = fixture_names("openai")
STREAM_FIXTURES = [n for n in FIXTURES if "raises" not in load_fixture(n)["expect"]]
ERROR_FIXTURES = [n for n in FIXTURES if "raises" in load_fixture(n)["expect"]]

FINISH_TO_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}

# kind, retryable, status, retry_after per error fixture.
EXPECTED_ERRORS: dict[str, tuple[str, bool, int | None, float | None]] = {
    "openai/07a_http_429_rate_limit": ("rate_limit", True, 429, 6.0),
    "openai/07b_http_400_context_length": ("prompt_too_long", False, 400, None),
    "openai/07c_http_500_server_error": ("server", True, 500, None),
    "openai/08_midstream_error_chunk": ("server", True, None, None),
}

READ_TOOL = ToolSpec("Read", "Read a file.", {"type": "object", "properties": {}})


def make_request(messages: list[Message] | None = None, **kwargs: Any) -> ModelRequest:
    return ModelRequest(
        model="gpt-replay-test",
        system_static=kwargs.pop("system_static", "You are a coding agent."),
        system_dynamic=kwargs.pop("system_dynamic", "cwd: /repo"),
        messages=messages if messages is not None else [user_text("hi")],
        tools=kwargs.pop("tools", [READ_TOOL]),
        **kwargs,
    )


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    with ReplayServer() as replay:
        yield replay


async def replay(
    base_url: str,
    request: ModelRequest | None = None,
    timeout: float = 30.0,
    api_key: str | None = API_KEY,
) -> tuple[list[StreamEvent], ProviderError | None]:
    provider = OpenAIProvider(api_key=api_key, base_url=base_url, timeout=timeout)
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
    events, error = await replay(server.openai_base_url, request)
    assert error is None, error
    return collect(events)


async def run_error(server: ReplayServer, timeout: float = 30.0) -> ProviderError:
    _, error = await replay(server.openai_base_url, timeout=timeout)
    assert error is not None
    return error


def expected_content(expect: dict[str, Any]) -> list[dict[str, Any]]:
    """The fixture's expectation in our block order: reasoning, text, then tool calls."""
    blocks: list[dict[str, Any]] = []
    if expect.get("reasoning"):
        blocks.append({"type": "thinking", "thinking": expect["reasoning"], "signature": None})
    if expect.get("content"):
        blocks.append({"type": "text", "text": expect["content"]})
    for call in expect["tool_calls"]:
        tool = {"type": "tool_use", "id": call["id"], "name": call["name"]}
        blocks.append({**tool, "input": call["parsed"]})
    return blocks


def expected_usage(usage: dict[str, Any]) -> Usage:
    details = usage.get("prompt_tokens_details") or {}
    cached = details.get("cached_tokens") or usage.get("prompt_cache_hit_tokens") or 0
    return Usage(
        input_tokens=usage["prompt_tokens"] - cached,
        output_tokens=usage["completion_tokens"],
        cache_read_tokens=cached,
    )


# --- every fixture, whole and fragmented -----------------------------------------------


@pytest.mark.parametrize("split", [None, 7], ids=["whole", "split7"])
@pytest.mark.parametrize("name", STREAM_FIXTURES)
async def test_stream_fixture_folds_to_expected_message(
    server: ReplayServer, name: str, split: int | None
) -> None:
    fixture = load_fixture(name)
    server.enqueue(fixture_response(fixture, split=split))
    result = await run_ok(server)
    expect = fixture["expect"]
    assert result.content == expected_content(expect)
    assert result.stop_reason == FINISH_TO_STOP[expect["finish_reason"]]
    assert result.usage == expected_usage(expect["usage"])
    assert sorted(result.stopped) == sorted(result.blocks)


@pytest.mark.parametrize("split", [None, 7], ids=["whole", "split7"])
@pytest.mark.parametrize("name", ERROR_FIXTURES)
async def test_error_fixture_becomes_classified_provider_error(
    server: ReplayServer, name: str, split: int | None
) -> None:
    fixture = load_fixture(name)
    server.enqueue(fixture_response(fixture, split=split))
    events, error = await replay(server.openai_base_url)
    kind, retryable, status, retry_after = EXPECTED_ERRORS[name]
    expect = fixture["expect"]
    assert error is not None
    assert (error.kind, error.retryable) == (kind, retryable)
    assert (error.status, error.retry_after) == (status, retry_after)
    assert error.status == expect.get("http_status")
    assert error.request_id == fixture["response"]["headers"]["x-request-id"]
    assert (expect.get("error_code") or expect["error_type"]) in error.message
    assert API_KEY not in str(error)
    if "partial_content" in expect:
        assert collect(events).text() == expect["partial_content"]


# --- request building ----------------------------------------------------------------


def history() -> list[Message]:
    return [
        user_text("fix the test"),
        Message(
            "assistant",
            (
                ThinkingBlock("Run the tests first.", "sig=="),
                TextBlock("Running them."),
                ToolUseBlock("call_1", "Bash", {"command": "pytest"}),
                ToolUseBlock("call_2", "Read", {"file_path": "ä.py"}),
            ),
        ),
        Message(
            "user",
            (
                ToolResultBlock("call_1", "1 failed", is_error=True),
                TextBlock("Also check b.py"),
                ToolResultBlock("call_2", "def f(): ..."),
            ),
        ),
    ]


def test_system_prompt_is_one_string_message_static_then_dynamic() -> None:
    messages = build_params(make_request())["messages"]
    assert messages[0] == {"role": "system", "content": "You are a coding agent.\n\ncwd: /repo"}
    only_static = build_params(make_request(system_dynamic=""))["messages"][0]
    assert only_static["content"] == "You are a coding agent."


def test_tool_results_follow_the_assistant_call_in_order_before_user_text() -> None:
    messages = build_params(make_request(history()))["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert messages[2] == {
        "role": "assistant",
        "content": "Running them.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "Bash", "arguments": '{"command": "pytest"}'},
            },
            {
                "id": "call_2",
                "type": "function",
                "function": {"name": "Read", "arguments": '{"file_path": "ä.py"}'},
            },
        ],
    }
    assert messages[3:] == [
        {"role": "tool", "tool_call_id": "call_1", "content": "1 failed"},
        {"role": "tool", "tool_call_id": "call_2", "content": "def f(): ..."},
        {"role": "user", "content": "Also check b.py"},
    ]


def test_assistant_with_only_tool_calls_sends_empty_string_content_not_null() -> None:
    # llama.cpp's server answers HTTP 500 (pydantic: content must be a string) to null.
    only_calls = Message(
        "assistant", (ThinkingBlock("hmm"), ToolUseBlock("call_1", "Read", {"file_path": "a"}))
    )
    only_thinking = Message("assistant", (ThinkingBlock("hmm"),))
    messages = build_params(make_request([user_text("q"), only_calls, only_thinking]))["messages"]
    assert len(messages) == 3
    assert messages[2]["content"] == ""
    assert messages[2]["tool_calls"][0]["id"] == "call_1"
    assert "thinking" not in json.dumps(messages)


def test_tools_are_function_tools() -> None:
    assert build_params(make_request())["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "Read",
                "description": "Read a file.",
                "parameters": {"type": "object", "properties": {}},
            },
        }
    ]
    assert "tools" not in build_params(make_request(tools=[]))


async def test_sdk_sends_only_standard_fields(server: ReplayServer) -> None:
    server.enqueue(openai_text_turn("ok"))
    request = make_request(history(), max_tokens=1234, thinking_budget=2048)
    await run_ok(server, request)
    (sent,) = server.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.api_key() == API_KEY
    assert sent.body == {**build_params(request), "stream": True}
    assert set(sent.body) == {
        "model",
        "messages",
        "max_tokens",
        "stream",
        "stream_options",
        "tools",
    }
    assert sent.body["stream_options"] == {"include_usage": True}
    assert sent.body["max_tokens"] == 1234


async def test_local_server_without_a_key_gets_a_placeholder(
    server: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.enqueue(openai_text_turn("ok"))
    _, error = await replay(server.openai_base_url, api_key=None)
    assert error is None
    assert server.requests[0].api_key() == PLACEHOLDER_API_KEY


def test_missing_key_for_api_openai_com_is_an_authentication_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ProviderError) as caught:
        OpenAIProvider()
    assert caught.value.kind == "authentication"


# --- stream folding rules ------------------------------------------------------------


async def test_two_turn_tool_conversation_through_the_replay_server(server: ReplayServer) -> None:
    call = ToolCall("call_9", "Read", {"file_path": "README.md"})
    server.enqueue(openai_tool_turn(call), openai_text_turn("It is empty."))
    first = await run_ok(server)
    assert first.stop_reason == "tool_use"
    assert first.content == [
        {"type": "tool_use", "id": "call_9", "name": "Read", "input": call.input}
    ]
    follow_up = [
        user_text("hi"),
        Message("assistant", (ToolUseBlock("call_9", "Read", call.input),)),
        Message("user", (ToolResultBlock("call_9", ""),)),
    ]
    second = await run_ok(server, make_request(follow_up))
    assert (second.text(), second.stop_reason) == ("It is empty.", "end_turn")
    assert server.requests[1].body["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call_9",
        "content": "",
    }


async def test_a_new_id_at_a_used_index_starts_a_new_call(server: ReplayServer) -> None:
    calls = [
        ToolCall("call_a", "Read", {"file_path": "a.py"}),
        ToolCall("call_b", "Bash", {"command": "ls"}),
    ]
    server.enqueue(openai_tool_turn(*calls, text="Both.", same_index=True))
    result = await run_ok(server)
    assert result.content == [
        {"type": "text", "text": "Both."},
        {"type": "tool_use", "id": "call_a", "name": "Read", "input": {"file_path": "a.py"}},
        {"type": "tool_use", "id": "call_b", "name": "Bash", "input": {"command": "ls"}},
    ]
    assert result.stop_reason == "tool_use"


def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [choice],
    }


async def test_calls_without_an_index_are_told_apart_by_id(server: ReplayServer) -> None:
    first = {"id": "call_a", "type": "function", "function": {"name": "Read", "arguments": "{}"}}
    second = {"id": "call_b", "type": "function", "function": {"name": "Bash", "arguments": "{"}}
    rest = {"function": {"arguments": '"command":"ls"}'}}
    chunks = [
        chunk({"tool_calls": [first]}),
        chunk({"tool_calls": [second]}),
        chunk({"tool_calls": [rest]}),
        chunk({}, "tool_calls"),
    ]
    server.enqueue(openai_stream(chunks))
    result = await run_ok(server)
    assert [(b["id"], b["input"]) for b in result.content] == [
        ("call_a", {}),
        ("call_b", {"command": "ls"}),
    ]


async def test_calls_without_ids_get_one_id_each_and_whole_arguments_work(
    server: ReplayServer,
) -> None:
    # Some servers send no call id, and the whole arguments in one chunk; an empty
    # `choices` list may come anywhere.
    first = {"index": 0, "function": {"name": "Read", "arguments": '{"file_path": "a"}'}}
    second = {"index": 1, "function": {"name": "Read", "arguments": '{"file_path": "b"}'}}
    chunks = [
        chunk({"tool_calls": [first]}),
        {**chunk({}), "choices": []},
        chunk({"tool_calls": [second]}),
        chunk({}, "stop"),
    ]
    server.enqueue(openai_stream(chunks))
    result = await run_ok(server)
    ids = [b["id"] for b in result.content]
    assert len(set(ids)) == 2 and all(i.startswith("call_") for i in ids)
    assert [b["input"] for b in result.content] == [{"file_path": "a"}, {"file_path": "b"}]
    assert result.stop_reason == "tool_use"


@pytest.mark.parametrize(
    ("finish_reason", "with_call", "stop_reason"),
    [
        (None, True, "tool_use"),
        (None, False, "end_turn"),
        ("stop", True, "tool_use"),
        ("content_filter", False, "refusal"),
        ("length", True, "max_tokens"),
        ("function_call", True, "tool_use"),
    ],
)
async def test_finish_reason_maps_to_a_stop_reason(
    server: ReplayServer, finish_reason: str | None, with_call: bool, stop_reason: str
) -> None:
    call = {"index": 0, "id": "call_1", "function": {"name": "Read", "arguments": "{}"}}
    chunks = [chunk({"role": "assistant", "content": "hi"})]
    if with_call:
        chunks.append(chunk({"tool_calls": [call]}))
    if finish_reason is not None:
        chunks.append(chunk({}, finish_reason))
    server.enqueue(openai_stream(chunks))
    result = await run_ok(server)
    assert result.stop_reason == stop_reason
    assert sorted(result.stopped) == sorted(result.blocks)


async def test_deltas_after_the_finish_reason_are_ignored(server: ReplayServer) -> None:
    chunks = [chunk({"content": "done"}), chunk({}, "stop"), chunk({"content": " late"})]
    server.enqueue(openai_stream(chunks))
    result = await run_ok(server)
    assert (result.text(), result.stop_reason) == ("done", "end_turn")


async def test_refusal_text_is_shown_and_stops_as_refusal(server: ReplayServer) -> None:
    chunks = [chunk({"role": "assistant", "refusal": "I can't help with that."}), chunk({}, "stop")]
    server.enqueue(openai_stream(chunks))
    result = await run_ok(server)
    assert (result.text(), result.stop_reason) == ("I can't help with that.", "refusal")


async def test_reasoning_gets_its_own_block_before_text(server: ReplayServer) -> None:
    server.enqueue(openai_turn(reasoning="Let me think.", reasoning_field="reasoning", text="42"))
    result = await run_ok(server)
    assert result.content == [
        {"type": "thinking", "thinking": "Let me think.", "signature": None},
        {"type": "text", "text": "42"},
    ]


# --- transport failures --------------------------------------------------------------


async def test_dropped_connection_mid_stream_is_a_connection_error(server: ReplayServer) -> None:
    server.enqueue(fixture_response("openai/01_text_basic", split=7, drop_after=40))
    error = await run_error(server)
    assert (error.kind, error.retryable) == ("connection", True)
    assert error.request_id == "req_7f9c1e2d3b4a59687a6b5c4d3e2f1a0b"


@pytest.mark.parametrize(
    ("name", "frames"),
    [
        ("openai/01_text_basic", 4),
        ("openai/02_tool_call_fragments", 5),
        ("openai/02_tool_call_fragments", 8),
        ("openai/01_text_basic", 0),
    ],
    ids=["mid-text", "mid-arguments", "arguments-whole", "no-chunk"],
)
@pytest.mark.parametrize("split", [None, 7], ids=["whole", "split7"])
async def test_a_stream_that_ends_without_finish_reason_or_done_was_dropped(
    server: ReplayServer, name: str, frames: int, split: int | None
) -> None:
    # A proxy or a crashing server can end the HTTP body cleanly mid-message: neither the
    # finish_reason nor `[DONE]` came, so the text or the call's arguments may be cut.
    server.enqueue(fixture_response(name, split=split).cut(frames))
    events, error = await replay(server.openai_base_url)
    assert error is not None
    assert (error.kind, error.retryable) == ("connection", True)
    assert error.request_id == load_fixture(name)["expect"]["request_id"]
    assert not any(e.type == "message_stop" for e in events)


@pytest.mark.parametrize("split", [None, 7], ids=["whole", "split7"])
async def test_a_finish_reason_without_done_completes_the_message(
    server: ReplayServer, split: int | None
) -> None:
    # Some servers end the body after the finish_reason and usage chunks, with no [DONE].
    fixture = load_fixture("openai/02_tool_call_fragments")
    server.enqueue(fixture_response(fixture, split=split).cut(10))
    result = await run_ok(server)
    assert result.stop_reason == "tool_use"
    assert result.content[0]["input"] == fixture["expect"]["tool_calls"][0]["parsed"]
    assert result.usage == expected_usage(fixture["expect"]["usage"])


async def test_a_finish_reason_on_the_usage_chunk_without_done_completes_the_message(
    server: ReplayServer,
) -> None:
    usage = {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
    chunks = [
        chunk({"role": "assistant", "content": "All done."}),
        {**chunk({}, "stop"), "usage": usage},
    ]
    server.enqueue(openai_stream(chunks, done=False))
    result = await run_ok(server)
    assert (result.text(), result.stop_reason) == ("All done.", "end_turn")
    assert result.usage == Usage(input_tokens=12, output_tokens=3)


async def test_done_without_a_finish_reason_completes_the_message(server: ReplayServer) -> None:
    # llama.cpp once answered with a role chunk and [DONE] only: complete, if empty.
    server.enqueue(openai_stream([chunk({"role": "assistant", "content": ""})]))
    result = await run_ok(server)
    assert (result.text(), result.stop_reason) == ("", "end_turn")


@pytest.mark.parametrize(
    "bad",
    [b"data: {not json}\n\n", b'data: {"id":"c","choices":[{"ind\n\n', b"\xff\xfe garbage\n"],
    ids=["not-json", "cut-json", "not-utf8"],
)
async def test_stream_data_that_cannot_be_read_is_a_retryable_server_error(
    server: ReplayServer, bad: bytes
) -> None:
    server.enqueue(fixture_response("openai/01_text_basic").insert(3, RawFrame(bad)))
    error = await run_error(server)
    assert (error.kind, error.retryable) == ("server", True)
    assert error.request_id == "req_7f9c1e2d3b4a59687a6b5c4d3e2f1a0b"


async def test_a_garbage_line_in_the_stream_is_ignored(server: ReplayServer) -> None:
    # A line without a field name's colon is a field with no value, which SSE ignores.
    server.enqueue(fixture_response("openai/01_text_basic").insert(3, RawFrame(b"garbage\n")))
    result = await run_ok(server)
    assert result.text() == load_fixture("openai/01_text_basic")["expect"]["content"]


async def test_a_connection_lost_after_the_finish_reason_keeps_the_message(
    server: ReplayServer,
) -> None:
    # Only the usage chunk and [DONE] were still to come: asking again would redo it all.
    fixture = load_fixture("openai/01_text_basic")
    server.enqueue(fixture_response(fixture, drop_after=6))
    result = await run_ok(server)
    assert (result.text(), result.stop_reason) == (fixture["expect"]["content"], "end_turn")
    assert result.usage is None


async def test_stalled_stream_is_a_timeout_error(server: ReplayServer) -> None:
    server.enqueue(openai_text_turn("slow", frame_delay=1.0))
    error = await run_error(server, timeout=0.3)
    assert (error.kind, error.retryable) == ("timeout", True)


@pytest.mark.parametrize(
    ("status", "error_type", "code", "message", "kind", "retryable"),
    [
        (
            401,
            "invalid_request_error",
            "invalid_api_key",
            "Incorrect API key",
            "authentication",
            False,
        ),
        (403, "invalid_request_error", None, "Country not supported", "permission", False),
        (404, "invalid_request_error", "model_not_found", "no such model", "not_found", False),
        (
            429,
            "insufficient_quota",
            "insufficient_quota",
            "You exceeded your quota",
            "rate_limit",
            False,
        ),
        (503, "server_error", None, "The engine is currently overloaded", "server", True),
        (
            400,
            "BadRequestError",
            None,
            "This model's maximum context length is 4096 tokens",
            "prompt_too_long",
            False,
        ),
        (
            400,
            "invalid_request_error",
            None,
            "Invalid 'messages[1].role'",
            "invalid_request",
            False,
        ),
    ],
)
async def test_http_errors_are_classified_by_code_and_status(
    server: ReplayServer,
    status: int,
    error_type: str,
    code: str | None,
    message: str,
    kind: str,
    retryable: bool,
) -> None:
    server.enqueue(openai_error(status, error_type, message, code=code, request_id="req_x"))
    error = await run_error(server)
    assert (error.kind, error.retryable, error.status) == (kind, retryable, status)
    assert error.request_id == "req_x"


async def test_retry_after_ms_wins_over_retry_after(server: ReplayServer) -> None:
    headers = {"retry-after-ms": "250", "retry-after": "1"}
    server.enqueue(
        openai_error(429, "requests", "slow down", code="rate_limit_exceeded", headers=headers)
    )
    assert (await run_error(server)).retry_after == 0.25


# --- images ------------------------------------------------------------------------------

PNG_DATA = "iVBORw0KGgo="
IMAGE = ImageBlock("image/png", PNG_DATA, "shot.png", 3, 2)
DATA_URL = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_DATA}"}}


def image_history() -> list[Message]:
    read = ToolUseBlock("call_1", "Read", {"file_path": "shot.png"})
    bash = ToolUseBlock("call_2", "Bash", {"command": "true"})
    results = (
        ToolResultBlock("call_1", (TextBlock("Image shot.png (png 3x2)."), IMAGE)),
        ToolResultBlock("call_2", "ok"),
        TextBlock("and look at this one"),
        IMAGE,
    )
    return [
        Message("user", (TextBlock("What is this?"), IMAGE)),
        Message("assistant", (read, bash)),
        Message("user", results),
    ]


def test_user_images_are_image_url_parts_in_block_order() -> None:
    first = build_params(make_request(image_history()))["messages"][1]
    assert first == {
        "role": "user",
        "content": [{"type": "text", "text": "What is this?"}, DATA_URL],
    }


def test_an_image_tool_result_is_a_text_tool_message_then_a_user_message_with_the_image() -> None:
    sent = build_params(make_request(image_history()))["messages"][3:]
    assert sent == [
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": "Image shot.png (png 3x2).\n(The image is in the next user message.)",
        },
        {"role": "tool", "tool_call_id": "call_2", "content": "ok"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Image returned by tool call call_1:"},
                DATA_URL,
                {"type": "text", "text": "and look at this one"},
                DATA_URL,
            ],
        },
    ]


async def test_a_vision_model_gets_the_image_through_the_sdk(server: ReplayServer) -> None:
    server.enqueue(openai_text_turn("A chart."))
    provider = OpenAIProvider(api_key=API_KEY, base_url=server.openai_base_url, vision=True)
    try:
        async for _ in provider.stream(make_request(image_history())):
            pass
    finally:
        await provider.aclose()
    (sent,) = server.requests
    assert sent.body["messages"][1]["content"][1] == DATA_URL


async def test_a_model_without_vision_gets_a_note_and_never_the_bytes(
    server: ReplayServer,
) -> None:
    server.enqueue(openai_text_turn("I cannot see it."))
    await run_ok(server, make_request(image_history()))
    (sent,) = server.requests
    body = json.dumps(sent.body)
    assert PNG_DATA not in body and "image_url" not in body
    assert sent.body["messages"][1]["content"].startswith(
        "What is this?\n\n[image: shot.png, png 3x2] Not shown: the model gpt-replay-test"
    )
    assert "Not shown" in sent.body["messages"][3]["content"]


# --- Azure OpenAI ----------------------------------------------------------------------


async def test_azure_routes_by_deployment_with_an_api_key_header(server: ReplayServer) -> None:
    server.enqueue(fixture_response("openai/02_tool_call_fragments"))
    provider = OpenAIProvider.azure(
        server.base_url, "my-gpt4o", "2024-10-21", "azure-key-0123456789abcdef"
    )
    try:
        folded = collect([e async for e in provider.stream(make_request())])
    finally:
        await provider.aclose()
    assert provider.name == "azure"
    assert folded.stop_reason == "tool_use"
    sent = server.requests[-1]
    assert sent.path == "/openai/deployments/my-gpt4o/chat/completions?api-version=2024-10-21"
    assert sent.headers["api-key"] == "azure-key-0123456789abcdef"
    assert "authorization" not in sent.headers
    assert sent.body["stream"] is True and sent.body["messages"][0]["role"] == "system"


def test_azure_settings_pick_the_provider_and_the_deployment(tmp_path: Path) -> None:
    env = {
        "AZURE_OPENAI_API_KEY": "azure-key-0123456789abcdef",
        "AZURE_OPENAI_ENDPOINT": "https://example.openai.azure.com",
    }
    settings = load_settings(tmp_path, env, {"azureDeployment": "prod-4o"})
    assert settings.resolved_provider() == "azure" and settings.resolved_model() == "prod-4o"
    assert settings.missing_credentials() is None
    provider = make_provider(settings)
    assert provider.name == "azure"
    bare = load_settings(tmp_path, {"AGENTLS_PROVIDER": "azure"})
    problem = bare.missing_credentials()
    assert problem is not None and "AZURE_OPENAI_ENDPOINT" in problem
