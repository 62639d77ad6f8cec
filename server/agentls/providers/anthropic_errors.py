"""The Messages API's errors in the loop's terms: their kind and whether a retry may help."""

from __future__ import annotations

from collections.abc import Mapping

import anthropic

from agentls.output_limits import stated_output_limit
from agentls.providers.base import (
    ErrorKind,
    ProviderError,
)
from agentls.providers.http_errors import KIND_BY_STATUS, retry_after_seconds

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


def is_transport_error(exc: BaseException, base_name: str = "TransportError") -> bool:
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
    if isinstance(exc, anthropic.APITimeoutError) or is_transport_error(exc, "TimeoutException"):
        return ProviderError(
            "timeout", "Anthropic API request timed out", retryable=True, request_id=request_id
        )
    return ProviderError(
        "connection",
        f"connection to the Anthropic API failed: {type(exc).__name__}",
        retryable=True,
        request_id=request_id,
    )
