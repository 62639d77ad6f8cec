"""The Chat Completions provider posts what `chat.completions.create` would, and reads each
chunk's JSON as the typed chunk would be read.

The provider skips the SDK's type-driven walk of the params and its typed chunks (a
quarter of a call's CPU), posting through the client's own `post`. These tests hold it to
the SDK: the request on the wire is `create(stream=True, **build_params(...))`'s, and the
fold gives the same events from the plain JSON as from the SDK's `ChatCompletionChunk`s.
"""

from __future__ import annotations

from typing import Any

import openai

from agentls.messages import Message, TextBlock, ToolResultBlock, ToolSpec, ToolUseBlock, user_text
from agentls.providers.base import ModelRequest, StreamEvent
from agentls.providers.openai_compat import OpenAIProvider
from agentls.providers.openai_request import build_params
from agentls.providers.openai_stream import ChunkFold
from replay_server import ReplayServer, ToolCall, openai_turn

READ = ToolSpec("Read", "Read a file.", {"type": "object", "properties": {"p": {"type": "string"}}})
# Headers that name one request (or the platform probe the SDK makes once per client).
PER_REQUEST = {"x-stainless-retry-count", "x-stainless-read-timeout", "content-length"}


def request() -> ModelRequest:
    call = ToolUseBlock("call_1", "Read", {"p": "app.py"})
    return ModelRequest(
        model="gpt-replay",
        system_static="You are a coding agent.",
        system_dynamic="cwd: /repo",
        messages=[
            user_text("Where is the port?"),
            Message("assistant", (TextBlock("Reading."), call)),
            Message("user", (ToolResultBlock("call_1", "PORT = 8000"),)),
        ],
        tools=[READ],
        max_tokens=512,
    )


def turn() -> Any:
    """Reasoning, text, two tool calls and usage: every kind of field the fold reads."""
    return openai_turn(
        reasoning="Look at the file first.",
        text="Reading both.",
        tool_calls=(ToolCall("call_a", "Read", {"p": "a.py"}), ToolCall("call_b", "Read", {})),
        cached_tokens=40,
    )


async def test_the_request_is_the_one_create_sends() -> None:
    with ReplayServer([turn(), turn()]) as server:
        provider = OpenAIProvider("sk-test", server.openai_base_url)
        client = openai.AsyncOpenAI(api_key="sk-test", base_url=server.openai_base_url)
        try:
            async for _event in provider.stream(request()):
                pass
            stream = await client.chat.completions.create(stream=True, **build_params(request()))
            async for _chunk in stream:
                pass
        finally:
            await provider.aclose()
            await client.close()
        ours, sdk = server.requests
    assert (ours.method, ours.path, ours.body) == (sdk.method, sdk.path, sdk.body)
    assert ours.body["stream"] is True and ours.body["messages"]
    drop = PER_REQUEST | {"x-stainless-async", "x-stainless-raw-response"}
    assert {k: v for k, v in ours.headers.items() if k.lower() not in drop} == {
        k: v for k, v in sdk.headers.items() if k.lower() not in drop
    }


async def test_plain_json_chunks_fold_as_the_sdks_typed_chunks() -> None:
    with ReplayServer([turn(), turn()]) as server:
        provider = OpenAIProvider("sk-test", server.openai_base_url)
        client = openai.AsyncOpenAI(api_key="sk-test", base_url=server.openai_base_url)
        try:
            from_json = [event async for event in provider.stream(request())]
            fold = ChunkFold()
            typed: list[StreamEvent] = []
            stream = await client.chat.completions.create(stream=True, **build_params(request()))
            async for chunk in stream:
                assert isinstance(chunk, openai.types.chat.ChatCompletionChunk)
                typed += fold.feed(chunk)
            typed += fold.finish()
        finally:
            await provider.aclose()
            await client.close()
    kinds = {type(event).__name__ for event in from_json}
    assert {"ThinkingDelta", "TextDelta", "ToolUseStart", "ToolInputDelta", "UsageUpdate"} <= kinds
    assert from_json == typed
