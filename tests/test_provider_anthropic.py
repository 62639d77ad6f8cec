"""AnthropicProvider against wire-exact replays, through the real `anthropic` SDK."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest

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
from agentls.providers.anthropic import AnthropicProvider
from agentls.providers.anthropic_request import build_params
from agentls.providers.base import ModelRequest, ProviderError, StreamEvent
from agentls.providers.http_errors import retry_after_seconds
from agentls.usage import Usage
from replay_server import (
    Collected,
    Frame,
    RawFrame,
    ReplayServer,
    ToolCall,
    anthropic_error,
    anthropic_stream,
    anthropic_text_turn,
    anthropic_tool_turn,
    anthropic_turn,
    collect,
    fixture_names,
    fixture_response,
    load_fixture,
    read_log,
)

API_KEY = "sk-ant-test-secret-key"
FIXTURES = fixture_names("anthropic")
STREAM_FIXTURES = [n for n in FIXTURES if "raises" not in load_fixture(n)["expect"]]
ERROR_FIXTURES = [n for n in FIXTURES if "raises" in load_fixture(n)["expect"]]

# kind, retryable, retry_after per error fixture; status and request id come from `expect`.
EXPECTED_ERRORS: dict[str, tuple[str, bool, float | None]] = {
    "anthropic/06_midstream_overloaded_error": ("overloaded", True, None),
    "anthropic/07a_http_529_overloaded": ("overloaded", True, None),
    "anthropic/07b_http_429_rate_limit": ("rate_limit", True, 18.0),
    "anthropic/07c_http_400_prompt_too_long": ("prompt_too_long", False, None),
    "anthropic/07d_http_401_authentication": ("authentication", False, None),
}

READ_TOOL = ToolSpec("Read", "Read a file.", {"type": "object", "properties": {}})
BASH_TOOL = ToolSpec("Bash", "Run a command.", {"type": "object", "properties": {}})


def make_request(messages: list[Message] | None = None, **kwargs: Any) -> ModelRequest:
    return ModelRequest(
        model="claude-replay-test",
        system_static=kwargs.pop("system_static", "You are a coding agent."),
        system_dynamic=kwargs.pop("system_dynamic", "cwd: /repo"),
        messages=messages if messages is not None else [user_text("hi")],
        tools=kwargs.pop("tools", [READ_TOOL, BASH_TOOL]),
        **kwargs,
    )


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    with ReplayServer() as replay:
        yield replay


async def drain(
    provider: AnthropicProvider, request: ModelRequest | None = None
) -> tuple[list[StreamEvent], ProviderError | None]:
    events: list[StreamEvent] = []
    try:
        async for event in provider.stream(request or make_request()):
            events.append(event)
    except ProviderError as exc:
        return events, exc
    return events, None


async def replay(
    base_url: str, request: ModelRequest | None = None, timeout: float = 30.0
) -> tuple[list[StreamEvent], ProviderError | None]:
    provider = AnthropicProvider(api_key=API_KEY, base_url=base_url, timeout=timeout)
    try:
        return await drain(provider, request)
    finally:
        await provider.aclose()


async def run_ok(server: ReplayServer, request: ModelRequest | None = None) -> Collected:
    events, error = await replay(server.base_url, request)
    assert error is None, error
    return collect(events)


async def run_error(server: ReplayServer, timeout: float = 30.0) -> ProviderError:
    _, error = await replay(server.base_url, timeout=timeout)
    assert error is not None
    return error


def expected_usage(usage: dict[str, int]) -> Usage:
    return Usage(
        input_tokens=usage["input_tokens"],
        output_tokens=usage["output_tokens"],
        cache_read_tokens=usage["cache_read_input_tokens"],
        cache_write_tokens=usage["cache_creation_input_tokens"],
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
    assert result.content == expect["content"]
    assert result.stop_reason == expect["stop_reason"]
    assert result.usage == expected_usage(expect["usage"])
    assert sorted(result.stopped) == sorted(result.blocks)


@pytest.mark.parametrize("split", [None, 7], ids=["whole", "split7"])
@pytest.mark.parametrize("name", ERROR_FIXTURES)
async def test_error_fixture_becomes_classified_provider_error(
    server: ReplayServer, name: str, split: int | None
) -> None:
    fixture = load_fixture(name)
    server.enqueue(fixture_response(fixture, split=split))
    events, error = await replay(server.base_url)
    kind, retryable, retry_after = EXPECTED_ERRORS[name]
    expect = fixture["expect"]
    assert error is not None
    assert (error.kind, error.retryable, error.retry_after) == (kind, retryable, retry_after)
    assert error.status == expect["http_status"]
    assert error.request_id == expect["request_id"]
    assert expect["error_type"] in error.message
    assert API_KEY not in str(error)
    if "partial_text" in expect:
        assert collect(events).text() == expect["partial_text"]


# --- request building ----------------------------------------------------------------


def count_breakpoints(params: Any) -> int:
    return json.dumps(params).count('"cache_control"')


def test_system_static_part_is_the_cached_breakpoint_and_dynamic_follows_uncached() -> None:
    system = build_params(make_request())["system"]
    assert system == [
        {"type": "text", "text": "You are a coding agent.", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "cwd: /repo"},
    ]


def test_empty_dynamic_system_part_is_omitted() -> None:
    system = build_params(make_request(system_dynamic=""))["system"]
    assert [b["text"] for b in system] == ["You are a coding agent."]


def test_only_the_last_tool_carries_cache_control() -> None:
    tools = build_params(make_request())["tools"]
    assert [t["name"] for t in tools] == ["Read", "Bash"]
    assert "cache_control" not in tools[0]
    assert tools[1]["cache_control"] == {"type": "ephemeral"}
    assert tools[1]["input_schema"] == BASH_TOOL.input_schema


def history() -> list[Message]:
    return [
        user_text("fix the test"),
        Message(
            "assistant",
            (
                ThinkingBlock("Run the tests first.", "sig-EqQBCkgIAR=="),
                TextBlock(""),
                TextBlock("Running them."),
                ToolUseBlock("toolu_1", "Bash", {"command": "pytest"}),
                ToolUseBlock("toolu_2", "Read", {"file_path": "a.py"}),
            ),
        ),
        Message(
            "user",
            (
                ToolResultBlock("toolu_1", "1 failed", is_error=True),
                ToolResultBlock("toolu_2", "def f(): ..."),
                TextBlock("Also check b.py"),
            ),
        ),
    ]


def test_history_maps_blocks_and_sends_the_thinking_signature_back_unchanged() -> None:
    messages = build_params(make_request(history()))["messages"]
    assert messages[1] == {
        "role": "assistant",
        "content": [
            {
                "type": "thinking",
                "thinking": "Run the tests first.",
                "signature": "sig-EqQBCkgIAR==",
            },
            {"type": "text", "text": "Running them."},
            {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "pytest"}},
            {"type": "tool_use", "id": "toolu_2", "name": "Read", "input": {"file_path": "a.py"}},
        ],
    }
    assert messages[2]["content"][:2] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "1 failed", "is_error": True},
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "def f(): ..."},
    ]


def test_cache_breakpoint_sits_on_the_last_block_of_the_last_message_only() -> None:
    params = build_params(make_request(history()))
    messages = params["messages"]
    assert messages[-1]["content"][-1] == {
        "type": "text",
        "text": "Also check b.py",
        "cache_control": {"type": "ephemeral"},
    }
    assert count_breakpoints(messages) == 1
    assert count_breakpoints(params) == 3


def test_unsigned_thinking_and_empty_text_are_not_sent() -> None:
    messages = [
        user_text("q"),
        Message("assistant", (ThinkingBlock("from another provider"), TextBlock("a"))),
        Message("user", (TextBlock(""),)),
        user_text("next"),
    ]
    sent = build_params(make_request(messages))["messages"]
    assert [m["content"] for m in sent[1:]] == [
        [{"type": "text", "text": "a"}],
        [{"type": "text", "text": "next", "cache_control": {"type": "ephemeral"}}],
    ]


def test_thinking_budget_enables_extended_thinking() -> None:
    assert "thinking" not in build_params(make_request())
    params = build_params(make_request(thinking_budget=4096, max_tokens=16000))
    assert params["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    assert params["max_tokens"] == 16000


def test_building_twice_gives_identical_bytes_and_leaves_the_request_alone() -> None:
    request = make_request(history())
    before = repr(request)
    first = json.dumps(build_params(request))
    assert json.dumps(build_params(request)) == first
    assert repr(request) == before
    assert "cache_control" not in json.dumps(READ_TOOL.input_schema)


async def test_sdk_sends_the_built_request(server: ReplayServer) -> None:
    server.enqueue(anthropic_text_turn("ok"))
    request = make_request(history(), thinking_budget=2048)
    await run_ok(server, request)
    (sent,) = server.requests
    assert sent.path == "/v1/messages"
    assert sent.api_key() == API_KEY
    assert sent.body == {**build_params(request), "stream": True}


# --- stream edge cases ---------------------------------------------------------------


async def test_two_turn_tool_conversation_through_the_replay_server(server: ReplayServer) -> None:
    call = ToolCall("toolu_9", "Read", {"file_path": "README.md"})
    server.enqueue(anthropic_tool_turn(call, text="Reading."), anthropic_text_turn("It is empty."))
    first = await run_ok(server)
    assert first.stop_reason == "tool_use"
    assert first.content[1] == {
        "type": "tool_use",
        "id": "toolu_9",
        "name": "Read",
        "input": call.input,
    }
    follow_up = [
        user_text("hi"),
        Message("assistant", (TextBlock("Reading."), ToolUseBlock("toolu_9", "Read", call.input))),
        Message("user", (ToolResultBlock("toolu_9", ""),)),
    ]
    second = await run_ok(server, make_request(follow_up))
    assert (second.text(), second.stop_reason) == ("It is empty.", "end_turn")
    sent = server.requests[1].body["messages"][-1]["content"]
    assert sent == [
        {"type": "tool_result", "tool_use_id": "toolu_9", "cache_control": {"type": "ephemeral"}}
    ]


async def test_generated_thinking_turn_round_trips(server: ReplayServer) -> None:
    server.enqueue(anthropic_turn(thinking=("Think a lot about it.", "sig=="), text="Done."))
    result = await run_ok(server)
    assert result.content == [
        {"type": "thinking", "thinking": "Think a lot about it.", "signature": "sig=="},
        {"type": "text", "text": "Done."},
    ]


async def test_context_window_stop_reason_reads_as_max_tokens(server: ReplayServer) -> None:
    server.enqueue(anthropic_text_turn("cut", stop_reason="model_context_window_exceeded"))
    assert (await run_ok(server)).stop_reason == "max_tokens"


async def test_unknown_events_and_block_types_are_skipped(server: ReplayServer) -> None:
    usage = {"input_tokens": 5, "output_tokens": 1}
    message = {"id": "m", "type": "message", "role": "assistant", "content": [], "usage": usage}
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": message},
        {"type": "some_future_event", "payload": {"x": 1}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "future_block"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "future_delta", "x": 1}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "hi"}},
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 3},
        },
        {"type": "message_stop"},
    ]
    server.enqueue(anthropic_stream(events))
    result = await run_ok(server)
    assert result.content == [{"type": "text", "text": "hi"}]
    assert result.usage == Usage(input_tokens=5, output_tokens=3)


async def test_stream_that_ends_without_a_stop_reason_is_a_retryable_error(
    server: ReplayServer,
) -> None:
    usage = {"input_tokens": 5, "output_tokens": 1}
    message = {"id": "m", "type": "message", "role": "assistant", "content": [], "usage": usage}
    server.enqueue(anthropic_stream([{"type": "message_start", "message": message}]))
    error = await run_error(server)
    assert (error.kind, error.retryable) == ("connection", True)


@pytest.mark.parametrize(
    "bad",
    [
        b"event: content_block_delta\ndata: {not json}\n\n",
        b'event: message_delta\ndata: {"type"\n\n',
        b"\xff\xfe garbage\n",
        b'event: message_delta\ndata: {"type":"message_delta"}\n\n',
        b'event: content_block_start\ndata: {"type":"content_block_start","index":1}\n\n',
    ],
    ids=["not-json", "cut-json", "not-utf8", "no-delta", "no-content-block"],
)
async def test_stream_data_that_cannot_be_read_is_a_retryable_server_error(
    server: ReplayServer, bad: bytes
) -> None:
    server.enqueue(fixture_response("anthropic/01_text_basic").insert(4, RawFrame(bad)))
    error = await run_error(server)
    assert (error.kind, error.retryable) == ("server", True)
    assert error.request_id == "req_011CVKq3h7wRZbN5bAq1Ds8X"


async def test_a_message_delta_without_usage_still_stops_the_message(server: ReplayServer) -> None:
    stop = '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null}}'
    response = fixture_response("anthropic/01_text_basic")
    server.enqueue(response.cut(8, Frame(stop, "message_delta"), *(response.frames or ())[9:]))
    result = await run_ok(server)
    assert (result.stop_reason, result.usage) == (
        "end_turn",
        Usage(input_tokens=25, output_tokens=1),
    )


async def test_a_garbage_line_in_the_stream_is_ignored(server: ReplayServer) -> None:
    # A line without a field name's colon is a field with no value, which SSE ignores.
    server.enqueue(fixture_response("anthropic/01_text_basic").insert(4, RawFrame(b"garbage\n")))
    result = await run_ok(server)
    assert result.text() == "Hello! The build passed: 42 tests ran, 0 failed."


async def test_a_connection_lost_after_the_stop_reason_keeps_the_message(
    server: ReplayServer,
) -> None:
    # Only message_stop was still to come: asking again would redo it all.
    fixture = load_fixture("anthropic/01_text_basic")
    server.enqueue(fixture_response(fixture, drop_after=9))
    result = await run_ok(server)
    assert result.content == fixture["expect"]["content"]
    assert (result.stop_reason, result.usage) == ("end_turn", Usage(25, 15))


async def test_dropped_connection_mid_stream_is_a_connection_error(server: ReplayServer) -> None:
    server.enqueue(fixture_response("anthropic/01_text_basic", split=7, drop_after=30))
    error = await run_error(server)
    assert (error.kind, error.retryable) == ("connection", True)
    assert error.request_id == "req_011CVKq3h7wRZbN5bAq1Ds8X"


async def test_stalled_stream_is_a_timeout_error(server: ReplayServer) -> None:
    server.enqueue(anthropic_text_turn("slow", frame_delay=1.0))
    error = await run_error(server, timeout=0.3)
    assert (error.kind, error.retryable) == ("timeout", True)


async def test_refused_connection_is_a_connection_error() -> None:
    with ReplayServer() as gone:
        base_url = gone.base_url
    _, error = await replay(base_url)
    assert error is not None
    assert (error.kind, error.retryable) == ("connection", True)


@pytest.mark.parametrize(
    ("status", "error_type", "message", "kind", "retryable"),
    [
        (500, "api_error", "Internal server error", "server", True),
        (503, "api_error", "Service unavailable", "server", True),
        (403, "permission_error", "no access to model", "permission", False),
        (404, "not_found_error", "model: claude-x", "not_found", False),
        (400, "invalid_request_error", "messages: roles must alternate", "invalid_request", False),
        (413, "request_too_large", "Request exceeds the maximum size", "invalid_request", False),
    ],
)
async def test_http_errors_are_classified_by_type_and_status(
    server: ReplayServer, status: int, error_type: str, message: str, kind: str, retryable: bool
) -> None:
    server.enqueue(anthropic_error(status, error_type, message, request_id="req_x"))
    error = await run_error(server)
    assert (error.kind, error.retryable, error.status) == (kind, retryable, status)
    assert error.request_id == "req_x"


async def test_retry_after_ms_wins_over_retry_after(server: ReplayServer) -> None:
    headers = {"retry-after-ms": "1500", "retry-after": "2"}
    server.enqueue(anthropic_error(429, "rate_limit_error", "slow down", headers=headers))
    assert (await run_error(server)).retry_after == 1.5


def test_retry_after_accepts_an_http_date() -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    seconds = retry_after_seconds({"retry-after": when})
    assert seconds is not None and 25 <= seconds <= 31
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


# --- the replay server as a subprocess ----------------------------------------------


async def test_replay_server_runs_a_scripted_conversation_as_a_subprocess(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    call = {"id": "toolu_1", "name": "Read", "input": {"file_path": "a.py"}}
    script.write_text(
        json.dumps(
            [
                {"anthropic_turn": {"tool_calls": [call]}, "split": 7},
                {"fixture": "anthropic/01_text_basic"},
            ]
        )
    )
    log = tmp_path / "requests.jsonl"
    server_py = Path(__file__).with_name("replay_server.py")
    args = [sys.executable, str(server_py), "--script", str(script), "--log", str(log)]
    with subprocess.Popen(args, stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None
            port = int(proc.stdout.readline())
            base_url = f"http://127.0.0.1:{port}"
            first, _ = await replay(base_url)
            second, _ = await replay(base_url)
        finally:
            proc.terminate()
    assert collect(first).content[0]["input"] == {"file_path": "a.py"}
    assert collect(second).stop_reason == "end_turn"
    assert [r["path"] for r in read_log(log)] == ["/v1/messages", "/v1/messages"]


# --- images ------------------------------------------------------------------------------

PNG_DATA = "iVBORw0KGgo="
IMAGE = ImageBlock("image/png", PNG_DATA, "shot.png", 3, 2)
IMAGE_PARAM = {
    "type": "image",
    "source": {"type": "base64", "media_type": "image/png", "data": PNG_DATA},
}


def image_history() -> list[Message]:
    read = ToolUseBlock("toolu_1", "Read", {"file_path": "shot.png"})
    result = ToolResultBlock("toolu_1", (TextBlock("Image shot.png (png 3x2)."), IMAGE))
    return [
        Message("user", (TextBlock("What is this?"), IMAGE)),
        Message("assistant", (read,)),
        Message("user", (result,)),
    ]


def test_images_go_as_base64_image_blocks_also_inside_tool_results() -> None:
    messages = build_params(make_request(image_history()))["messages"]
    assert messages[0]["content"] == [{"type": "text", "text": "What is this?"}, IMAGE_PARAM]
    assert messages[2]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": [{"type": "text", "text": "Image shot.png (png 3x2)."}, IMAGE_PARAM],
            "cache_control": {"type": "ephemeral"},
        }
    ]


def test_without_vision_every_image_is_a_note() -> None:
    body = json.dumps(build_params(make_request(image_history()), vision=False))
    assert PNG_DATA not in body and '"image"' not in body
    assert body.count("[image: shot.png, png 3x2] Not shown: the model claude-replay-test") == 2


async def test_the_sdk_sends_the_image_blocks(server: ReplayServer) -> None:
    server.enqueue(anthropic_text_turn("A chart."))
    request = make_request(image_history())
    await run_ok(server, request)
    (sent,) = server.requests
    assert sent.body == {**build_params(request), "stream": True}
    assert sent.body["messages"][0]["content"][1] == IMAGE_PARAM


async def test_the_vision_setting_overrides_the_model_table(server: ReplayServer) -> None:
    server.enqueue(anthropic_text_turn("I cannot see it."))
    provider = AnthropicProvider(api_key=API_KEY, base_url=server.base_url, vision=False)
    try:
        await drain(provider, make_request(image_history()))
    finally:
        await provider.aclose()
    (sent,) = server.requests
    assert PNG_DATA not in json.dumps(sent.body)
