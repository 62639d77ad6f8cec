"""Secrets never leave the daemon: credential values are masked in all it writes.

A key can reach text the daemon writes by many roads: a tool reads a `.env` file, a
command prints its environment, an SDK error quotes a header, a log line formats a
request. Rather than guard each road, everything written (events, transcripts, log
records) passes one masker that knows the credential values of this process.

Only values that can be secrets are masked: local model servers accept any key, and a
user who types `OPENAI_API_KEY=x` must not see every letter x starred out.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any

MIN_SECRET_LENGTH = 8
MASK = "***"
# Variables whose values are credentials: the providers' own and the usual shapes.
_SECRET_NAME = re.compile(r"(?i)(api_?key|token|secret|passw|credential|private_?key)")
# Credentials in header form, whoever's they are: never logged or shown.
_HEADER = re.compile(
    r"(?i)\b(authorization|x-api-key|api-key|proxy-authorization)([\"']?\s*[:=]\s*[\"']?)"
    r"(?:(bearer|basic)\s+)?[^\s\"',;}]+"
)


_SHORTEST_HEADER = len("api-key")
# Text shorter than this holds nothing to mask: no secret (MIN_SECRET_LENGTH) and no header
# name fits in it. Most streamed deltas are this short.
_SHORTEST_MASKED = min(_SHORTEST_HEADER, MIN_SECRET_LENGTH)
# Values that hold no text to mask.
_NO_TEXT: frozenset[type] = frozenset({int, float, bool, type(None)})


class Masker:
    """Replaces known secret values (and credential headers) with `***`."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        values = {s for s in secrets if len(s) >= MIN_SECRET_LENGTH}
        # Longest first, so a secret that contains another is masked whole.
        self._secrets = tuple(sorted(values, key=len, reverse=True))
        # Per field name, the last text found clean there: a message's id comes with each
        # of its deltas, and is looked at once (the same object is the same text).
        self._clean: dict[str, str] = {}

    @classmethod
    def from_environment(cls, env: Mapping[str, str]) -> Masker:
        """A masker for the credential variables of `env`."""
        return cls(value for name, value in env.items() if _SECRET_NAME.search(name))

    @property
    def secrets(self) -> tuple[str, ...]:
        return self._secrets

    def mask(self, text: str) -> str:
        """`text` with every secret value and credential header value masked."""
        if len(text) < _SHORTEST_MASKED:
            return text
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        if _may_hold_header(text):
            text = _HEADER.sub(_mask_header, text)
        return text

    def mask_value(self, value: Any) -> Any:
        """`value` (JSON or dataclasses) with every string masked; unchanged parts are reused."""
        kind = value.__class__
        # Every event passes here: the common leaves first, without a call.
        if kind in _NO_TEXT:
            return value
        if kind is str:
            return self.mask(value)
        fields = _text_fields(kind)
        if fields is not None:
            return self._mask_fields(value, fields)
        if isinstance(value, str):
            return self.mask(value)
        if isinstance(value, tuple):
            masked = tuple(self.mask_value(item) for item in value)
            return value if masked == value else masked
        if isinstance(value, dict):
            return {key: self.mask_value(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.mask_value(item) for item in value]
        return value

    def _mask_fields(self, value: Any, fields: tuple[str, ...]) -> Any:
        changes = None
        clean = self._clean
        for name in fields:
            item = getattr(value, name)
            kind = item.__class__
            if kind is str:
                if len(item) < _SHORTEST_MASKED or item is clean.get(name):
                    continue
                masked = self.mask(item)
                if masked == item:
                    clean[name] = item
                    continue
            elif kind in _NO_TEXT:
                continue
            else:
                masked = self.mask_value(item)
            if masked is not item and masked != item:
                changes = changes or {}
                changes[name] = masked
        return dataclasses.replace(value, **changes) if changes else value


@functools.cache
def _text_fields(cls: type) -> tuple[str, ...] | None:
    """Per type, once: a dataclass's fields that may hold text (None for other types).

    An event's `type` tag is its class's own constant, never text from outside."""
    if not dataclasses.is_dataclass(cls):
        return None
    fields = dataclasses.fields(cls)
    return tuple(f.name for f in fields if not (f.name == "type" and isinstance(f.default, str)))


def _may_hold_header(text: str) -> bool:
    # Only for text as long as the shortest header name (most deltas are shorter). Every
    # header name holds a "-" or a "z" (`authorization`): an id holds neither, and is not
    # lowered (no other character lowers to an ASCII "z" or "-").
    if "-" not in text and "z" not in text and "Z" not in text:
        return False
    lowered = text[:100_000].lower()
    return "authorization" in lowered or "api-key" in lowered


def _mask_header(match: re.Match[str]) -> str:
    scheme = f"{match[3]} " if match[3] else ""
    return f"{match[1]}{match[2]}{scheme}{MASK}"


class RedactingFilter(logging.Filter):
    """A logging filter that masks secrets in each record's final message."""

    def __init__(self, masker: Masker) -> None:
        super().__init__()
        self._masker = masker

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = self._masker.mask(message)
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self._masker.mask(record.exc_text)
        if masked != message:
            record.msg, record.args = masked, None
        return True


# The daemon's own credentials: a command the model runs has no use for them.
PROVIDER_KEYS = frozenset(
    {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "AZURE_OPENAI_API_KEY"}
)


def without_provider_keys(env: Mapping[str, str]) -> dict[str, str]:
    """`env` without agentls's provider credentials, for the commands the model runs."""
    return {name: value for name, value in env.items() if name not in PROVIDER_KEYS}


def install_log_filter(masker: Masker, handlers: Iterable[logging.Handler]) -> None:
    """Mask secrets in everything these handlers write."""
    for handler in handlers:
        handler.addFilter(RedactingFilter(masker))
