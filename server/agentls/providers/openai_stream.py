"""Reading an OpenAI-compatible stream: chat.completion.chunk objects folded into the
provider's normalised events, whatever the server's dialect (where usage arrives, what
the reasoning field is called, how parallel tool-call fragments are indexed).

The chunks are read as parsed JSON (plain dicts): the SDK's typed chunks cost a
`construct` of every nested object per chunk, about a quarter of a call's CPU, and the
fold reads only a few fields by name. Typed chunks are still read the same way."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

import openai

from agentls.messages import new_id
from agentls.providers.base import (
    BlockStop,
    MessageStop,
    StopReason,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolInputDelta,
    ToolUseStart,
    UsageUpdate,
)
from agentls.usage import Usage

# Non-standard delta fields carrying reasoning text: DeepSeek/vLLM/SGLang, then Ollama.
_REASONING_FIELDS = ("reasoning_content", "reasoning")


# --- stream fold --------------------------------------------------------------------


def _get(value: Any, name: str, default: Any = None) -> Any:
    """A field of a chunk or of a part of one: the parsed JSON the provider reads (plain
    dicts), or the SDK's typed objects (whose extra fields are attributes too)."""
    if isinstance(value, dict):
        return value.get(name, default)
    return getattr(value, name, default)


@dataclass(slots=True)
class _Call:
    block: int
    id: str
    arguments: list[str] = field(default_factory=list)

    def complete(self) -> bool:
        """True once the arguments so far are a whole JSON object (nothing can follow)."""
        try:
            return isinstance(json.loads("".join(self.arguments)), dict)
        except ValueError:
            return False


@dataclass(slots=True)
class ChunkFold:
    """Folds chat.completion.chunk objects into normalised events, one chunk at a time.

    Block indices are given out in order of first appearance (reasoning, text and each
    tool call get their own), so sorting blocks by index gives the message's order. A
    tool call's block closes as soon as its arguments are complete (the next call starts),
    and the message stops at its finish_reason, not at the end of the stream, so its calls
    start while the server is still sending the usage chunk.
    """

    next_block: int = 0
    text_block: int | None = None
    reasoning_block: int | None = None
    calls: list[_Call] = field(default_factory=list)
    calls_by_index: dict[int, _Call] = field(default_factory=dict)
    open_blocks: list[int] = field(default_factory=list)
    finish_reason: str | None = None
    refused: bool = False
    stopped: bool = False

    def feed(self, chunk: Any) -> list[StreamEvent]:
        """The normalised events for one chunk. Usage may ride on any chunk."""
        out: list[StreamEvent] = []
        for choice in _get(chunk, "choices") or ():
            # n=1 is always requested; other choices would be a server bug.
            if _get(choice, "index", 0) not in (0, None):
                continue
            delta = _get(choice, "delta")
            if delta is not None:
                out += self._on_delta(delta)
            finish_reason = _get(choice, "finish_reason")
            if finish_reason and self.finish_reason is None:
                self.finish_reason = str(finish_reason)
                out += self._stop()
        usage = _get(chunk, "usage")
        if usage is not None:
            out.append(UsageUpdate(usage_from(usage)))
        return out

    def finish(self) -> list[StreamEvent]:
        """The closing events once the stream has ended: at its finish_reason, or at a
        `[DONE]` without one (some servers send none). The provider treats a stream that
        ended with neither as dropped, and does not call this."""
        return [] if self.stopped else self._stop()

    def _stop(self) -> list[StreamEvent]:
        self.stopped = True
        return [*self._close_blocks(), MessageStop(self.stop_reason())]

    def stop_reason(self) -> StopReason:
        """The finish_reason in Anthropic's terms; tool calls win over a plain `stop`."""
        if self.finish_reason == "length":
            return "max_tokens"
        if self.finish_reason == "content_filter" or self.refused:
            return "refusal"
        # Some servers say `stop` (or nothing) after tool calls; the calls are what count.
        return "tool_use" if self.calls else "end_turn"

    def _allocate(self) -> int:
        index = self.next_block
        self.next_block += 1
        self.open_blocks.append(index)
        return index

    def _close_blocks(self) -> list[StreamEvent]:
        closing: list[StreamEvent] = [BlockStop(i) for i in self.open_blocks]
        self.open_blocks.clear()
        return closing

    def _on_delta(self, delta: Any) -> list[StreamEvent]:
        # Its blocks are closed once a finish_reason came; stray deltas cannot reopen them.
        if self.finish_reason is not None:
            return []
        out: list[StreamEvent] = []
        reasoning = _reasoning_text(delta)
        if reasoning:
            if self.reasoning_block is None:
                self.reasoning_block = self._allocate()
            out.append(ThinkingDelta(self.reasoning_block, reasoning))
        refusal = _get(delta, "refusal")
        # A refusal is shown as text; the stop reason then says it was one.
        self.refused = self.refused or bool(refusal)
        for text in (_get(delta, "content"), refusal):
            if isinstance(text, str) and text:
                out.append(self._text(text))
        for tool_call in _get(delta, "tool_calls") or ():
            out += self._on_tool_call(tool_call)
        return out

    def _text(self, text: str) -> TextDelta:
        if self.text_block is None:
            self.text_block = self._allocate()
        return TextDelta(self.text_block, text)

    def _on_tool_call(self, tool_call: Any) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        call = self._current_call(tool_call)
        if call is None:
            out += self._close_complete_call()
            call = self._start_call(tool_call)
            out.append(ToolUseStart(call.block, call.id, _function_field(tool_call, "name")))
        arguments = _function_field(tool_call, "arguments")
        if arguments and call.block in self.open_blocks:
            call.arguments.append(arguments)
            out.append(ToolInputDelta(call.block, arguments))
        return out

    def _close_complete_call(self) -> list[StreamEvent]:
        """Close the previous call when a new one starts, if its arguments are whole.

        Most servers stream calls one after another; some interleave their fragments,
        and there the previous call is still incomplete, so it stays open until the end.
        """
        previous = self.calls[-1] if self.calls else None
        if previous is None or previous.block not in self.open_blocks or not previous.complete():
            return []
        self.open_blocks.remove(previous.block)
        return [BlockStop(previous.block)]

    def _current_call(self, tool_call: Any) -> _Call | None:
        """The call a fragment continues, or None when it starts a new one.

        Fragments accumulate by `index`, but some servers give every parallel call index 0
        and others send no index: a new `id` at a used index starts a new call.
        """
        index = _get(tool_call, "index")
        if index is None:
            current = self.calls[-1] if self.calls else None
        else:
            current = self.calls_by_index.get(index)
        call_id = _get(tool_call, "id")
        if current is None or (call_id and call_id != current.id):
            return None
        return current

    def _start_call(self, tool_call: Any) -> _Call:
        call = _Call(self._allocate(), _get(tool_call, "id") or new_id("call"))
        index = _get(tool_call, "index")
        if index is not None:
            self.calls_by_index[index] = call
        self.calls.append(call)
        return call


def _reasoning_text(delta: Any) -> str | None:
    for name in _REASONING_FIELDS:
        value = _get(delta, name)
        if isinstance(value, str) and value:
            return value
    return None


def _function_field(tool_call: Any, name: str) -> str:
    value = _get(_get(tool_call, "function"), name)
    return value if isinstance(value, str) else ""


def usage_from(usage: Any) -> Usage:
    """Our usage from a CompletionUsage; cached prompt tokens are split out of the input."""
    details = _get(usage, "prompt_tokens_details")
    cached = (
        _get(details, "cached_tokens")
        # DeepSeek reports cache hits in its own field.
        or _get(usage, "prompt_cache_hit_tokens")
        or 0
    )
    prompt = _get(usage, "prompt_tokens") or 0
    return Usage(
        input_tokens=max(0, prompt - cached),
        output_tokens=_get(usage, "completion_tokens") or 0,
        cache_read_tokens=cached,
    )


class DoneWatch:
    """The SDK's SSE decoder, noting whether the stream's `data: [DONE]` came.

    The SDK ends its iteration quietly both at `[DONE]` and when the body just ends, so
    the decoder is the one place where a finished stream and a cut one differ.
    """

    def __init__(self, decoder: Any) -> None:
        self._decoder = decoder
        self.seen = False

    def iter_bytes(self, iterator: Iterator[bytes]) -> Iterator[Any]:
        """The synchronous path, unused by the async client; passed through."""
        result: Iterator[Any] = self._decoder.iter_bytes(iterator)
        return result

    async def aiter_bytes(self, iterator: AsyncIterator[bytes]) -> AsyncIterator[Any]:
        """The decoder's events, unchanged; the SDK stops at `[DONE]` as it would."""
        async for sse in self._decoder.aiter_bytes(iterator):
            if sse.data.startswith("[DONE]"):
                self.seen = True
            yield sse


def watch_done(chunks: openai.AsyncStream[Any]) -> DoneWatch:
    # The stream reads its decoder only when iteration starts, so it can be wrapped here.
    watch = DoneWatch(chunks._decoder)
    chunks._decoder = cast(Any, watch)
    return watch


# --- errors -------------------------------------------------------------------------
