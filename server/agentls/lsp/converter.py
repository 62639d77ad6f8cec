"""The one cattrs converter of the LSP front end: lsprotocol's, with agentls's own methods'
params kept as plain JSON and sequence fields taking JSON arrays only."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import cattrs
from cattrs.cols import (
    homogenous_tuple_structure_factory,
    is_mutable_sequence,
    is_sequence,
    list_structure_factory,
)
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    default_converter,
)


@functools.cache
def json_converter() -> cattrs.Converter:
    """lsprotocol's converter, but custom methods keep their params as plain JSON.

    One for the process: a converter builds its (un)structure functions on first use,
    about 35 ms for `initialize` alone, so each new connection of a socket daemon would
    pay that again with a converter of its own."""
    conv: cattrs.Converter = default_converter()  # type: ignore[no-untyped-call]

    def request(obj: dict[str, Any], _cls: type) -> JsonRPCRequestMessage:
        return JsonRPCRequestMessage(obj["id"], obj["method"], obj["jsonrpc"], obj.get("params"))

    def notification(obj: dict[str, Any], _cls: type) -> JsonRPCNotification:
        return JsonRPCNotification(obj["method"], obj["jsonrpc"], obj.get("params"))

    def response(obj: dict[str, Any], _cls: type) -> JsonRPCResponseMessage:
        return JsonRPCResponseMessage(obj["id"], obj["jsonrpc"], obj.get("result"))

    conv.register_structure_hook(JsonRPCRequestMessage, request)
    conv.register_structure_hook(JsonRPCNotification, notification)
    conv.register_structure_hook(JsonRPCResponseMessage, response)
    conv.register_structure_hook_factory(is_sequence, _arrays_only)
    return conv


def _arrays_only(tp: Any, conv: cattrs.Converter) -> Callable[[Any, Any], Any]:
    """A sequence field takes a JSON array and nothing else. cattrs takes any iterable: a
    200,000-character string was walked character by character, each one failing with an
    error of its own, in time quadratic in its length (minutes, the loop blocked)."""
    factory = (
        list_structure_factory if is_mutable_sequence(tp) else homogenous_tuple_structure_factory
    )
    items = factory(tp, conv)

    def structure(value: Any, cls: Any) -> Any:
        if not isinstance(value, list):
            raise ValueError(f"expected an array, not {type(value).__name__}")
        return items(value, cls)

    return structure


def cattrs_detail(exc: Exception) -> str:
    if isinstance(exc, cattrs.ClassValidationError):
        return "; ".join(cattrs.transform_error(exc))
    return str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
