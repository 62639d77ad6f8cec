"""The Responses provider posts what `responses.create` would, and reads each event's JSON
as the SDK's typed event would be read.

The provider skips the SDK's type-driven walk of the params and its typed events, posting
through the client's own `post`. These tests hold it to the SDK: the request on the wire
is `responses.create(stream=True, **build_params(...))`'s, and the fold gives the same
events (and the same errors) from the plain JSON as from the SDK's typed events, over
every streamed Responses fixture: text, reasoning, tool calls, refusal, usage, failures.
"""

from __future__ import annotations

from typing import Any

import openai
import pytest

from agentls.providers.base import ProviderError, StreamEvent
from agentls.providers.openai_compat import OpenAIProvider
from agentls.providers.openai_responses import OpenAIResponsesProvider
from agentls.providers.responses_request import build_params
from agentls.providers.responses_stream import ResponseFold
from replay_server import ReplayServer, ToolCall, fixture_names, fixture_response, load_fixture
from responses_replay import responses_turn
from test_provider_responses import history, make_request

API_KEY = "sk-responses-post-test"
# Headers that name one request (or the platform probe the SDK makes once per client).
PER_REQUEST = {"x-stainless-retry-count", "x-stainless-read-timeout", "content-length"}
# Every fixture the server streams (the HTTP failures never reach the fold).
STREAMED = [
    name
    for name in fixture_names("openai_responses")
    if "http_status" not in load_fixture(name)["expect"]
]


def provider_for(server: ReplayServer) -> OpenAIResponsesProvider:
    return OpenAIResponsesProvider(OpenAIProvider(API_KEY, server.openai_base_url))


async def test_the_request_is_the_one_create_sends() -> None:
    request = make_request(history(), model="o3")
    with ReplayServer([responses_turn(text="ok"), responses_turn(text="ok")]) as server:
        provider = provider_for(server)
        client = openai.AsyncOpenAI(api_key=API_KEY, base_url=server.openai_base_url)
        try:
            async for _event in provider.stream(request):
                pass
            events = await client.responses.create(stream=True, **build_params(request))
            async for _typed in events:
                pass
        finally:
            await provider.aclose()
            await client.close()
        ours, sdk = server.requests
    assert (ours.method, ours.path, ours.body) == (sdk.method, sdk.path, sdk.body)
    assert ours.body["stream"] is True and ours.body["input"] and ours.body["tools"]
    drop = PER_REQUEST | {"x-stainless-async", "x-stainless-raw-response"}
    assert {k: v for k, v in ours.headers.items() if k.lower() not in drop} == {
        k: v for k, v in sdk.headers.items() if k.lower() not in drop
    }


async def _from_provider(server: ReplayServer) -> tuple[list[StreamEvent], Any]:
    provider = provider_for(server)
    events: list[StreamEvent] = []
    try:
        async for event in provider.stream(make_request()):
            events.append(event)
    except ProviderError as exc:
        return events, (exc.kind, exc.message, exc.retryable, exc.request_id)
    finally:
        await provider.aclose()
    return events, None


async def _from_typed_events(server: ReplayServer, body: dict[str, Any]) -> tuple[list[Any], Any]:
    client = openai.AsyncOpenAI(api_key=API_KEY, base_url=server.openai_base_url, max_retries=0)
    fold = ResponseFold()
    events: list[StreamEvent] = []
    try:
        stream = await client.responses.create(stream=True, **body)
        fold.request_id = stream.response.headers.get("x-request-id")
        async for typed in stream:
            assert isinstance(typed, openai.BaseModel), typed
            events += fold.feed(typed)
    except ProviderError as exc:
        return events, (exc.kind, exc.message, exc.retryable, exc.request_id)
    finally:
        await client.close()
    return events, None


@pytest.mark.parametrize("name", STREAMED)
async def test_plain_json_events_fold_as_the_sdks_typed_events(name: str) -> None:
    fixture = load_fixture(name)
    body = {k: v for k, v in fixture["request"]["json"].items() if k != "stream"}
    with ReplayServer([fixture_response(fixture), fixture_response(fixture)]) as server:
        from_json = await _from_provider(server)
        typed = await _from_typed_events(server, body)
    assert from_json == typed
    assert from_json[0] or from_json[1]


async def test_every_kind_of_event_folds_alike() -> None:
    """Reasoning in two summary parts, a refusal, text, calls and cached usage at once."""
    turn = responses_turn(
        reasoning=(["First.", "Second."], "enc"),
        refusal="No.",
        text="Reading.",
        tool_calls=(ToolCall("call_a", "Read", {"p": "a.py"}), ToolCall("call_b", "Read", {})),
        cached_tokens=30,
    )
    with ReplayServer([turn, turn]) as server:
        from_json = await _from_provider(server)
        typed = await _from_typed_events(server, {"model": "gpt-replay", "input": "hi"})
    kinds = {type(event).__name__ for event in from_json[0]}
    assert {"ThinkingDelta", "EncryptedReasoning", "TextDelta", "ToolUseStart"} <= kinds
    assert {"ToolInputDelta", "UsageUpdate", "MessageStop"} <= kinds
    assert from_json == typed
