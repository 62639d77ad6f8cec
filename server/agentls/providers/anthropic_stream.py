"""Reading the Messages API's raw stream events into the provider's normalised events
(gateways that translate another API's stream included).

The events are the SSE data as parsed JSON (plain dicts): the SDK's typed events cost a
pydantic validation of the whole event union per event (about 0.1 ms each, more than
everything else a text delta costs the daemon), and nothing here needs more than a few
fields read by name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agentls.providers.base import (
    BlockStop,
    MessageStop,
    ProviderError,
    SignatureDelta,
    StopReason,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolInputDelta,
    ToolUseStart,
    UsageUpdate,
)
from agentls.usage import Usage

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
    "pause_turn": "pause_turn",
    # The docs say to treat it as truncated output, which is what max_tokens means to the loop.
    "model_context_window_exceeded": "max_tokens",
}


@dataclass(slots=True)
class StreamFold:
    """Folds raw Messages API events into normalised events, one event at a time.

    Gateways that translate an OpenAI stream (LiteLLM's `/v1/messages`) may cut one tool
    call into consecutive `tool_use` blocks that repeat its id, each with a fragment of
    the input. Those blocks are one call: they fold into the first one's index, whose
    BlockStop is held back until a block that is not such a continuation starts.
    """

    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None
    seen_tool_use: bool = False
    # Blocks we emitted events for; only those get a BlockStop (skipped kinds, such as
    # server tool blocks, stay invisible to the loop).
    open_blocks: set[int] = field(default_factory=set)
    # Wire index → the index of the block it continues (repeated tool_use ids).
    aliases: dict[int, int] = field(default_factory=dict)
    last_tool: tuple[int, str] | None = None
    held_stop: int | None = None

    def feed(self, event: Any) -> list[StreamEvent]:
        """The normalised events for one raw event (an SSE data object); unknown event
        types yield none.

        Raises `MissingField` for a known event without a field it must have.
        """
        if not isinstance(event, dict):
            return []
        kind = event.get("type")
        _check_fields(kind, event)
        if kind == "message_start":
            return self._on_message_start(event["message"])
        if kind == "content_block_start":
            return self._on_block_start(_index(event), _object(event, "content_block"))
        if kind == "content_block_delta":
            return self._on_block_delta(_index(event), _object(event, "delta"))
        if kind == "content_block_stop":
            return self._on_block_stop(_index(event))
        if kind == "message_delta":
            return [*self._release_held(), *self._on_message_delta(event)]
        return []

    @property
    def complete(self) -> bool:
        """True once the stop reason came: only `message_stop` may follow, so a connection
        lost now loses nothing of the message (asking again would redo it all)."""
        return self.stop_reason is not None

    def finish(self) -> list[StreamEvent]:
        """The closing events once the stream has ended."""
        if self.stop_reason is None:
            raise ProviderError(
                "connection", "the stream ended before the message was complete", retryable=True
            )
        self.held_stop = None
        closing: list[StreamEvent] = [BlockStop(i) for i in sorted(self.open_blocks)]
        self.open_blocks.clear()
        return [*closing, MessageStop(self._mapped_stop_reason())]

    def _mapped_stop_reason(self) -> StopReason:
        if self.stop_reason in _STOP_REASONS:
            return _STOP_REASONS[self.stop_reason]
        return "tool_use" if self.seen_tool_use else "end_turn"

    def _on_message_start(self, message: dict[str, Any]) -> list[StreamEvent]:
        usage = message["usage"]
        self.usage = Usage(
            input_tokens=usage.get("input_tokens") or 0,
            output_tokens=usage.get("output_tokens") or 0,
            cache_read_tokens=usage.get("cache_read_input_tokens") or 0,
            cache_write_tokens=usage.get("cache_creation_input_tokens") or 0,
        )
        return [UsageUpdate(self.usage)]

    def _on_message_delta(self, event: dict[str, Any]) -> list[StreamEvent]:
        stop_reason = _object(event, "delta").get("stop_reason")
        if stop_reason is not None:
            self.stop_reason = str(stop_reason)
        # Required by the API, but a gateway leaving it out has still said how it stopped.
        usage = event.get("usage")
        if isinstance(usage, dict):
            self.usage = _merge_usage(self.usage, usage)
        return [UsageUpdate(self.usage)]

    def _on_block_start(self, index: int, block: dict[str, Any]) -> list[StreamEvent]:
        kind = block.get("type")
        if kind == "tool_use" and self._continues_call(block.get("id")):
            assert self.last_tool is not None
            self.aliases[index] = first = self.last_tool[0]
            self.held_stop = None
            tool_input = block.get("input")
            return [ToolInputDelta(first, json.dumps(tool_input))] if tool_input else []
        out: list[StreamEvent] = self._release_held()
        if kind == "text":
            self.open_blocks.add(index)
            if block.get("text"):
                out.append(TextDelta(index, block["text"]))
        elif kind == "thinking":
            self.open_blocks.add(index)
            if block.get("thinking"):
                out.append(ThinkingDelta(index, block["thinking"]))
            if block.get("signature"):
                out.append(SignatureDelta(index, block["signature"]))
        elif kind == "tool_use":
            self.open_blocks.add(index)
            self.seen_tool_use = True
            self.last_tool = (index, str(block.get("id")))
            out.append(ToolUseStart(index, str(block.get("id")), str(block.get("name"))))
            # The API streams input as deltas after an empty `{}`; a non-empty start
            # input only comes from servers that send the whole call at once.
            if block.get("input"):
                out.append(ToolInputDelta(index, json.dumps(block["input"])))
        return out

    def _continues_call(self, block_id: object) -> bool:
        """True for a tool_use block right after a stopped one with the same id."""
        return (
            self.last_tool is not None
            and self.held_stop == self.last_tool[0]
            and block_id == self.last_tool[1]
        )

    def _on_block_delta(self, wire_index: int, delta: dict[str, Any]) -> list[StreamEvent]:
        index = self.aliases.get(wire_index, wire_index)
        if index not in self.open_blocks:
            return []
        kind = delta.get("type")
        if kind == "text_delta" and delta.get("text"):
            return [TextDelta(index, delta["text"])]
        if kind == "thinking_delta" and delta.get("thinking"):
            return [ThinkingDelta(index, delta["thinking"])]
        if kind == "signature_delta":
            return [SignatureDelta(index, delta.get("signature") or "")]
        if kind == "input_json_delta" and delta.get("partial_json"):
            return [ToolInputDelta(index, delta["partial_json"])]
        return []

    def _on_block_stop(self, wire_index: int) -> list[StreamEvent]:
        index = self.aliases.get(wire_index, wire_index)
        if index not in self.open_blocks:
            return []
        if self.last_tool is not None and index == self.last_tool[0]:
            # Held until we know no continuation of this call follows.
            self.held_stop = index
            return []
        self.open_blocks.discard(index)
        return [BlockStop(index)]

    def _release_held(self) -> list[StreamEvent]:
        if self.held_stop is None:
            return []
        index, self.held_stop = self.held_stop, None
        self.open_blocks.discard(index)
        return [BlockStop(index)]


class MissingField(Exception):
    """A known stream event without a field it must have."""


# The fields each event must carry.
_REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    "message_start": ("message",),
    "content_block_start": ("index", "content_block"),
    "content_block_delta": ("index", "delta"),
    "content_block_stop": ("index",),
    "message_delta": ("delta",),
}


def _check_fields(kind: object, event: dict[str, Any]) -> None:
    for name in _REQUIRED_FIELDS.get(kind, ()) if isinstance(kind, str) else ():
        if event.get(name) is None:
            raise MissingField(f"a {kind} event without {name}")
    if kind == "message_start" and not isinstance(_object(event, "message").get("usage"), dict):
        raise MissingField("a message_start event without message.usage")


def _object(event: dict[str, Any], name: str) -> dict[str, Any]:
    value = event.get(name)
    if not isinstance(value, dict):
        raise MissingField(f"a {event.get('type')} event whose {name} is not an object")
    return value


def _index(event: dict[str, Any]) -> int:
    index = event.get("index")
    if not isinstance(index, int):
        raise MissingField(f"a {event.get('type')} event whose index is not a number")
    return index


def _merge_usage(usage: Usage, delta: dict[str, Any]) -> Usage:
    """message_delta usage is cumulative; its null fields keep the message_start values."""
    return Usage(
        input_tokens=_pick(delta.get("input_tokens"), usage.input_tokens),
        output_tokens=_pick(delta.get("output_tokens"), usage.output_tokens),
        cache_read_tokens=_pick(delta.get("cache_read_input_tokens"), usage.cache_read_tokens),
        cache_write_tokens=_pick(
            delta.get("cache_creation_input_tokens"), usage.cache_write_tokens
        ),
    )


def _pick(new: Any, old: int) -> int:
    return old if new is None else int(new)
