"""The provider seam: a request in, a stream of normalised events out.

Every provider (Anthropic, OpenAI-compatible, scripted) folds its own wire stream into
these few events, so the loop has one streaming path whatever the model.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from agentls.messages import Message, ToolSpec
from agentls.redact import Masker
from agentls.usage import Usage

StopReason = Literal["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "pause_turn"]


@dataclass(frozen=True, slots=True)
class ModelRequest:
    model: str
    # The static part is byte-identical across a session (it is the cached prefix);
    # the dynamic part may change between sessions but not within a turn.
    system_static: str
    system_dynamic: str
    messages: Sequence[Message]
    tools: Sequence[ToolSpec]
    max_tokens: int = 8192
    thinking_budget: int | None = None
    # "none": the tools stay defined (the history holds calls) but the model may not call one.
    tool_choice: Literal["auto", "none"] = "auto"
    extra: dict[str, Any] = field(default_factory=dict)


# The stream's deltas, thousands a reply, are the one kind built without frozen=True: a
# frozen dataclass sets each field through object.__setattr__, which made building one
# about three times dearer (~1 µs); nothing changes them after they are built either way.
@dataclass(slots=True)
class TextDelta:
    index: int
    text: str
    type: Literal["text_delta"] = "text_delta"


@dataclass(slots=True)
class ThinkingDelta:
    index: int
    text: str
    type: Literal["thinking_delta"] = "thinking_delta"


@dataclass(frozen=True, slots=True)
class SignatureDelta:
    """Sets (does not append) the signature of the thinking block at `index`."""

    index: int
    signature: str
    type: Literal["signature_delta"] = "signature_delta"


@dataclass(frozen=True, slots=True)
class EncryptedReasoning:
    """Sets the encrypted content of the thinking block at `index` (OpenAI Responses'
    reasoning item, which the next request sends back)."""

    index: int
    encrypted_content: str
    type: Literal["encrypted_reasoning"] = "encrypted_reasoning"


@dataclass(frozen=True, slots=True)
class ToolUseStart:
    index: int
    id: str
    name: str
    type: Literal["tool_use_start"] = "tool_use_start"


@dataclass(frozen=True, slots=True)
class ToolInputDelta:
    index: int
    partial_json: str
    type: Literal["tool_input_delta"] = "tool_input_delta"


@dataclass(frozen=True, slots=True)
class BlockStop:
    index: int
    type: Literal["block_stop"] = "block_stop"


@dataclass(frozen=True, slots=True)
class UsageUpdate:
    """Cumulative usage of this response so far; later updates replace earlier ones."""

    usage: Usage
    type: Literal["usage_update"] = "usage_update"


@dataclass(frozen=True, slots=True)
class MessageStop:
    stop_reason: StopReason
    type: Literal["message_stop"] = "message_stop"


StreamEvent: TypeAlias = (
    TextDelta
    | ThinkingDelta
    | SignatureDelta
    | EncryptedReasoning
    | ToolUseStart
    | ToolInputDelta
    | BlockStop
    | UsageUpdate
    | MessageStop
)

ErrorKind = Literal[
    "overloaded",
    "rate_limit",
    "server",
    "connection",
    "timeout",
    "idle",
    "prompt_too_long",
    "authentication",
    "permission",
    "invalid_request",
    "not_found",
    "unknown",
]


class ProviderError(Exception):
    """A model call failed; `kind` and `retryable` come from the body type and status."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        retryable: bool,
        status: int | None = None,
        retry_after: float | None = None,
        request_id: str | None = None,
        output_limit: int | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        self.request_id = request_id
        # The output-token cap the server stated when it refused `max_tokens`.
        self.output_limit = output_limit


# How a stream's bytes fail to be events: not UTF-8, or data that is not JSON.
MALFORMED_STREAM = (json.JSONDecodeError, UnicodeDecodeError)


def malformed_stream(request_id: str | None, detail: str = "") -> ProviderError:
    """A stream that could not be read (garbled bytes, data that is not JSON, an event
    without its fields): broken by a proxy or a server fault, so worth asking again."""
    return ProviderError(
        "server",
        f"the server sent malformed stream data{detail}",
        retryable=True,
        request_id=request_id,
    )


def redacted(error: ProviderError, api_key: str | None) -> ProviderError:
    """`error` with the provider's key masked in its message (SDK errors may quote it).

    The masker's rule applies: a short placeholder key (`x`, `none`) is not a secret.
    """
    if api_key:
        masked = Masker((api_key,)).mask(error.message)
        if masked != error.message:
            error.message = masked
            error.args = (masked,)
    return error


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """A model a server offers (its `/v1/models` entry)."""

    id: str
    display_name: str | None = None


class Provider(Protocol):
    """Streams one model response as normalised events; raises ProviderError on failure."""

    name: str

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]: ...


@runtime_checkable
class ListsModels(Protocol):
    """A provider that can ask its server which models it serves."""

    @property
    def endpoint(self) -> str:
        """Where the models come from (the base URL), to cache the list per server."""
        ...

    async def list_models(self) -> list[ModelInfo]: ...
