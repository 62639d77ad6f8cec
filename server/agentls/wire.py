"""The one place where core dataclasses become wire JSON (camelCase keys, no nulls).

The core hands typed values to its sinks; front ends that speak JSON (the LSP server,
`agentls run --json`) turn them into JSON here, at the edge.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import cache
from typing import Any

from agentls.events import SessionEvent


@cache
def camel(name: str) -> str:
    """`tool_use_id` -> `toolUseId`."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


# Values that are their own wire form: no call to look into them.
_PLAIN: frozenset[type] = frozenset({str, int, float, bool})
Convert = Callable[[Any], dict[str, Any]]


@cache
def _converter(cls: type) -> Convert | None:
    """Per type, once: how a dataclass becomes a dict (None for any other type). Every event
    passes here, so the field names and camelCase keys are worked out once per class."""
    if not dataclasses.is_dataclass(cls):
        return None
    fields = tuple((f.name, camel(f.name)) for f in dataclasses.fields(cls))

    def convert(value: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, key in fields:
            item = getattr(value, name)
            if item is not None:
                out[key] = item if item.__class__ in _PLAIN else to_wire(item)
        return out

    return convert


def to_wire(value: Any) -> Any:
    """Dataclasses become camelCase dicts without None fields; dicts pass through as they are.

    Dict keys are left alone on purpose: tool inputs (`file_path`, `-i`) must reach the
    client exactly as the model wrote them.
    """
    convert = _converter(value.__class__)
    if convert is not None:
        return convert(value)
    if isinstance(value, (list, tuple)):
        return [to_wire(item) for item in value]
    return value


def event_payload(envelope: SessionEvent) -> dict[str, Any]:
    """The `agent/event` params for one session event."""
    payload: dict[str, Any] = {"sessionId": envelope.session_id, "seq": envelope.seq}
    if envelope.turn_id is not None:
        payload["turnId"] = envelope.turn_id
    if envelope.agent_id is not None:
        payload["parentToolCallId"] = envelope.parent_tool_call_id
        payload["agentId"] = envelope.agent_id
    payload.update(to_wire(envelope.event))
    return payload


def json_sink(deliver: Callable[[dict[str, Any]], None]) -> Callable[[SessionEvent], None]:
    """An event sink for a front end that takes `agent/event` payloads."""

    def sink(envelope: SessionEvent) -> None:
        deliver(event_payload(envelope))

    return sink
