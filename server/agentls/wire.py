"""The one place where core dataclasses become wire JSON (camelCase keys, no nulls).

The core hands typed values to its sinks; front ends that speak JSON (the LSP server,
`agentls run --json`) turn them into JSON here, at the edge. `event_json` writes an
`agent/event`'s params as JSON text straight from the event: the same text as dumping
`event_payload`'s dict, without building that dict for the thousands of deltas a turn
streams.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import cache
from json.encoder import encode_basestring_ascii
from operator import attrgetter
from typing import Any

from agentls.events import SessionEvent
from agentls.json_compact import dumps


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


# The envelope's keys: an event field of the same name (TurnStarted's `turn_id`) takes the
# key's place in the dict, so such events are written from the dict itself.
_ENVELOPE_KEYS = frozenset({"sessionId", "seq", "turnId", "parentToolCallId", "agentId"})
# Per event class: its field values in one call, and each field's `,"camelKey":`.
EventFields = tuple[Callable[[Any], tuple[Any, ...]], tuple[str, ...]]


@cache
def _event_fields(cls: type) -> EventFields | None:
    """Per event class, once: how its fields are read and keyed (None: from the dict)."""
    names = [f.name for f in dataclasses.fields(cls)]
    keys = [camel(name) for name in names]
    if any(key in _ENVELOPE_KEYS for key in keys):
        return None
    values = attrgetter(*names) if len(names) > 1 else lambda value: (getattr(value, names[0]),)
    return values, tuple(f",{encode_basestring_ascii(key)}:" for key in keys)


# Events whose every field is text (deltas): their params in one format, as a turn's own
# events (a turnId, no agent) are. A value that is not text after all raises TypeError
# in encode_basestring_ascii, and the event is written field by field instead.
TextEvent = tuple[Callable[[Any], tuple[Any, ...]], str]


@cache
def _text_event(cls: type) -> TextEvent | None:
    fields = dataclasses.fields(cls)
    names = [f.name for f in fields]
    keys = [camel(name) for name in names]
    textual = all(_is_text(f.type) for f in fields)
    if not textual or len(names) < 2 or any(key in _ENVELOPE_KEYS for key in keys):
        return None
    head = '{"sessionId":%s,"seq":%d,"turnId":%s'
    template = head + "".join(f",{encode_basestring_ascii(key)}:%s" for key in keys) + "}"
    return attrgetter(*names), template


def _is_text(annotation: object) -> bool:
    """A field declared as text that is never None: `str` or a Literal of strings."""
    if not isinstance(annotation, str) or "None" in annotation:
        return False
    return annotation == "str" or annotation.startswith("Literal[")


def event_json(envelope: SessionEvent) -> str:
    """`event_payload(envelope)` as compact JSON text (the same text, character for character)."""
    event = envelope.event
    kind: type = event.__class__
    text_event = _text_event(kind)
    if text_event is not None and envelope.turn_id is not None and envelope.agent_id is None:
        values, template = text_event
        try:
            head = (encode_basestring_ascii(envelope.session_id), envelope.seq)
            turn = encode_basestring_ascii(envelope.turn_id)
            return template % (*head, turn, *map(encode_basestring_ascii, values(event)))
        except TypeError:
            pass
    fields = _event_fields(kind)
    if fields is None:
        return dumps(event_payload(envelope))
    text = '{"sessionId":' + encode_basestring_ascii(envelope.session_id)
    text += ',"seq":' + int.__repr__(envelope.seq)
    if envelope.turn_id is not None:
        text += ',"turnId":' + encode_basestring_ascii(envelope.turn_id)
    if envelope.agent_id is not None:
        text += ',"parentToolCallId":' + dumps(envelope.parent_tool_call_id)
        text += ',"agentId":' + encode_basestring_ascii(envelope.agent_id)
    values, keys = fields
    for key, item in zip(keys, values(event), strict=True):
        # The common leaves here; anything else exactly as json_compact.dumps writes it.
        if item.__class__ is str:
            text += key + encode_basestring_ascii(item)
        elif item.__class__ is int:
            text += key + int.__repr__(item)
        elif item is not None:
            text += key + dumps(item if item.__class__ in _PLAIN else to_wire(item))
    return text + "}"


def json_sink(deliver: Callable[[dict[str, Any]], None]) -> Callable[[SessionEvent], None]:
    """An event sink for a front end that takes `agent/event` payloads."""

    def sink(envelope: SessionEvent) -> None:
        deliver(event_payload(envelope))

    return sink
