"""Reading a Responses stream: its events folded into the provider's normalised ones.

Each output item (a reasoning item, a message, a function call) becomes one block, in
the order the items come. Reasoning summary text streams as thinking, and the item's
encrypted content, which arrives with `response.output_item.done`, is kept on that
block. A refusal streams as text (the user reads what the model said) and the stop reason
says `refusal`. The message stops at `response.completed` or `response.incomplete`; a
`response.failed` or `error` event raises. A server that sends only the finished items
(no deltas) still gives their whole text, arguments and summary.

The events are read as parsed JSON (plain dicts): the SDK's typed events cost a
`construct` of every nested object per event, and the fold reads only a few fields by
name. The SDK's typed events are still read the same way (tests hold the two equal).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentls.messages import new_id
from agentls.providers.base import (
    BlockStop,
    EncryptedReasoning,
    MessageStop,
    StopReason,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolInputDelta,
    ToolUseStart,
    UsageUpdate,
)
from agentls.providers.responses_errors import stream_failure
from agentls.usage import Usage

_THINKING_DELTAS = ("response.reasoning_summary_text.delta", "response.reasoning_text.delta")
_TEXT_DELTAS = ("response.output_text.delta", "response.refusal.delta")


def _get(value: Any, name: str, default: Any = None) -> Any:
    """A field of an event or of a part of one: parsed JSON (plain dicts), or the SDK's
    typed objects. A field present as null reads as `default`, like a missing one."""
    found = value.get(name) if isinstance(value, dict) else getattr(value, name, None)
    return default if found is None else found


@dataclass(slots=True)
class _Item:
    """One output item's block: its kind and whether any of its content was streamed."""

    block: int
    kind: str
    streamed: bool = False
    summary_index: int = 0


@dataclass(slots=True)
class ResponseFold:
    """Folds Responses stream events into normalised events, one event at a time."""

    request_id: str | None = None
    next_block: int = 0
    items: dict[int, _Item] = field(default_factory=dict)
    open_blocks: list[int] = field(default_factory=list)
    calls: int = 0
    refused: bool = False
    stopped: bool = False

    def feed(self, event: Any) -> list[StreamEvent]:
        """The normalised events for one stream event; raises ProviderError on a failure."""
        kind = _get(event, "type", None)
        if self.stopped or not isinstance(kind, str):
            return []
        if kind == "response.output_item.added":
            return self._on_added(_get(event, "output_index"), _get(event, "item"))
        if kind in _TEXT_DELTAS:
            self.refused = self.refused or kind == "response.refusal.delta"
            item = self._item(_get(event, "output_index"), "message")
            item.streamed = True
            return [TextDelta(item.block, _get(event, "delta"))] if _get(event, "delta") else []
        if kind in _THINKING_DELTAS:
            return self._on_thinking(event)
        if kind == "response.function_call_arguments.delta":
            call = self.items.get(_get(event, "output_index"))
            if call is None or call.kind != "function_call" or not _get(event, "delta"):
                return []
            call.streamed = True
            return [ToolInputDelta(call.block, _get(event, "delta"))]
        if kind == "response.output_item.done":
            return self._on_done(_get(event, "output_index"), _get(event, "item"))
        if kind in ("response.completed", "response.incomplete"):
            return self._on_end(_get(event, "response"))
        if kind == "response.failed":
            error = _get(_get(event, "response"), "error", None)
            code, message = _get(error, "code", None), _get(error, "message", "")
            raise stream_failure(code, message, self.request_id, source="response.failed")
        if kind == "error":
            code, message = _get(event, "code", None), _get(event, "message", "")
            raise stream_failure(code, message, self.request_id, source="stream error")
        return []

    def _item(self, output_index: int, kind: str) -> _Item:
        item = self.items.get(output_index)
        if item is None:
            item = self.items[output_index] = _Item(self.next_block, kind)
            self.next_block += 1
            self.open_blocks.append(item.block)
        return item

    def _on_added(self, output_index: int, item: Any) -> list[StreamEvent]:
        kind = _get(item, "type", None)
        if kind in ("message", "reasoning"):
            self._item(output_index, kind)
            return []
        if kind == "function_call" and output_index not in self.items:
            return self._start_call(output_index, item)
        return []

    def _start_call(self, output_index: int, item: Any) -> list[StreamEvent]:
        block = self._item(output_index, "function_call").block
        self.calls += 1
        call_id = _get(item, "call_id", None) or new_id("call")
        return [ToolUseStart(block, call_id, str(_get(item, "name", "")))]

    def _on_thinking(self, event: Any) -> list[StreamEvent]:
        item = self._item(_get(event, "output_index"), "reasoning")
        if not _get(event, "delta"):
            return []
        # Summary parts are paragraphs of their own.
        part = _get(event, "summary_index", item.summary_index)
        gap = "\n\n" if item.streamed and part != item.summary_index else ""
        item.summary_index, item.streamed = part, True
        return [ThinkingDelta(item.block, gap + _get(event, "delta"))]

    def _on_done(self, output_index: int, item: Any) -> list[StreamEvent]:
        kind = _get(item, "type", None)
        out: list[StreamEvent] = []
        if kind == "function_call" and output_index not in self.items:
            out += self._start_call(output_index, item)
        known = self.items.get(output_index)
        if known is None:
            return out
        if not known.streamed:
            out += _unstreamed_content(known.block, item)
            self.refused = self.refused or _has_refusal(item)
        encrypted = _get(item, "encrypted_content", None) if kind == "reasoning" else None
        if encrypted:
            out.append(EncryptedReasoning(known.block, encrypted))
        if known.block in self.open_blocks:
            self.open_blocks.remove(known.block)
            out.append(BlockStop(known.block))
        return out

    def _on_end(self, response: Any) -> list[StreamEvent]:
        self.stopped = True
        out: list[StreamEvent] = [BlockStop(b) for b in self.open_blocks]
        self.open_blocks.clear()
        usage = _get(response, "usage", None)
        if usage is not None:
            out.append(UsageUpdate(usage_from(usage)))
        details = _get(response, "incomplete_details", None)
        out.append(MessageStop(self.stop_reason(_get(details, "reason", None))))
        return out

    def stop_reason(self, incomplete: str | None) -> StopReason:
        """Why the message ended: cut by the output limit, refused, calling tools, or done."""
        if incomplete == "max_output_tokens":
            return "max_tokens"
        if incomplete == "content_filter" or (self.refused and not self.calls):
            return "refusal"
        return "tool_use" if self.calls else "end_turn"


def _unstreamed_content(block: int, item: Any) -> list[StreamEvent]:
    """A finished item's content when none of it came as deltas."""
    kind = _get(item, "type", None)
    if kind == "function_call":
        arguments = _get(item, "arguments", "")
        return [ToolInputDelta(block, arguments)] if arguments else []
    if kind == "reasoning":
        parts = [_get(p, "text", "") for p in _get(item, "summary", None) or ()]
        parts += [_get(p, "text", "") for p in _get(item, "content", None) or ()]
        text = "\n\n".join(p for p in parts if p)
        return [ThinkingDelta(block, text)] if text else []
    if kind == "message":
        texts = [_part_text(p) for p in _get(item, "content", None) or ()]
        text = "".join(t for t in texts if t)
        return [TextDelta(block, text)] if text else []
    return []


def _part_text(part: Any) -> str:
    if _get(part, "type", None) == "refusal":
        return str(_get(part, "refusal", ""))
    return str(_get(part, "text", ""))


def _has_refusal(item: Any) -> bool:
    parts = _get(item, "content", None) or ()
    return _get(item, "type", None) == "message" and any(
        _get(p, "type", None) == "refusal" for p in parts
    )


def usage_from(usage: Any) -> Usage:
    """Our usage from a ResponseUsage: cached (and cache-written) input split out; output
    tokens include the reasoning tokens, which are billed as output."""
    details = _get(usage, "input_tokens_details", None)
    cached = _get(details, "cached_tokens", None) or 0
    written = _get(details, "cache_write_tokens", None) or 0
    total_input = _get(usage, "input_tokens", None) or 0
    return Usage(
        input_tokens=max(0, total_input - cached - written),
        output_tokens=_get(usage, "output_tokens", None) or 0,
        cache_read_tokens=cached,
        cache_write_tokens=written,
    )
