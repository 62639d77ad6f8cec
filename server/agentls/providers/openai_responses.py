"""OpenAI's Responses API as a `Provider` (setting `openaiApi`).

It wraps the Chat Completions provider, whose SDK client, model list and connection
pool it shares, and posts what `responses.create(stream=True)` would instead. The SDK's
`responses.stream()` helper is not used: it rebuilds a snapshot of the whole response
on every event (each text delta re-copies the text so far), raises its own RuntimeError
and AssertionError on streams it finds inconsistent, and hides the HTTP response that
carries the request id. Like the Chat Completions provider, the SDK's own retries are
off and the loop retries with the classification made here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import openai

from agentls.images import supports_vision
from agentls.providers.base import (
    MALFORMED_STREAM,
    ModelInfo,
    ModelRequest,
    ProviderError,
    StreamEvent,
    malformed_stream,
    redacted,
)
from agentls.providers.openai_compat import OpenAIProvider, post_stream
from agentls.providers.openai_errors import api_error, connection_error
from agentls.providers.responses_body import ResponsesBody
from agentls.providers.responses_request import ResponsesOptions
from agentls.providers.responses_stream import ResponseFold


class OpenAIResponsesProvider:
    """Streams OpenAI Responses through the client of a Chat Completions provider."""

    name = "openai"

    def __init__(
        self,
        chat: OpenAIProvider,
        vision: bool | None = None,
        options: ResponsesOptions = ResponsesOptions(),
    ) -> None:
        self._chat = chat
        # The `vision` setting; None lets the model table decide for each request's model.
        self._vision = vision
        self._body = ResponsesBody(options)

    @property
    def endpoint(self) -> str:
        return self._chat.endpoint

    async def list_models(self) -> list[ModelInfo]:
        """GET /models, as the Chat Completions provider asks it."""
        return await self._chat.list_models()

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._chat.aclose()

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """One model response as normalised events; raises ProviderError on any failure."""
        client = self._chat.client
        fold = ResponseFold()
        try:
            body = self._body.encode(request, supports_vision(request.model, self._vision))
            events = await post_stream(client, "/responses", body, openai.types.responses.Response)
            fold.request_id = events.response.headers.get("x-request-id")
            async with events:
                async for event in events:
                    for out in fold.feed(event):
                        yield out
        # After response.completed nothing is missing: a break now is not asked again.
        except openai.APIConnectionError as exc:
            if not fold.stopped:
                raise connection_error(exc, fold.request_id) from exc
        except openai.APIError as exc:
            raise redacted(api_error(exc, fold.request_id), client.api_key) from exc
        except MALFORMED_STREAM as exc:
            if not fold.stopped:
                raise malformed_stream(fold.request_id) from exc
        if not fold.stopped:
            # Ended cleanly without response.completed (or failed/incomplete): a proxy or
            # server that closed early. The message may be cut anywhere: ask again.
            raise ProviderError(
                "connection",
                "the stream ended before the response was complete (no response.completed)",
                retryable=True,
                request_id=fold.request_id,
            )
