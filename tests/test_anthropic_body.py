"""The Anthropic provider's per-call savings keep what goes on the wire and comes back.

The request body built one new message at a time is the body built whole (`RequestBody`
reuses the JSON of the messages the previous request already carried; `build_params`
converts the whole history every time and stays the reference), and the stream's events
are folded from their plain JSON.
"""

from __future__ import annotations

import json
from dataclasses import replace
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
from agentls.pairing import Alternation
from agentls.providers.anthropic import AnthropicProvider
from agentls.providers.anthropic_body import RequestBody
from agentls.providers.anthropic_request import build_params
from agentls.providers.anthropic_stream import MissingField, StreamFold
from agentls.providers.base import (
    BlockStop,
    MessageStop,
    ModelRequest,
    TextDelta,
    ToolInputDelta,
    ToolUseStart,
    UsageUpdate,
)
from agentls.usage import Usage
from replay_server import ReplayServer, anthropic_text_turn, collect

READ_TOOL = ToolSpec("Read", "Read a file.", {"type": "object", "properties": {}})
IMAGE = ImageBlock("image/png", "aGVsbG8=", name="shot.png")


def request(messages: list[Message], **kwargs: Any) -> ModelRequest:
    return ModelRequest(
        model=kwargs.pop("model", "claude-sonnet-4-5"),
        system_static="You are a coding agent.",
        system_dynamic="cwd: /repo",
        messages=list(messages),
        tools=kwargs.pop("tools", [READ_TOOL]),
        **kwargs,
    )


def whole(req: ModelRequest, vision: bool = True) -> dict[str, Any]:
    return {**build_params(req, vision), "stream": True}


def conversation() -> list[Message]:
    """A turn's messages in the order the loop appends them, with the awkward cases: an
    image in a tool result, thinking last in a message, a message that encodes to nothing."""
    return [
        user_text("Look at the screenshot"),
        Message(
            "assistant",
            (
                ThinkingBlock("Read it first.", signature="sig-1"),
                ToolUseBlock("toolu_1", "Read", {"file_path": "shot.png"}),
            ),
        ),
        Message("user", (ToolResultBlock("toolu_1", [TextBlock("the image:"), IMAGE]),)),
        Message("assistant", (TextBlock("A login form."), ThinkingBlock("done", "sig-2"))),
        Message("user", (TextBlock(""),)),
        Message("user", (TextBlock("And now?"), IMAGE)),
        Message("assistant", (ThinkingBlock("unsigned, from another provider"),)),
    ]


def test_each_growing_request_equals_the_whole_conversion() -> None:
    body = RequestBody()
    history: list[Message] = []
    for message in conversation():
        history.append(message)
        req = request(history, thinking_budget=2048)
        assert json.loads(body.encode(req)) == whole(req)
        # Only the new message was converted; the rest came from the previous request.
        assert body.reused == len(history) - 1


def test_after_an_unanswered_message_each_request_still_converts_only_the_new_tail() -> None:
    """An aborted turn leaves a user message unanswered: requests join it with the next one.
    The loop's Alternation hands back the same joined message, so the body keeps reusing."""
    alternation = Alternation()
    body = RequestBody()
    history = [user_text("aborted before the answer"), *conversation()]
    for count in range(2, len(history) + 1):
        req = request(alternation(history[:count]))
        assert json.loads(body.encode(req)) == whole(req)
        if count > 2:
            assert body.reused == len(req.messages) - 1


def test_a_changed_system_prompt_is_sent_as_it_now_is() -> None:
    # The system prompt's JSON is kept while the prompt stays the same; any change of
    # either part (or a part becoming empty) must reach the next body.
    body = RequestBody()
    history = [user_text("hi")]
    prompts = [
        ("You are a coding agent.", "cwd: /repo"),
        ("You are a coding agent.", "cwd: /repo"),
        ("You are a coding agent.", "cwd: /other"),
        ("", "cwd: /other"),
        ("", ""),
        ("Plan mode.", ""),
    ]
    for static, dynamic in prompts:
        req = replace(request(history), system_static=static, system_dynamic=dynamic)
        assert json.loads(body.encode(req)) == whole(req)


def test_a_blind_model_gets_notes_and_a_switch_of_model_or_vision_starts_afresh() -> None:
    body = RequestBody()
    history = conversation()
    for model, vision in (("blind-a", False), ("blind-a", False), ("blind-b", False)):
        req = request(history, model=model)
        sent = json.loads(body.encode(req, vision))
        assert sent == whole(req, vision)
        assert "image" not in {b["type"] for m in sent["messages"] for b in m["content"]}
    assert body.reused == 0
    req = request(history)
    assert json.loads(body.encode(req, True)) == whole(req, True)
    assert body.reused == 0


def test_a_rewritten_history_converts_again_from_where_it_differs() -> None:
    body = RequestBody()
    history = conversation()
    body.encode(request(history))
    # Compaction: a summary replaces the start, the tail is the same objects.
    compacted = [user_text("Summary of the earlier work."), *history[3:]]
    req = request(compacted, tool_choice="none")
    assert json.loads(body.encode(req)) == whole(req)
    assert body.reused == 0
    # The last message replaced by an equal but new object: only it converts again.
    edited = [*compacted[:-1], Message("user", (TextBlock("Changed"),))]
    req = request(edited, tools=[READ_TOOL, ToolSpec("Bash", "Run.", {"type": "object"})])
    assert json.loads(body.encode(req)) == whole(req)
    assert body.reused == len(edited) - 1


def test_nothing_to_send_is_an_empty_list() -> None:
    req = request([Message("user", (TextBlock(""),))], tools=[])
    assert json.loads(RequestBody().encode(req)) == whole(req)


async def test_the_sdk_sends_each_incremental_body_of_a_turn() -> None:
    """Three calls of one provider through the real SDK: every body on the wire is the
    whole conversion of its request."""
    history = [user_text("hi")]
    requests = []
    with ReplayServer([anthropic_text_turn(f"answer {n}") for n in range(3)]) as server:
        provider = AnthropicProvider("sk-ant-test", server.base_url)
        try:
            for n in range(3):
                req = request(history)
                requests.append(req)
                answer = collect([event async for event in provider.stream(req)]).text()
                assert answer == f"answer {n}"
                history = [*history, Message("assistant", (TextBlock(answer),))]
                history.append(user_text(f"next {n}"))
        finally:
            await provider.aclose()
        sent = [r.body for r in server.requests]
    assert sent == [whole(r) for r in requests]


# --- the stream side: events read as plain JSON ------------------------------------------


def test_the_fold_reads_events_as_plain_json() -> None:
    """The provider asks the SDK for each event's parsed JSON (no per-event validation
    into the SDK's types); the fold reads those dicts."""
    usage = {"input_tokens": 7, "output_tokens": 1, "cache_read_input_tokens": 3}
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "m", "usage": usage}},
        {"type": "ping"},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": '{"file_path": "a"}'},
        },
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 9},
        },
        {"type": "message_stop"},
    ]
    fold = StreamFold()
    out = [e for event in events for e in fold.feed(event)] + fold.finish()
    assert [e for e in out if not isinstance(e, UsageUpdate)] == [
        TextDelta(0, "Hi"),
        BlockStop(0),
        ToolUseStart(1, "toolu_1", "Read"),
        ToolInputDelta(1, '{"file_path": "a"}'),
        BlockStop(1),
        MessageStop("tool_use"),
    ]
    assert fold.usage == Usage(input_tokens=7, output_tokens=9, cache_read_tokens=3)


def test_an_event_whose_parts_are_not_objects_is_a_missing_field() -> None:
    fold = StreamFold()
    for bad in (
        {"type": "content_block_delta", "index": 0, "delta": "text"},
        {"type": "content_block_start", "index": "0", "content_block": {"type": "text"}},
        {"type": "message_start", "message": {"id": "m"}},
    ):
        with pytest.raises(MissingField):
            fold.feed(bad)
