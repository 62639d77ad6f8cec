"""The Responses body built one new message at a time is the body built whole.

`ResponsesBody` reuses the JSON of the input items of the messages the previous request
already carried; `build_params` converts the whole history every time and stays the
reference. The histories grow, get compacted, edited and switched to a blind model, and
every body must equal the whole conversion.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from agentls.messages import Message, TextBlock, ThinkingBlock, ToolUseBlock, user_text
from agentls.providers.base import ModelRequest
from agentls.providers.openai_compat import OpenAIProvider
from agentls.providers.openai_responses import OpenAIResponsesProvider
from agentls.providers.responses_body import ResponsesBody
from agentls.providers.responses_request import ResponsesOptions, build_params
from replay_server import ReplayServer, collect
from responses_replay import responses_turn
from test_openai_body import BASH, READ, conversation

REASONED = Message(
    "assistant",
    (
        ThinkingBlock("**Plan**", encrypted_content="gAAAA-1"),
        TextBlock("Reading."),
        TextBlock("Both."),
        ToolUseBlock("call_9", "Read", {"file_path": "x.py"}),
        ThinkingBlock("Anthropic's", "sig"),
        TextBlock("After the call."),
    ),
)


def request(messages: list[Message], **kwargs: Any) -> ModelRequest:
    return ModelRequest(
        model=kwargs.pop("model", "gpt-5"),
        system_static="You are a coding agent.",
        system_dynamic="cwd: /repo",
        messages=list(messages),
        tools=kwargs.pop("tools", [READ]),
        **kwargs,
    )


def whole(
    req: ModelRequest, vision: bool = True, options: ResponsesOptions = ResponsesOptions()
) -> dict[str, Any]:
    return {**build_params(req, vision, options), "stream": True}


def history() -> list[Message]:
    return [*conversation(), REASONED, user_text("go on")]


@pytest.mark.parametrize("options", [ResponsesOptions(), ResponsesOptions("high")])
@pytest.mark.parametrize("model", ["gpt-4.1", "gpt-5"])
def test_each_growing_request_equals_the_whole_conversion(
    model: str, options: ResponsesOptions
) -> None:
    body = ResponsesBody(options)
    grown: list[Message] = []
    for message in history():
        grown.append(message)
        req = request(grown, model=model)
        assert json.loads(body.encode(req)) == whole(req, options=options)
        assert body.reused == len(grown) - 1


def test_a_rewritten_history_converts_again_from_where_it_differs() -> None:
    body = ResponsesBody()
    messages = history()
    assert json.loads(body.encode(request(messages))) == whole(request(messages))
    compacted = [user_text("Summary of the earlier work."), *messages[4:]]
    req = request(compacted, tool_choice="none")
    assert json.loads(body.encode(req)) == whole(req)
    assert body.reused == 0
    edited = [*compacted[:2], Message("assistant", (TextBlock("Changed."),)), *compacted[3:]]
    req = request(edited, tools=[READ, BASH])
    assert json.loads(body.encode(req)) == whole(req)
    assert body.reused == 2
    shorter = edited[:-2]
    req = replace(request(shorter, tools=[]), system_static="", system_dynamic="")
    assert json.loads(body.encode(req)) == whole(req)
    assert body.reused == len(shorter)


def test_a_blind_model_gets_notes_and_a_switch_starts_afresh() -> None:
    body = ResponsesBody()
    messages = history()
    for model, vision in (("blind-a", False), ("blind-a", False), ("blind-b", False)):
        req = request(messages, model=model)
        sent = json.loads(body.encode(req, vision))
        assert sent == whole(req, vision) and "input_image" not in json.dumps(sent)
    assert body.reused == 0
    req = request(messages)
    sent = json.loads(body.encode(req, True))
    assert sent == whole(req, True) and "input_image" in json.dumps(sent)
    assert body.reused == 0


async def test_the_sdk_sends_each_incremental_body_of_a_turn() -> None:
    messages = [user_text("hi")]
    requests = []
    with ReplayServer([responses_turn(text=f"answer {n}") for n in range(3)]) as server:
        provider = OpenAIResponsesProvider(OpenAIProvider("sk-test", server.openai_base_url))
        try:
            for n in range(3):
                req = request(messages)
                requests.append(req)
                answer = collect([event async for event in provider.stream(req)]).text()
                assert answer == f"answer {n}"
                messages = [*messages, Message("assistant", (TextBlock(answer),))]
                messages.append(user_text(f"next {n}"))
        finally:
            await provider.aclose()
        sent = server.requests
    assert [r.body for r in sent] == [whole(r) for r in requests]
    assert {r.headers.get("content-type") for r in sent} == {"application/json"}
