"""The Chat Completions body built one new message at a time is the body built whole.

`ChatBody` reuses the JSON of the messages the previous request already carried;
`build_params` converts the whole history every time and stays the reference. Chat
Completions messages sit beside their neighbours (a user message's tool results must
come right after the assistant's calls, before its text; an assistant's calls ride on
its own message), so the histories here grow, get compacted, edited, switched to a blind
model, and every body must equal the whole conversion.
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
from agentls.providers.base import ModelRequest
from agentls.providers.openai_body import ChatBody
from agentls.providers.openai_compat import OpenAIProvider
from agentls.providers.openai_request import RequestOptions, build_params
from replay_server import ReplayServer, collect, openai_text_turn

READ = ToolSpec("Read", "Read a file.", {"type": "object", "properties": {}})
BASH = ToolSpec("Bash", "Run a command.", {"type": "object"})
IMAGE = ImageBlock("image/png", "aGVsbG8=", name="shot.png")
OPTIONS = [
    RequestOptions(),
    RequestOptions(stream_usage=False, max_tokens_field="max_completion_tokens"),
    RequestOptions(reasoning_effort="high"),
]


def request(messages: list[Message], **kwargs: Any) -> ModelRequest:
    return ModelRequest(
        model=kwargs.pop("model", "gpt-4.1"),
        system_static="You are a coding agent.",
        system_dynamic="cwd: /repo",
        messages=list(messages),
        tools=kwargs.pop("tools", [READ]),
        **kwargs,
    )


def whole(
    req: ModelRequest, vision: bool = True, options: RequestOptions = RequestOptions()
) -> dict[str, Any]:
    return {**build_params(req, vision, options), "stream": True}


def conversation() -> list[Message]:
    """A turn's messages in the order the loop appends them, with the awkward cases: two
    parallel calls, results with text after them, an image in a result, a message that
    gives no API message at all, an assistant with only thinking."""
    return [
        user_text("Look at the screenshot and the config"),
        Message(
            "assistant",
            (
                ThinkingBlock("Read both.", signature="sig-1"),
                TextBlock("Reading."),
                ToolUseBlock("call_1", "Read", {"file_path": "shot.png"}),
                ToolUseBlock("call_2", "Read", {"file_path": "café.toml"}),
            ),
        ),
        Message(
            "user",
            (
                ToolResultBlock("call_1", [TextBlock("the image:"), IMAGE]),
                ToolResultBlock("call_2", "port = 8000"),
                TextBlock("Also check the host."),
            ),
        ),
        Message("assistant", (ToolUseBlock("call_3", "Read", {}),)),
        Message("user", (ToolResultBlock("call_3", "host = 0.0.0.0"),)),
        Message("assistant", (TextBlock("A login form on 0.0.0.0:8000."),)),
        Message("user", (TextBlock(""),)),
        Message("user", (TextBlock("And now?"), IMAGE)),
        Message("assistant", (ThinkingBlock("unsigned, from another provider"),)),
    ]


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("model", ["gpt-4.1", "o3"])
def test_each_growing_request_equals_the_whole_conversion(
    model: str, options: RequestOptions
) -> None:
    body = ChatBody(options)
    history: list[Message] = []
    for message in conversation():
        history.append(message)
        req = request(history, model=model)
        assert json.loads(body.encode(req)) == whole(req, options=options)
        # Only the new message was converted; the rest came from the previous request.
        assert body.reused == len(history) - 1


def test_a_rewritten_history_converts_again_from_where_it_differs() -> None:
    body = ChatBody()
    history = conversation()
    assert json.loads(body.encode(request(history))) == whole(request(history))
    # Compaction: a summary replaces the start (the calls the kept results answered are
    # gone with it), the tail is the same objects.
    compacted = [user_text("Summary of the earlier work."), *history[4:]]
    req = request(compacted, tool_choice="none")
    assert json.loads(body.encode(req)) == whole(req)
    assert body.reused == 0
    # A message in the middle edited (a new object): it and all after it convert again.
    edited = [*compacted[:2], Message("assistant", (TextBlock("Changed."),)), *compacted[3:]]
    req = request(edited, tools=[READ, BASH])
    assert json.loads(body.encode(req)) == whole(req)
    assert body.reused == 2
    # The history grows again from the edited one, and the last message is dropped.
    grown = [*edited, user_text("go on")]
    assert json.loads(body.encode(request(grown))) == whole(request(grown))
    assert body.reused == len(edited)
    shorter = grown[:-2]
    assert json.loads(body.encode(request(shorter))) == whole(request(shorter))
    assert body.reused == len(shorter)


def test_a_changed_system_prompt_is_sent_as_it_now_is() -> None:
    body = ChatBody()
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
    body = ChatBody()
    history = conversation()
    for model, vision in (("blind-a", False), ("blind-a", False), ("blind-b", False)):
        req = request(history, model=model)
        sent = json.loads(body.encode(req, vision))
        assert sent == whole(req, vision)
        assert "image_url" not in json.dumps(sent)
    assert body.reused == 0
    req = request(history)
    sent = json.loads(body.encode(req, True))
    assert sent == whole(req, True) and "image_url" in json.dumps(sent)
    assert body.reused == 0


def test_nothing_to_send_is_an_empty_list() -> None:
    req = replace(
        request([Message("user", (TextBlock(""),))], tools=[]),
        system_static="",
        system_dynamic="",
    )
    assert json.loads(ChatBody().encode(req)) == whole(req)


async def test_the_sdk_sends_each_incremental_body_of_a_turn() -> None:
    """Three calls of one provider through the real SDK: every body on the wire is the
    whole conversion of its request, and its Content-Type is the SDK's."""
    history = [user_text("hi")]
    requests = []
    with ReplayServer([openai_text_turn(f"answer {n}") for n in range(3)]) as server:
        provider = OpenAIProvider("sk-test", server.openai_base_url)
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
        sent = server.requests
    assert [r.body for r in sent] == [whole(r) for r in requests]
    assert {r.headers.get("content-type") for r in sent} == {"application/json"}
