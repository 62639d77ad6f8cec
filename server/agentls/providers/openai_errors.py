"""An OpenAI-compatible server's errors in the loop's terms: their kind, whether a retry
may help, the output cap a refusal states, and a hint at the setting to change."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import openai

from agentls.output_limits import stated_output_limit
from agentls.providers.base import (
    ErrorKind,
    ProviderError,
)
from agentls.providers.http_errors import KIND_BY_STATUS, retry_after_seconds

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
