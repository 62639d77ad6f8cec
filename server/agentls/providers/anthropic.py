"""The Anthropic Messages API as a `Provider`: raw SSE events folded into normalised ones.

Raw `messages.create(stream=True)` events are used rather than the `.stream()` helper, so
each wire event maps to our events in one place and nothing is accumulated twice. The
request goes through the SDK client's own `post` to /v1/messages (what `messages.create`
calls) with a body encoded here, one new message at a time (anthropic_body.py): the
SDK's `create` would deep-copy and re-encode the whole history on every call. The events
come back as parsed JSON, folded by anthropic_stream.py without the SDK's per-event
validation. Requests
carry prompt-cache breakpoints on the stable prefix (tools, static system prompt) and on the
newest message, because an agent loop resends the whole history every turn. The SDK's own
retries are off: the loop retries, using the `ProviderError` classification made here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import anthropic

from agentls.images import supports_vision
from agentls.providers.anthropic_body import RequestBody
from agentls.providers.anthropic_errors import is_transport_error, status_error, transport_error
from agentls.providers.anthropic_stream import MissingField, StreamFold
from agentls.providers.base import (
    MALFORMED_STREAM,
    ModelInfo,
    ModelRequest,
    ProviderError,
    StreamEvent,
    malformed_stream,
    redacted,
)
from agentls.providers.http_clients import SharedHttpClients, connection_key


class AnthropicProvider:
    """Streams Claude responses through the official SDK."""

    name = "anthropic"

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 600.0,
        vision: bool | None = None,
        shared: SharedHttpClients | None = None,
    ) -> None:
        key = connection_key("anthropic", base_url, api_key)
        http = shared.get(key, anthropic.DefaultAsyncHttpxClient) if shared is not None else None
        # A shared client outlives this provider: its owner closes it.
        self._owns_http = http is None
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0, http_client=http
        )
        # The `vision` setting; None lets the model table decide for each request's model.
        self._vision = vision
        self._body = RequestBody()

    @property
    def endpoint(self) -> str:
        return str(self._client.base_url)

    async def list_models(self) -> list[ModelInfo]:
        """GET /v1/models, every page; raises ProviderError like a model call."""
        try:
            return [ModelInfo(m.id, m.display_name) async for m in self._client.models.list()]
        except anthropic.APIStatusError as exc:
            raise self._redacted(status_error(exc)) from exc
        except anthropic.APIConnectionError as exc:
            raise transport_error(exc) from exc

    async def aclose(self) -> None:
        """Close the HTTP connection pool, unless it is shared with other sessions."""
        if self._owns_http:
            await self._client.close()

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """One model response as normalised events; raises ProviderError on any failure."""
        fold = StreamFold()
        request_id: str | None = None
        try:
            events = await self._open(request)
            request_id = events.response.headers.get("request-id")
            async with events:
                async for event in events:
                    for out in fold.feed(event):
                        yield out
        except anthropic.APIStatusError as exc:
            raise self._redacted(status_error(exc)) from exc
        except anthropic.APIConnectionError as exc:
            if not fold.complete:
                raise transport_error(exc, request_id) from exc
        except anthropic.APIError as exc:
            raise self._redacted(_unknown_error(exc, request_id)) from exc
        except MALFORMED_STREAM as exc:
            if not fold.complete:
                raise malformed_stream(request_id) from exc
        except MissingField as exc:
            if not fold.complete:
                raise malformed_stream(request_id, f": {exc}") from exc
        except Exception as exc:
            # Mid-stream, the SDK lets its HTTP library's transport errors through unwrapped.
            if not is_transport_error(exc):
                raise
            if not fold.complete:
                raise transport_error(exc, request_id) from exc
        for out in fold.finish():
            yield out

    async def _open(self, request: ModelRequest) -> anthropic.AsyncStream[object]:
        try:
            vision = supports_vision(request.model, self._vision)
            # `messages.create(stream=True, **build_params(...))` sends the same body.
            events: anthropic.AsyncStream[object] = await self._client.post(
                "/v1/messages",
                cast_to=anthropic.types.Message,
                content=self._body.encode(request, vision),
                stream=True,
                # Each event as its parsed JSON, not validated into the SDK's event types.
                stream_cls=anthropic.AsyncStream[object],
            )
            return events
        except TypeError as exc:
            # The SDK raises TypeError when no credential can be resolved.
            if "authentication" not in str(exc):
                raise
            raise ProviderError(
                "authentication", "no Anthropic API key is configured", retryable=False
            ) from exc

    def _redacted(self, error: ProviderError) -> ProviderError:
        return redacted(error, self._client.api_key)


def _unknown_error(exc: anthropic.APIError, request_id: str | None) -> ProviderError:
    return ProviderError(
        "unknown", f"Anthropic API error: {exc.message}", retryable=False, request_id=request_id
    )
