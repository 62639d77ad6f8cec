"""OpenAI Chat Completions, and the servers that copy it, as a `Provider`.

One provider covers api.openai.com and the compatible servers people run locally or
through proxies (vLLM, Ollama, llama.cpp, DeepSeek, ...). They differ in small ways this
module absorbs: where usage arrives, what the reasoning field is called, and how parallel
tool-call fragments are indexed. Only standard request fields are sent, because the strict
servers reject unknown ones. What `create(stream=True)` sends is posted (not the `.stream()`
helper, which raises on `finish_reason: length` where the loop wants to continue), and
its chunks are read as parsed JSON. The
SDK's own retries are off: the loop retries, using the classification made here.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

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
from agentls.providers.http_clients import SharedHttpClients, connection_key
from agentls.providers.openai_body import ChatBody
from agentls.providers.openai_errors import api_error, connection_error
from agentls.providers.openai_request import PLACEHOLDER_API_KEY, RequestOptions
from agentls.providers.openai_stream import ChunkFold, watch_done

# --- provider -----------------------------------------------------------------------


def _resolve_api_key(api_key: str | None, base_url: str | None) -> str | None:
    """The key to give the SDK; None lets it read OPENAI_API_KEY."""
    if api_key is not None or os.environ.get("OPENAI_API_KEY"):
        return api_key
    custom_server = base_url or os.environ.get("OPENAI_BASE_URL")
    return PLACEHOLDER_API_KEY if custom_server else None


def _client(
    api_key: str | None, base_url: str | None, timeout: float, http: Any
) -> openai.AsyncOpenAI:
    try:
        return openai.AsyncOpenAI(
            api_key=_resolve_api_key(api_key, base_url),
            base_url=base_url,
            timeout=timeout,
            max_retries=0,
            http_client=http,
        )
    except openai.OpenAIError as exc:
        raise ProviderError(
            "authentication", "no OpenAI API key is configured", retryable=False
        ) from exc


def _http(shared: SharedHttpClients | None, key: tuple[str, ...]) -> Any:
    """The daemon's client for these connection settings; None: the SDK makes its own."""
    return shared.get(key, openai.DefaultAsyncHttpxClient) if shared is not None else None


class OpenAIProvider:
    """Streams Chat Completions from OpenAI or any OpenAI-compatible server."""

    name = "openai"

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 600.0,
        vision: bool | None = None,
        options: RequestOptions = RequestOptions(),
        client: openai.AsyncOpenAI | None = None,
        shared: SharedHttpClients | None = None,
        owns_http: bool = True,
    ) -> None:
        # The `vision` setting; None lets the model table decide for each request's model.
        self._vision = vision
        self._body = ChatBody(options)
        http = None if client else _http(shared, connection_key("openai", base_url, api_key))
        self._client = client or _client(api_key, base_url, timeout, http)
        # A shared HTTP client (taken here, or under a given `client` with `owns_http`
        # False) outlives this provider: its owner closes it.
        self._owns_http = owns_http and http is None

    @classmethod
    def azure(
        cls,
        endpoint: str,
        deployment: str,
        api_version: str,
        api_key: str | None,
        vision: bool | None = None,
        options: RequestOptions = RequestOptions(),
        timeout: float = 600.0,
        shared: SharedHttpClients | None = None,
    ) -> OpenAIProvider:
        """Azure OpenAI: the same Chat Completions, routed by deployment, keyed by `api-key`."""
        http = _http(shared, connection_key("azure", endpoint, api_key))
        client = openai.AsyncAzureOpenAI(
            azure_endpoint=endpoint,
            azure_deployment=deployment,
            api_version=api_version,
            api_key=api_key,
            timeout=timeout,
            max_retries=0,
            http_client=http,
        )
        provider = cls(vision=vision, options=options, client=client, owns_http=http is None)
        provider.name = "azure"
        return provider

    @property
    def endpoint(self) -> str:
        return str(self._client.base_url)

    @property
    def client(self) -> openai.AsyncOpenAI:
        """The SDK client; the Responses provider streams through the same one."""
        return self._client

    async def list_models(self) -> list[ModelInfo]:
        """GET /models; raises ProviderError like a model call."""
        try:
            return [ModelInfo(m.id) async for m in self._client.models.list()]
        except openai.APIConnectionError as exc:
            raise connection_error(exc, None) from exc
        except openai.APIError as exc:
            raise self._redacted(api_error(exc, None)) from exc

    async def aclose(self) -> None:
        """Close the HTTP connection pool, unless it is shared with other sessions."""
        if self._owns_http:
            await self._client.close()

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """One model response as normalised events; raises ProviderError on any failure."""
        fold = ChunkFold()
        request_id: str | None = None
        try:
            vision = supports_vision(request.model, self._vision)
            chunks = await post_stream(
                self._client,
                "/chat/completions",
                self._body.encode(request, vision),
                openai.types.chat.ChatCompletion,
            )
            request_id = chunks.response.headers.get("x-request-id")
            done = watch_done(chunks)
            async with chunks:
                async for chunk in chunks:
                    for out in fold.feed(chunk):
                        yield out
        # After the finish_reason only usage and [DONE] follow: the message is whole, and
        # a stream that breaks now is not asked again (that would redo it all for usage).
        except openai.APIConnectionError as exc:
            if not fold.stopped:
                raise connection_error(exc, request_id) from exc
        except openai.APIError as exc:
            raise self._redacted(api_error(exc, request_id)) from exc
        except MALFORMED_STREAM as exc:
            if not fold.stopped:
                raise malformed_stream(request_id) from exc
        if not fold.stopped and not done.seen:
            # Ended cleanly but with neither: a proxy or server that closed the stream
            # early. The message may be cut anywhere (mid-text, mid-arguments): retry it.
            raise ProviderError(
                "connection",
                "the stream ended before the message was complete (no finish_reason, no [DONE])",
                retryable=True,
                request_id=request_id,
            )
        for out in fold.finish():
            yield out

    def _redacted(self, error: ProviderError) -> ProviderError:
        return redacted(error, self._client.api_key)


async def post_stream(
    client: openai.AsyncOpenAI, path: str, body: bytes, cast_to: type[Any]
) -> openai.AsyncStream[Any]:
    """Stream what the SDK's `create(stream=True, ...)` would post to `path` (Chat
    Completions, Responses), through the same client `post`: credentials, headers, errors
    and streaming stay the SDK's. Skipped: its type-driven walk of every message (about
    230 µs a message), converting and encoding again what the last request already had
    (openai_body.py, responses_body.py) and typed events (each event's JSON is read as it
    is: openai_stream.py, responses_stream.py)."""
    stream: openai.AsyncStream[Any] = await client.post(
        path,
        content=body,
        options={"security": {"bearer_auth": True}},
        cast_to=cast_to,
        stream=True,
        stream_cls=openai.AsyncStream[object],
    )
    return stream
