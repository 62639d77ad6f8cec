"""HTTP error facts both APIs share: what a status means, and `retry-after` headers."""

from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Mapping

from agentls.providers.base import ErrorKind

# (kind, retryable) by HTTP status, when the body does not say more.
KIND_BY_STATUS: dict[int, tuple[ErrorKind, bool]] = {
    400: ("invalid_request", False),
    401: ("authentication", False),
    403: ("permission", False),
    404: ("not_found", False),
    408: ("timeout", True),
    409: ("server", True),
    413: ("invalid_request", False),
    422: ("invalid_request", False),
    429: ("rate_limit", True),
    529: ("overloaded", True),
}


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """`retry-after-ms`, else `retry-after` (seconds or an HTTP date), in seconds."""
    millis = _finite(headers.get("retry-after-ms"))
    if millis is not None:
        return max(0.0, millis / 1000)
    value = headers.get("retry-after")
    seconds = _finite(value)
    if seconds is not None or not value:
        return None if seconds is None else max(0.0, seconds)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _finite(value: str | None) -> float | None:
    try:
        number = float(value) if value else None
    except ValueError:
        return None
    return number if number is not None and math.isfinite(number) else None
