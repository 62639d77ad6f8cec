"""`retry-after` headers as both APIs send them, read the same way for every provider."""

from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Mapping


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
