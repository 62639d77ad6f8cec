"""OpenAI Chat Completions, and the servers that copy it, as a `Provider`.

One provider covers api.openai.com and the compatible servers people run locally or
through proxies (vLLM, Ollama, llama.cpp, DeepSeek, ...). They differ in small ways this
module absorbs: where usage arrives, what the reasoning field is called, and how parallel
tool-call fragments are indexed. Only standard request fields are sent, because the strict
servers reject unknown ones. `create(stream=True)` is used rather than the `.stream()`
helper, which raises on `finish_reason: length` where the loop wants to continue. The
SDK's own retries are off: the loop retries, using the classification made here.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

import openai

from agentls.config import MaxTokensField, ReasoningEffort
from agentls.images import supports_vision, without_images
from agentls.messages import ImageBlock, Message, TextBlock, ToolResultBlock, ToolUseBlock, new_id
from agentls.model_table import by_model
from agentls.output_limits import stated_output_limit
from agentls.providers.base import (
    MALFORMED_STREAM,
    BlockStop,
    ErrorKind,
    MessageStop,
    ModelInfo,
    ModelRequest,
    ProviderError,
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

# Local servers ignore the key, but the SDK refuses to start without one.
PLACEHOLDER_API_KEY = "not-needed"

# Non-standard delta fields carrying reasoning text: DeepSeek/vLLM/SGLang, then Ollama.
_REASONING_FIELDS = ("reasoning_content", "reasoning")


# --- request ------------------------------------------------------------------------

# OpenAI's reasoning models refuse `max_tokens` and `temperature`.
_REASONING_MODELS = ("o1", "o3", "o4", "gpt-5")


@dataclass(frozen=True, slots=True)
class RequestOptions:
    """The request fields that differ between servers, from settings.

    `max_tokens_field` None picks by model: `max_completion_tokens` for OpenAI's reasoning
    models, else `max_tokens` (vLLM, Ollama and llama.cpp accept only that one, and
    api.openai.com still honours it for other models).
    """

    stream_usage: bool = True
    max_tokens_field: MaxTokensField | None = None
    reasoning_effort: ReasoningEffort | None = None


def is_reasoning_model(model: str) -> bool:
    """OpenAI's o-series and gpt-5 family, by name."""
    return by_model(model, ((_REASONING_MODELS, True),), False)


def build_params(
    request: ModelRequest, vision: bool = True, options: RequestOptions = RequestOptions()
) -> dict[str, Any]:
    """The keyword arguments of `chat.completions.create` for `request` (without `stream`).

    Without `vision`, every image goes as a note saying the model cannot see it.
    """
    if not vision:
        request = replace(request, messages=without_images(request.messages, request.model))
    reasoning = is_reasoning_model(request.model)
    field_name = options.max_tokens_field or (
        "max_completion_tokens" if reasoning else "max_tokens"
    )
    params: dict[str, Any] = {
        "model": request.model,
        "messages": message_params(request),
        field_name: request.max_tokens,
    }
    if options.stream_usage:
        params["stream_options"] = {"include_usage": True}
    if options.reasoning_effort and reasoning:
        params["reasoning_effort"] = options.reasoning_effort
    if request.tools:
        params["tools"] = tool_params(request.tools)
        if request.tool_choice == "none":
            params["tool_choice"] = "none"
    return params


def tool_params(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Tool definitions as function tools."""
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.input_schema,
            },
        }
        for t in tools
    ]


def message_params(request: ModelRequest) -> list[dict[str, Any]]:
    """One system message, then the history; thinking blocks are not sent."""
    params: list[dict[str, Any]] = []
    system = "\n\n".join(p for p in (request.system_static, request.system_dynamic) if p)
    if system:
        params.append({"role": "system", "content": system})
    for message in request.messages:
        if message.role == "assistant":
            params += _assistant_params(message)
        else:
            params += _user_params(message)
    return params


def _joined_text(message: Message) -> str:
    return "\n\n".join(b.text for b in message.content if isinstance(b, TextBlock) and b.text)


def _assistant_params(message: Message) -> list[dict[str, Any]]:
    text = _joined_text(message)
    calls = [_tool_call_param(b) for b in message.content if isinstance(b, ToolUseBlock)]
    if not text and not calls:
        return []
    # `content` always a string: OpenAI accepts null beside tool_calls, but llama.cpp's
    # server (and others on the same pydantic schema) refuse null and require the key.
    param: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        param["tool_calls"] = calls
    return [param]


def _tool_call_param(block: ToolUseBlock) -> dict[str, Any]:
    arguments = json.dumps(block.input, ensure_ascii=False)
    return {
        "id": block.id,
        "type": "function",
        "function": {"name": block.name, "arguments": arguments},
    }


def _user_params(message: Message) -> list[dict[str, Any]]:
    """Tool results first (they must directly follow the assistant's calls), then the rest.

    A tool message holds text only, so the images of tool results follow in one user
    message, with the message's own text and images (content parts only when there are
    images, so a text-only history stays what it always was).
    """
    results = message.tool_results()
    params: list[dict[str, Any]] = [_tool_param(b) for b in results]
    if not message.images():
        text = _joined_text(message)
        if text:
            params.append({"role": "user", "content": text})
        return params
    parts = [part for b in results for part in _result_image_parts(b)]
    parts += _content_parts(message)
    params.append({"role": "user", "content": parts})
    return params


def _tool_param(block: ToolResultBlock) -> dict[str, Any]:
    content = block.text()
    if block.images():
        content += "\n(The image is in the next user message.)"
    return {"role": "tool", "tool_call_id": block.tool_use_id, "content": content}


def _result_image_parts(block: ToolResultBlock) -> list[dict[str, Any]]:
    images = block.images()
    if not images:
        return []
    label = {"type": "text", "text": f"Image returned by tool call {block.tool_use_id}:"}
    return [label, *(image_url_part(i) for i in images)]


def _content_parts(message: Message) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock) and block.text:
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            parts.append(image_url_part(block))
    return parts


def image_url_part(block: ImageBlock) -> dict[str, Any]:
    """An image as a data URL content part."""
    url = f"data:{block.media_type};base64,{block.data}"
    return {"type": "image_url", "image_url": {"url": url}}


# --- stream fold --------------------------------------------------------------------


@dataclass(slots=True)
class _Call:
    block: int
    id: str
    arguments: list[str] = field(default_factory=list)

    def complete(self) -> bool:
        """True once the arguments so far are a whole JSON object (nothing can follow)."""
        try:
            return isinstance(json.loads("".join(self.arguments)), dict)
        except ValueError:
            return False


@dataclass(slots=True)
class ChunkFold:
    """Folds chat.completion.chunk objects into normalised events, one chunk at a time.

    Block indices are given out in order of first appearance (reasoning, text and each
    tool call get their own), so sorting blocks by index gives the message's order. A
    tool call's block closes as soon as its arguments are complete (the next call starts),
    and the message stops at its finish_reason, not at the end of the stream, so its calls
    start while the server is still sending the usage chunk.
    """

    next_block: int = 0
    text_block: int | None = None
    reasoning_block: int | None = None
    calls: list[_Call] = field(default_factory=list)
    calls_by_index: dict[int, _Call] = field(default_factory=dict)
    open_blocks: list[int] = field(default_factory=list)
    finish_reason: str | None = None
    refused: bool = False
    stopped: bool = False

    def feed(self, chunk: Any) -> list[StreamEvent]:
        """The normalised events for one chunk. Usage may ride on any chunk."""
        out: list[StreamEvent] = []
        for choice in getattr(chunk, "choices", None) or ():
            # n=1 is always requested; other choices would be a server bug.
            if getattr(choice, "index", 0) not in (0, None):
                continue
            delta = getattr(choice, "delta", None)
            if delta is not None:
                out += self._on_delta(delta)
            finish_reason = getattr(choice, "finish_reason", None)
            if finish_reason and self.finish_reason is None:
                self.finish_reason = str(finish_reason)
                out += self._stop()
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            out.append(UsageUpdate(usage_from(usage)))
        return out

    def finish(self) -> list[StreamEvent]:
        """The closing events once the stream has ended: at its finish_reason, or at a
        `[DONE]` without one (some servers send none). The provider treats a stream that
        ended with neither as dropped, and does not call this."""
        return [] if self.stopped else self._stop()

    def _stop(self) -> list[StreamEvent]:
        self.stopped = True
        return [*self._close_blocks(), MessageStop(self.stop_reason())]

    def stop_reason(self) -> StopReason:
        """The finish_reason in Anthropic's terms; tool calls win over a plain `stop`."""
        if self.finish_reason == "length":
            return "max_tokens"
        if self.finish_reason == "content_filter" or self.refused:
            return "refusal"
        # Some servers say `stop` (or nothing) after tool calls; the calls are what count.
        return "tool_use" if self.calls else "end_turn"

    def _allocate(self) -> int:
        index = self.next_block
        self.next_block += 1
        self.open_blocks.append(index)
        return index

    def _close_blocks(self) -> list[StreamEvent]:
        closing: list[StreamEvent] = [BlockStop(i) for i in self.open_blocks]
        self.open_blocks.clear()
        return closing

    def _on_delta(self, delta: Any) -> list[StreamEvent]:
        # Its blocks are closed once a finish_reason came; stray deltas cannot reopen them.
        if self.finish_reason is not None:
            return []
        out: list[StreamEvent] = []
        reasoning = _reasoning_text(delta)
        if reasoning:
            if self.reasoning_block is None:
                self.reasoning_block = self._allocate()
            out.append(ThinkingDelta(self.reasoning_block, reasoning))
        refusal = getattr(delta, "refusal", None)
        # A refusal is shown as text; the stop reason then says it was one.
        self.refused = self.refused or bool(refusal)
        for text in (getattr(delta, "content", None), refusal):
            if isinstance(text, str) and text:
                out.append(self._text(text))
        for tool_call in getattr(delta, "tool_calls", None) or ():
            out += self._on_tool_call(tool_call)
        return out

    def _text(self, text: str) -> TextDelta:
        if self.text_block is None:
            self.text_block = self._allocate()
        return TextDelta(self.text_block, text)

    def _on_tool_call(self, tool_call: Any) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        call = self._current_call(tool_call)
        if call is None:
            out += self._close_complete_call()
            call = self._start_call(tool_call)
            out.append(ToolUseStart(call.block, call.id, _function_field(tool_call, "name")))
        arguments = _function_field(tool_call, "arguments")
        if arguments and call.block in self.open_blocks:
            call.arguments.append(arguments)
            out.append(ToolInputDelta(call.block, arguments))
        return out

    def _close_complete_call(self) -> list[StreamEvent]:
        """Close the previous call when a new one starts, if its arguments are whole.

        Most servers stream calls one after another; some interleave their fragments,
        and there the previous call is still incomplete, so it stays open until the end.
        """
        previous = self.calls[-1] if self.calls else None
        if previous is None or previous.block not in self.open_blocks or not previous.complete():
            return []
        self.open_blocks.remove(previous.block)
        return [BlockStop(previous.block)]

    def _current_call(self, tool_call: Any) -> _Call | None:
        """The call a fragment continues, or None when it starts a new one.

        Fragments accumulate by `index`, but some servers give every parallel call index 0
        and others send no index: a new `id` at a used index starts a new call.
        """
        index = getattr(tool_call, "index", None)
        if index is None:
            current = self.calls[-1] if self.calls else None
        else:
            current = self.calls_by_index.get(index)
        call_id = getattr(tool_call, "id", None)
        if current is None or (call_id and call_id != current.id):
            return None
        return current

    def _start_call(self, tool_call: Any) -> _Call:
        call = _Call(self._allocate(), getattr(tool_call, "id", None) or new_id("call"))
        index = getattr(tool_call, "index", None)
        if index is not None:
            self.calls_by_index[index] = call
        self.calls.append(call)
        return call


def _reasoning_text(delta: Any) -> str | None:
    for name in _REASONING_FIELDS:
        value = getattr(delta, name, None)
        if isinstance(value, str) and value:
            return value
    return None


def _function_field(tool_call: Any, name: str) -> str:
    value = getattr(getattr(tool_call, "function", None), name, None)
    return value if isinstance(value, str) else ""


def usage_from(usage: Any) -> Usage:
    """Our usage from a CompletionUsage; cached prompt tokens are split out of the input."""
    details = getattr(usage, "prompt_tokens_details", None)
    cached = (
        getattr(details, "cached_tokens", None)
        # DeepSeek reports cache hits in its own field.
        or getattr(usage, "prompt_cache_hit_tokens", None)
        or 0
    )
    prompt = getattr(usage, "prompt_tokens", None) or 0
    return Usage(
        input_tokens=max(0, prompt - cached),
        output_tokens=getattr(usage, "completion_tokens", None) or 0,
        cache_read_tokens=cached,
    )


class _DoneWatch:
    """The SDK's SSE decoder, noting whether the stream's `data: [DONE]` came.

    The SDK ends its iteration quietly both at `[DONE]` and when the body just ends, so
    the decoder is the one place where a finished stream and a cut one differ.
    """

    def __init__(self, decoder: Any) -> None:
        self._decoder = decoder
        self.seen = False

    def iter_bytes(self, iterator: Iterator[bytes]) -> Iterator[Any]:
        """The synchronous path, unused by the async client; passed through."""
        result: Iterator[Any] = self._decoder.iter_bytes(iterator)
        return result

    async def aiter_bytes(self, iterator: AsyncIterator[bytes]) -> AsyncIterator[Any]:
        """The decoder's events, unchanged; the SDK stops at `[DONE]` as it would."""
        async for sse in self._decoder.aiter_bytes(iterator):
            if sse.data.startswith("[DONE]"):
                self.seen = True
            yield sse


def _watch_done(chunks: openai.AsyncStream[Any]) -> _DoneWatch:
    # The stream reads its decoder only when iteration starts, so it can be wrapped here.
    watch = _DoneWatch(chunks._decoder)
    chunks._decoder = cast(Any, watch)
    return watch


# --- errors -------------------------------------------------------------------------

_CONTEXT_OVERFLOW = re.compile(
    r"context[ _](length|size|window)|prompt is too long|exceeds? the available context",
    re.IGNORECASE,
)
_CONTEXT_OVERFLOW_CODES = {"context_length_exceeded", "exceed_context_size_error"}


_KIND_BY_TYPE: dict[str, tuple[ErrorKind, bool]] = {
    "invalid_request_error": ("invalid_request", False),
    "authentication_error": ("authentication", False),
    "permission_error": ("permission", False),
    "not_found_error": ("not_found", False),
}


@dataclass(frozen=True, slots=True)
class ErrorBody:
    code: str | None
    type: str | None
    message: str


def error_body(body: object) -> ErrorBody:
    """The fields of an error body (the SDK has already unwrapped `{"error": ...}`)."""
    if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
        body = body["error"]
    if not isinstance(body, Mapping):
        return ErrorBody(None, None, str(body) if body else "")
    code, kind = body.get("code"), body.get("type")
    message = body.get("message") or body.get("detail") or body.get("error") or ""
    return ErrorBody(
        str(code) if code is not None else None,
        str(kind) if kind is not None else None,
        str(message),
    )


def classify(status: int | None, body: ErrorBody) -> tuple[ErrorKind, bool]:
    """(kind, retryable) from the body's code and type, then the HTTP status.

    `status` is None for an error chunk inside a successful stream.
    """
    if body.code in _CONTEXT_OVERFLOW_CODES or body.type in _CONTEXT_OVERFLOW_CODES:
        return "prompt_too_long", False
    if status in (None, 400, 413) and _CONTEXT_OVERFLOW.search(body.message):
        return "prompt_too_long", False
    if body.code == "insufficient_quota":
        # A 429 that means "out of credit": waiting does not help.
        return "rate_limit", False
    if body.code == "rate_limit_exceeded":
        return "rate_limit", True
    if status is None:
        # A stream that broke after it started is worth retrying unless a client error.
        return _KIND_BY_TYPE.get(body.type or "", ("server", True))
    if status in KIND_BY_STATUS:
        return KIND_BY_STATUS[status]
    if status >= 500:
        return "server", True
    return _KIND_BY_TYPE.get(body.type or "", ("unknown", False))


# Request fields some servers refuse, and the setting that stops agentls sending them.
_FIELD_SETTINGS = (
    ("stream_options", "set `openaiStreamUsage` to false"),
    ("max_completion_tokens", 'set `openaiMaxTokensField` to "max_tokens"'),
    ("reasoning_effort", "unset `reasoningEffort`"),
)


def refused_field_hint(message: str) -> str:
    """What to change when an error names a request field a server does not take."""
    for name, fix in _FIELD_SETTINGS:
        if name in message:
            return f" (to stop sending `{name}`, {fix} in the agentls settings)"
    return ""


def api_error(exc: openai.APIError, request_id: str | None) -> ProviderError:
    """A ProviderError for an HTTP error response or an error chunk mid-stream."""
    body = error_body(exc.body)
    status: int | None = None
    headers: Mapping[str, str] = {}
    if isinstance(exc, openai.APIStatusError):
        status, headers = exc.status_code, exc.response.headers
        request_id = exc.request_id or request_id
    kind, retryable = classify(status, body)
    limit = stated_output_limit(body.message) if status in (None, 400, 422) else None
    if limit is not None:
        # vLLM words it as a context-length error, but the output limit is what to lower.
        kind, retryable = "invalid_request", False
    label = body.code or body.type or (f"HTTP {status}" if status else "stream error")
    return ProviderError(
        kind,
        f"OpenAI API {label}: {body.message or exc.message}{refused_field_hint(body.message)}",
        retryable=retryable,
        status=status,
        retry_after=retry_after_seconds(headers),
        request_id=request_id,
        output_limit=limit,
    )


def connection_error(exc: openai.APIConnectionError, request_id: str | None) -> ProviderError:
    """A ProviderError for a failed or timed-out connection."""
    if isinstance(exc, openai.APITimeoutError):
        return ProviderError(
            "timeout", "OpenAI API request timed out", retryable=True, request_id=request_id
        )
    cause = type(exc.__cause__).__name__ if exc.__cause__ else "connection error"
    return ProviderError(
        "connection",
        f"connection to the OpenAI API failed: {cause}",
        retryable=True,
        request_id=request_id,
    )


# --- provider -----------------------------------------------------------------------


def _resolve_api_key(api_key: str | None, base_url: str | None) -> str | None:
    """The key to give the SDK; None lets it read OPENAI_API_KEY."""
    if api_key is not None or os.environ.get("OPENAI_API_KEY"):
        return api_key
    custom_server = base_url or os.environ.get("OPENAI_BASE_URL")
    return PLACEHOLDER_API_KEY if custom_server else None


def _client(api_key: str | None, base_url: str | None, timeout: float) -> openai.AsyncOpenAI:
    try:
        return openai.AsyncOpenAI(
            api_key=_resolve_api_key(api_key, base_url),
            base_url=base_url,
            timeout=timeout,
            max_retries=0,
        )
    except openai.OpenAIError as exc:
        raise ProviderError(
            "authentication", "no OpenAI API key is configured", retryable=False
        ) from exc


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
    ) -> None:
        # The `vision` setting; None lets the model table decide for each request's model.
        self._vision = vision
        self._options = options
        self._client = client or _client(api_key, base_url, timeout)

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
    ) -> OpenAIProvider:
        """Azure OpenAI: the same Chat Completions, routed by deployment, keyed by `api-key`."""
        client = openai.AsyncAzureOpenAI(
            azure_endpoint=endpoint,
            azure_deployment=deployment,
            api_version=api_version,
            api_key=api_key,
            timeout=timeout,
            max_retries=0,
        )
        provider = cls(vision=vision, options=options, client=client)
        provider.name = "azure"
        return provider

    @property
    def endpoint(self) -> str:
        return str(self._client.base_url)

    async def list_models(self) -> list[ModelInfo]:
        """GET /models; raises ProviderError like a model call."""
        try:
            return [ModelInfo(m.id) async for m in self._client.models.list()]
        except openai.APIConnectionError as exc:
            raise connection_error(exc, None) from exc
        except openai.APIError as exc:
            raise self._redacted(api_error(exc, None)) from exc

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._client.close()

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """One model response as normalised events; raises ProviderError on any failure."""
        fold = ChunkFold()
        request_id: str | None = None
        try:
            vision = supports_vision(request.model, self._vision)
            params = build_params(request, vision, self._options)
            # The SDK's type-driven transform walks every message on every call (about
            # 230 µs a message, on the event loop); these params are plain JSON already,
            # so the large lists travel in extra_body, which is sent as it is.
            bulk = {key: params.pop(key) for key in ("messages", "tools") if key in params}
            chunks: openai.AsyncStream[Any] = await self._client.chat.completions.create(
                stream=True, messages=[], extra_body=bulk, **params
            )
            request_id = chunks.response.headers.get("x-request-id")
            done = _watch_done(chunks)
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
