"""Failures inside a Responses stream in the loop's terms: an `error` event, or a
`response.failed` whose `error` says why. HTTP errors before the stream are the same as
Chat Completions' and are classified by `openai_errors.api_error`."""

from __future__ import annotations

from agentls.providers.base import ErrorKind, ProviderError
from agentls.providers.openai_errors import ErrorBody, classify

# Failure codes that asking again cannot fix: the request itself (its prompt, an image,
# a policy) is what the server refused.
_REFUSED_CODES = frozenset(
    {
        "invalid_prompt",
        "bio_policy",
        "misalignment_policy_violation",
        "data_residency_mismatch",
        "invalid_image",
        "invalid_image_format",
        "invalid_base64_image",
        "invalid_image_url",
        "image_too_large",
        "image_too_small",
        "image_parse_error",
        "image_content_policy_violation",
        "invalid_image_mode",
        "image_file_too_large",
        "unsupported_image_media_type",
        "empty_image_file",
        "failed_to_download_image",
        "image_file_not_found",
    }
)


def stream_failure(
    code: str | None, message: str, request_id: str | None, *, source: str
) -> ProviderError:
    """A ProviderError for a failure the stream reported (`source` names the event).

    Context overflow and rate limits are read as in Chat Completions; a refused request
    is not retried; anything else (`server_error`, an unknown code) is worth asking again.
    """
    kind: ErrorKind
    if code in _REFUSED_CODES:
        kind, retryable = "invalid_request", False
    else:
        kind, retryable = classify(None, ErrorBody(code, None, message))
    label = code or source
    return ProviderError(
        kind,
        f"OpenAI API {label}: {message or 'the response failed'}",
        retryable=retryable,
        request_id=request_id,
    )
