"""Fold a provider's normalised stream into one assistant message, as it arrives.

A tool call is handed to the executor once its input can no longer change: when a later
block starts, or when the message ends for any reason but `max_tokens`. The last block of
a response cut by the output limit is therefore never executed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agentls.events import LoopEvent, TextDeltaEvent, ThinkingDeltaEvent
from agentls.messages import ContentBlock, Message, TextBlock, ThinkingBlock, ToolUseBlock, new_id
from agentls.providers.base import (
    BlockStop,
    EncryptedReasoning,
    MessageStop,
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


@dataclass(slots=True)
class _Block:
    kind: str
    text: list[str] = field(default_factory=list)
    signature: str | None = None
    encrypted: str | None = None
    tool_id: str = ""
    tool_name: str = ""
    stopped: bool = False
    dispatched: bool = False


@dataclass(frozen=True, slots=True)
class ToolCallReady:
    """A complete tool call; `input_error` is set when its JSON could not be parsed."""

    block: ToolUseBlock
    input_error: str | None = None


class AssistantAssembler:
    """Builds the assistant message block by block; pure apart from its own state."""

    def __init__(self) -> None:
        self.message_id = new_id("msg")
        self.usage = Usage()
        self.stop_reason: StopReason | None = None
        self._blocks: dict[int, _Block] = {}
        self._ready: dict[str, ToolCallReady] = {}

    def feed(self, event: StreamEvent) -> list[LoopEvent | ToolCallReady]:
        """Fold one stream event; return the loop events and ready tool calls it produces."""
        if isinstance(event, TextDelta):
            self._block(event.index, "text").text.append(event.text)
            return [TextDeltaEvent(self.message_id, event.text)] if event.text else []
        if isinstance(event, ThinkingDelta):
            self._block(event.index, "thinking").text.append(event.text)
            return [ThinkingDeltaEvent(self.message_id, event.text)] if event.text else []
        if isinstance(event, SignatureDelta):
            self._block(event.index, "thinking").signature = event.signature
            return []
        if isinstance(event, EncryptedReasoning):
            self._block(event.index, "thinking").encrypted = event.encrypted_content
            return []
        if isinstance(event, ToolUseStart):
            ready = self._release(stopped_only=True)
            block = self._block(event.index, "tool_use")
            # An id the message already used (a server bug) gets a fresh one: the history
            # must pair each tool_use with exactly one tool_result.
            used = {b.tool_id for b in self._blocks.values() if b is not block}
            tool_id = event.id if event.id and event.id not in used else new_id("toolu")
            block.tool_id, block.tool_name = tool_id, event.name
            return list(ready)
        if isinstance(event, ToolInputDelta):
            self._block(event.index, "tool_use").text.append(event.partial_json)
            return []
        if isinstance(event, BlockStop):
            if event.index in self._blocks:
                self._blocks[event.index].stopped = True
            return []
        if isinstance(event, UsageUpdate):
            self.usage = event.usage
            return []
        if isinstance(event, MessageStop):
            self.stop_reason = event.stop_reason
            if event.stop_reason == "max_tokens":
                return []
            return list(self._release(stopped_only=False))
        return []

    def text(self, event: TextDelta) -> TextDeltaEvent | None:
        """`feed` for a text delta, most of a stream's events: its loop event, if any,
        without a list around it."""
        self._block(event.index, "text").text.append(event.text)
        return TextDeltaEvent(self.message_id, event.text) if event.text else None

    def streamed(self) -> bool:
        """True once any text or thinking was streamed to the client."""
        return any(b.kind != "tool_use" and any(b.text) for b in self._blocks.values())

    def dispatched_calls(self) -> list[ToolUseBlock]:
        """Tool calls handed to the executor so far, in order."""
        return [r.block for r in self._ready.values()]

    def message(self) -> Message:
        """The assistant message as it stands: text, thinking and dispatched tool calls only.

        An undispatched tool call (cut by max_tokens, or interrupted mid-stream) is left out,
        so the history never holds a tool_use that was not executed.
        """
        content: list[ContentBlock] = []
        for block in self._ordered():
            if block.kind == "text":
                text = "".join(block.text)
                if text:
                    content.append(TextBlock(text))
            elif block.kind == "thinking":
                text = "".join(block.text)
                content.append(ThinkingBlock(text, block.signature, block.encrypted))
            elif block.dispatched:
                content.append(self._ready[block.tool_id].block)
        return Message("assistant", tuple(content), self.message_id)

    def _block(self, index: int, kind: str) -> _Block:
        block = self._blocks.get(index)
        if block is None:
            block = self._blocks[index] = _Block(kind)
        return block

    def _ordered(self) -> list[_Block]:
        return [self._blocks[i] for i in sorted(self._blocks)]

    def _release(self, *, stopped_only: bool) -> list[ToolCallReady]:
        released = []
        for block in self._ordered():
            if block.kind != "tool_use" or block.dispatched:
                continue
            if stopped_only and not block.stopped:
                continue
            block.dispatched = True
            ready = _parse_call(block)
            self._ready[block.tool_id] = ready
            released.append(ready)
        return released


def _parse_call(block: _Block) -> ToolCallReady:
    raw = "".join(block.text).strip()
    try:
        parsed: Any = json.loads(raw) if raw else {}
    except json.JSONDecodeError as exc:
        excerpt = raw if len(raw) <= 200 else raw[:200] + "…"
        error = f"The tool input was not valid JSON ({exc.msg} at position {exc.pos}): {excerpt}"
        return ToolCallReady(ToolUseBlock(block.tool_id, block.tool_name, {}), error)
    if not isinstance(parsed, dict):
        error = f"The tool input must be a JSON object, not {type(parsed).__name__}."
        return ToolCallReady(ToolUseBlock(block.tool_id, block.tool_name, {}), error)
    return ToolCallReady(ToolUseBlock(block.tool_id, block.tool_name, parsed))
