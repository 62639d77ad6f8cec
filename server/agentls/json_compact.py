"""Compact JSON bytes for the wire, from one encoder made once.

`json.dumps(..., separators=(",", ":"))` builds a JSONEncoder and then a C encoder for
every call: for a small `agent/event` that was half the cost of encoding it. The C encoder
is made once here (with the pure-Python one where the C part is missing); the bytes are
the same as `json.dumps`'s with those separators: ASCII, non-ASCII escaped.
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable
from typing import Any


def _not_json(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _make() -> Callable[[Any], str]:
    # The C encoder json.dumps itself uses (typeshed does not declare it).
    c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
    if c_make_encoder is None:
        encoder = json.JSONEncoder(separators=(",", ":"))
        return encoder.encode
    # No circular-reference markers: wire values are trees built by the daemon (a cycle
    # would still end in RecursionError, not a hang).
    encode = c_make_encoder(
        None, _not_json, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, True
    )

    def dumps(value: Any) -> str:
        return "".join(encode(value, 0))

    return dumps


dumps: Callable[[Any], str] = _make()


def dump_bytes(value: Any) -> bytes:
    """`value` as compact ASCII JSON bytes."""
    return dumps(value).encode("ascii")
