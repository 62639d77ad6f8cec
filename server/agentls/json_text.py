"""Whether JSON from a client is Unicode: JSON can escape a lone surrogate (`"\\ud800"`),
which no UTF-8, file name or terminal can hold, so the edges refuse it before any
handler sees it (`is_unicode`), and what reaches a session anyway is made whole (`scrub`)."""

from __future__ import annotations

import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
# How a surrogate gets into JSON text decoded as UTF-8: escaped, `\ud800` to `\udfff`.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def is_unicode(value: Any) -> bool:
    """False when a string anywhere in `value` (keys too) holds a lone surrogate."""
    if isinstance(value, str):
        return value.isascii() or _encodes(value)
    if isinstance(value, dict):
        return all(is_unicode(k) and is_unicode(v) for k, v in value.items())
    if isinstance(value, list):
        return all(is_unicode(v) for v in value)
    return True


def may_hold_surrogates(body: bytes) -> bool:
    """Whether JSON text in UTF-8 can decode to a string with a surrogate: without one
    escaped there is none, so `is_unicode` (a walk of every value) is not needed."""
    return _SURROGATE_ESCAPE.search(body) is not None


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def scrub(value: Any) -> Any:
    """`value` with every lone surrogate in its strings (and dict keys) made U+FFFD."""
    if isinstance(value, str):
        return value if is_unicode(value) else _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [scrub(item) for item in value]
    if isinstance(value, dict):
        return {scrub(key): scrub(item) for key, item in value.items()}
    return value
