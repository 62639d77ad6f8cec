"""The Anthropic Messages API as a `Provider`: raw SSE events folded into normalised ones.

Raw `messages.create(stream=True)` events are used rather than the `.stream()` helper, so
each wire event maps to our events in one place and nothing is accumulated twice. Requests
carry prompt-cache breakpoints on the stable prefix (tools, static system prompt) and on the
newest message, because an agent loop resends the whole history every turn. The SDK's own
retries are off: the loop retries, using the `ProviderError` classification made here.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anthropic
from anthropic import types as wire

from agentls.images import supports_vision, without_images
from agentls.messages import (
    ContentBlock,
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from agentls.output_limits import stated_output_limit
from agentls.providers.base import (
    MALFORMED_STREAM,
    BlockStop,
    ErrorKind,
    MessageStop,
    ModelInfo,
    ModelRequest,
    ProviderError,
    SignatureDelta,
    StopReason,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolInputDelta,
    ToolSpec,
    ToolUseStart,
    UsageUpdate,
    malformed_stream,
    redacted,
)
from agentls.providers.http_errors import KIND_BY_STATUS, retry_after_seconds
from agentls.usage import Usage

_EPHEMERAL = {"type": "ephemeral"}

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
    "pause_turn": "pause_turn",
    # The docs say to treat it as truncated output, which is what max_tokens means to the loop.
    "model_context_window_exceeded": "max_tokens",
}


# --- request ------------------------------------------------------------------------


def build_params(request: ModelRequest, vision: bool = True) -> dict[str, Any]:
    """The keyword arguments of `messages.create` for `request` (without `stream`).

    Without `vision`, every image goes as a note saying the model cannot see it.
    """
    messages = request.messages if vision else without_images(request.messages, request.model)
    params: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": message_params(messages),
    }
    system = system_params(request.system_static, request.system_dynamic)
    if system:
        params["system"] = system
    if request.tools:
        params["tools"] = tool_params(request.tools)
        if request.tool_choice == "none":
            params["tool_choice"] = {"type": "none"}
    if request.thinking_budget:
        params["thinking"] = {"type": "enabled", "budget_tokens": request.thinking_budget}
    return params


def system_params(static: str, dynamic: str) -> list[dict[str, Any]]:
    """The static part is a cache breakpoint; the dynamic part follows it, uncached."""
    blocks: list[dict[str, Any]] = []
    if static:
        blocks.append({"type": "text", "text": static, "cache_control": dict(_EPHEMERAL)})
    if dynamic:
        blocks.append({"type": "text", "text": dynamic})
    return blocks


def tool_params(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Tool definitions, with a cache breakpoint after the last one."""
    params = [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema}
        for t in tools
    ]
    if params:
        params[-1]["cache_control"] = dict(_EPHEMERAL)
    return params


def message_params(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The history as API messages, with a cache breakpoint on the newest content block.

    Messages left with no content (say, only an empty text block) are dropped, because
    the API rejects empty content.
    """
    params: list[dict[str, Any]] = []
    for message in messages:
        blocks = [b for b in (block_param(b) for b in message.content) if b is not None]
        if blocks:
            params.append({"role": message.role, "content": blocks})
    if params:
        _mark_cache_breakpoint(params[-1]["content"])
    return params


def _mark_cache_breakpoint(blocks: list[dict[str, Any]]) -> None:
    # The API refuses cache_control on thinking blocks, so the breakpoint goes on the
    # last block that can carry one.
    for block in reversed(blocks):
        if block["type"] != "thinking":
            block["cache_control"] = dict(_EPHEMERAL)
            return


def block_param(block: ContentBlock) -> dict[str, Any] | None:
    """One content block on the wire, or None when the API would reject it."""
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text} if block.text else None
    if isinstance(block, ThinkingBlock):
        # An unsigned block came from another provider; Anthropic rejects it.
        if not block.signature:
            return None
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if isinstance(block, ImageBlock):
        return image_param(block)
    return _tool_result_param(block)


def image_param(block: ImageBlock) -> dict[str, Any]:
    """An image as a base64 source (the API takes no name or size)."""
    source = {"type": "base64", "media_type": block.media_type, "data": block.data}
    return {"type": "image", "source": source}


def _tool_result_param(block: ToolResultBlock) -> dict[str, Any]:
    param: dict[str, Any] = {"type": "tool_result", "tool_use_id": block.tool_use_id}
    if isinstance(block.content, str):
        if block.content:
            param["content"] = block.content
    else:
        param["content"] = [
            image_param(p) if isinstance(p, ImageBlock) else {"type": "text", "text": p.text}
            for p in block.content
            if isinstance(p, ImageBlock) or p.text
        ]
    if block.is_error:
        param["is_error"] = True
    return param


# --- stream fold --------------------------------------------------------------------


@dataclass(slots=True)
class StreamFold:
    """Folds raw Messages API events into normalised events, one event at a time.

    Gateways that translate an OpenAI stream (LiteLLM's `/v1/messages`) may cut one tool
    call into consecutive `tool_use` blocks that repeat its id, each with a fragment of
    the input. Those blocks are one call: they fold into the first one's index, whose
    BlockStop is held back until a block that is not such a continuation starts.
    """

    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None
    seen_tool_use: bool = False
    # Blocks we emitted events for; only those get a BlockStop (skipped kinds, such as
    # server tool blocks, stay invisible to the loop).
    open_blocks: set[int] = field(default_factory=set)
    # Wire index → the index of the block it continues (repeated tool_use ids).
    aliases: dict[int, int] = field(default_factory=dict)
    last_tool: tuple[int, str] | None = None
    held_stop: int | None = None

    def feed(self, event: Any) -> list[StreamEvent]:
        """The normalised events for one raw event; unknown event types yield none.

        Raises `_MissingField` for a known event without a field it must have.
        """
        # The SDK builds an unknown event type as the union's first member (a "message_start"
        # without a message), so the wire `type` decides, not the class.
        kind = getattr(event, "type", None)
        _check_fields(kind, event)
        if kind == "message_start" and isinstance(event, wire.RawMessageStartEvent):
            return self._on_message_start(event)
        if kind == "content_block_start" and isinstance(event, wire.RawContentBlockStartEvent):
            return self._on_block_start(event)
        if kind == "content_block_delta" and isinstance(event, wire.RawContentBlockDeltaEvent):
            return self._on_block_delta(event)
        if kind == "content_block_stop" and isinstance(event, wire.RawContentBlockStopEvent):
            return self._on_block_stop(event.index)
        if kind == "message_delta" and isinstance(event, wire.RawMessageDeltaEvent):
            return [*self._release_held(), *self._on_message_delta(event)]
        return []

    @property
    def complete(self) -> bool:
        """True once the stop reason came: only `message_stop` may follow, so a connection
        lost now loses nothing of the message (asking again would redo it all)."""
        return self.stop_reason is not None

    def finish(self) -> list[StreamEvent]:
        """The closing events once the stream has ended."""
        if self.stop_reason is None:
            raise ProviderError(
                "connection", "the stream ended before the message was complete", retryable=True
            )
        self.held_stop = None
        closing: list[StreamEvent] = [BlockStop(i) for i in sorted(self.open_blocks)]
        self.open_blocks.clear()
        return [*closing, MessageStop(self._mapped_stop_reason())]

    def _mapped_stop_reason(self) -> StopReason:
        if self.stop_reason in _STOP_REASONS:
            return _STOP_REASONS[self.stop_reason]
        return "tool_use" if self.seen_tool_use else "end_turn"

    def _on_message_start(self, event: wire.RawMessageStartEvent) -> list[StreamEvent]:
        usage = event.message.usage
        self.usage = Usage(
            input_tokens=usage.input_tokens or 0,
            output_tokens=usage.output_tokens or 0,
            cache_read_tokens=usage.cache_read_input_tokens or 0,
            cache_write_tokens=usage.cache_creation_input_tokens or 0,
        )
        return [UsageUpdate(self.usage)]

    def _on_message_delta(self, event: wire.RawMessageDeltaEvent) -> list[StreamEvent]:
        if event.delta.stop_reason is not None:
            self.stop_reason = event.delta.stop_reason
        # Required by the API, but a gateway leaving it out has still said how it stopped.
        if event.usage is not None:
            self.usage = _merge_usage(self.usage, event.usage)
        return [UsageUpdate(self.usage)]

    def _on_block_start(self, event: wire.RawContentBlockStartEvent) -> list[StreamEvent]:
        block, index = event.content_block, event.index
        if block.type == "tool_use" and self._continues_call(block.id):
            assert self.last_tool is not None
            self.aliases[index] = first = self.last_tool[0]
            self.held_stop = None
            return [ToolInputDelta(first, json.dumps(block.input))] if block.input else []
        out: list[StreamEvent] = self._release_held()
        if block.type == "text":
            self.open_blocks.add(index)
            if block.text:
                out.append(TextDelta(index, block.text))
        elif block.type == "thinking":
            self.open_blocks.add(index)
            if block.thinking:
                out.append(ThinkingDelta(index, block.thinking))
            if block.signature:
                out.append(SignatureDelta(index, block.signature))
        elif block.type == "tool_use":
            self.open_blocks.add(index)
            self.seen_tool_use = True
            self.last_tool = (index, block.id)
            out.append(ToolUseStart(index, block.id, block.name))
            # The API streams input as deltas after an empty `{}`; a non-empty start
            # input only comes from servers that send the whole call at once.
            if block.input:
                out.append(ToolInputDelta(index, json.dumps(block.input)))
        return out

    def _continues_call(self, block_id: str) -> bool:
        """True for a tool_use block right after a stopped one with the same id."""
        return (
            self.last_tool is not None
            and self.held_stop == self.last_tool[0]
            and block_id == self.last_tool[1]
        )

    def _on_block_delta(self, event: wire.RawContentBlockDeltaEvent) -> list[StreamEvent]:
        delta = event.delta
        index = self.aliases.get(event.index, event.index)
        if index not in self.open_blocks:
            return []
        if delta.type == "text_delta" and delta.text:
            return [TextDelta(index, delta.text)]
        if delta.type == "thinking_delta" and delta.thinking:
            return [ThinkingDelta(index, delta.thinking)]
        if delta.type == "signature_delta":
            return [SignatureDelta(index, delta.signature)]
        if delta.type == "input_json_delta" and delta.partial_json:
            return [ToolInputDelta(index, delta.partial_json)]
        return []

    def _on_block_stop(self, wire_index: int) -> list[StreamEvent]:
        index = self.aliases.get(wire_index, wire_index)
        if index not in self.open_blocks:
            return []
        if self.last_tool is not None and index == self.last_tool[0]:
            # Held until we know no continuation of this call follows.
            self.held_stop = index
            return []
        self.open_blocks.discard(index)
        return [BlockStop(index)]

    def _release_held(self) -> list[StreamEvent]:
        if self.held_stop is None:
            return []
        index, self.held_stop = self.held_stop, None
        self.open_blocks.discard(index)
        return [BlockStop(index)]


class _MissingField(Exception):
    """A known stream event without a field it must have."""


# The fields each event must carry (the SDK builds events without validating them).
_REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    "message_start": ("message",),
    "content_block_start": ("index", "content_block"),
    "content_block_delta": ("index", "delta"),
    "content_block_stop": ("index",),
    "message_delta": ("delta",),
}


def _check_fields(kind: object, event: Any) -> None:
    for name in _REQUIRED_FIELDS.get(kind, ()) if isinstance(kind, str) else ():
        if getattr(event, name, None) is None:
            raise _MissingField(f"a {kind} event without {name}")
    if kind == "message_start" and getattr(event.message, "usage", None) is None:
        raise _MissingField("a message_start event without message.usage")


def _merge_usage(usage: Usage, delta: wire.MessageDeltaUsage) -> Usage:
    """message_delta usage is cumulative; its null fields keep the message_start values."""
    return Usage(
        input_tokens=_pick(delta.input_tokens, usage.input_tokens),
        output_tokens=_pick(delta.output_tokens, usage.output_tokens),
        cache_read_tokens=_pick(delta.cache_read_input_tokens, usage.cache_read_tokens),
        cache_write_tokens=_pick(delta.cache_creation_input_tokens, usage.cache_write_tokens),
    )


def _pick(new: int | None, old: int) -> int:
    return old if new is None else new


# --- errors -------------------------------------------------------------------------

_KIND_BY_TYPE: dict[str, tuple[ErrorKind, bool]] = {
    "overloaded_error": ("overloaded", True),
    "rate_limit_error": ("rate_limit", True),
    "api_error": ("server", True),
    "timeout_error": ("timeout", True),
    "authentication_error": ("authentication", False),
    "permission_error": ("permission", False),
    "not_found_error": ("not_found", False),
    "request_too_large": ("invalid_request", False),
    "invalid_request_error": ("invalid_request", False),
    "billing_error": ("permission", False),
}


def classify(status: int | None, error_type: str | None, message: str) -> tuple[ErrorKind, bool]:
    """(kind, retryable) from the body's `error.type` first, then the HTTP status.

    A mid-stream `error` event arrives with the stream's status (200), so the type decides.
    """
    if "prompt is too long" in message.lower():
        return "prompt_too_long", False
    if error_type in _KIND_BY_TYPE:
        return _KIND_BY_TYPE[error_type]
    if status in KIND_BY_STATUS:
        return KIND_BY_STATUS[status]
    if status is not None and status >= 500:
        return "server", True
    if status is not None and status < 300:
        # An unrecognised error event inside a successful stream: the stream broke.
        return "server", True
    return "unknown", False


def _error_fields(body: object) -> tuple[str | None, str]:
    """(error.type, error.message) of an Anthropic error body, tolerating other shapes."""
    error = body.get("error") if isinstance(body, Mapping) else None
    if not isinstance(error, Mapping):
        return None, str(body) if body else ""
    error_type = error.get("type")
    return (str(error_type) if error_type else None), str(error.get("message") or "")


def _is_transport_error(exc: BaseException, base_name: str = "TransportError") -> bool:
    # Matched by name because the SDK's HTTP library is httpx in anthropic<2 and httpx2
    # after; both name their hierarchy the same.
    return any(
        cls.__name__ == base_name and cls.__module__.startswith("httpx")
        for cls in type(exc).__mro__
    )


def status_error(exc: anthropic.APIStatusError) -> ProviderError:
    """A ProviderError for an HTTP error response or a mid-stream `error` event."""
    error_type, message = _error_fields(exc.body)
    kind, retryable = classify(exc.status_code, error_type, message)
    limit = stated_output_limit(message) if exc.status_code == 400 else None
    label = error_type or f"HTTP {exc.status_code}"
    return ProviderError(
        kind,
        f"Anthropic API {label}: {message or exc.message}",
        retryable=retryable,
        status=exc.status_code,
        retry_after=retry_after_seconds(exc.response.headers),
        request_id=exc.request_id,
        output_limit=limit,
    )


def transport_error(exc: BaseException, request_id: str | None = None) -> ProviderError:
    """A ProviderError for a failed connection, whether the SDK wrapped it or not."""
    if isinstance(exc, anthropic.APITimeoutError) or _is_transport_error(exc, "TimeoutException"):
        return ProviderError(
            "timeout", "Anthropic API request timed out", retryable=True, request_id=request_id
        )
    return ProviderError(
        "connection",
        f"connection to the Anthropic API failed: {type(exc).__name__}",
        retryable=True,
        request_id=request_id,
    )


# --- provider -----------------------------------------------------------------------


class AnthropicProvider:
    """Streams Claude responses through the official SDK."""

    name = "anthropic"

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 600.0,
        vision: bool | None = None,
    ) -> None:
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0
        )
        # The `vision` setting; None lets the model table decide for each request's model.
        self._vision = vision

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
        """Close the HTTP connection pool."""
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
        except _MissingField as exc:
            if not fold.complete:
                raise malformed_stream(request_id, f": {exc}") from exc
        except Exception as exc:
            # Mid-stream, the SDK lets its HTTP library's transport errors through unwrapped.
            if not _is_transport_error(exc):
                raise
            if not fold.complete:
                raise transport_error(exc, request_id) from exc
        for out in fold.finish():
            yield out

    async def _open(self, request: ModelRequest) -> anthropic.AsyncStream[Any]:
        try:
            vision = supports_vision(request.model, self._vision)
            events: anthropic.AsyncStream[Any] = await self._client.messages.create(
                stream=True, **build_params(request, vision)
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
