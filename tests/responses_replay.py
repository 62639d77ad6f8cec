"""Generated OpenAI Responses streams for the replay server, shaped like the fixtures in
tests/fixtures/openai_responses/: `event:` lines named after each payload's `type`,
numbered by `sequence_number`, with the created/in_progress/…/completed lifecycle."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from replay_server import Frame, ScriptedResponse, ToolCall, compact_json

_HEADERS = (("content-type", "text/event-stream; charset=utf-8"),)


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def response_object(
    response_id: str, model: str, status: str, output: list[dict[str, Any]], **fields: Any
) -> dict[str, Any]:
    """A Response object with the fields api.openai.com sends (`fields` override)."""
    base: dict[str, Any] = {
        "id": response_id,
        "object": "response",
        "created_at": 1764180000,
        "status": status,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": None,
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None},
        "store": False,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": None,
        "metadata": {},
    }
    return {**base, **fields}


def usage_object(
    input_tokens: int, output_tokens: int, cached: int = 0, reasoning: int = 0
) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": input_tokens + output_tokens,
    }


@dataclass(slots=True)
class EventList:
    """Stream payloads, numbered as they are added."""

    payloads: list[dict[str, Any]] = field(default_factory=list)

    def add(self, kind: str, **fields: Any) -> None:
        self.payloads.append({"type": kind, "sequence_number": len(self.payloads), **fields})

    def message(self, index: int, text: str, *, refusal: bool = False) -> dict[str, Any]:
        item_id = f"msg_{index:04d}replay"
        item = {"id": item_id, "type": "message", "status": "in_progress", "role": "assistant"}
        self.add("response.output_item.added", output_index=index, item={**item, "content": []})
        where = {"item_id": item_id, "output_index": index, "content_index": 0}
        delta_kind = "response.refusal.delta" if refusal else "response.output_text.delta"
        for piece in _pieces(text, 12):
            self.add(delta_kind, **where, delta=piece)
        part = (
            {"type": "refusal", "refusal": text}
            if refusal
            else {"type": "output_text", "annotations": [], "text": text}
        )
        done = {**item, "status": "completed", "content": [part]}
        self.add("response.output_item.done", output_index=index, item=done)
        return done

    def call(self, index: int, call: ToolCall) -> dict[str, Any]:
        item_id = f"fc_{index:04d}replay"
        item = {"id": item_id, "type": "function_call", "call_id": call.id, "name": call.name}
        added = {**item, "arguments": "", "status": "in_progress"}
        self.add("response.output_item.added", output_index=index, item=added)
        arguments = json.dumps(call.input)
        for piece in _pieces(arguments, 10):
            self.add(
                "response.function_call_arguments.delta",
                item_id=item_id,
                output_index=index,
                delta=piece,
            )
        done = {**item, "arguments": arguments, "status": "completed"}
        self.add("response.output_item.done", output_index=index, item=done)
        return done

    def reasoning(self, index: int, summary: Sequence[str], encrypted: str) -> dict[str, Any]:
        item_id = f"rs_{index:04d}replay"
        item = {"id": item_id, "type": "reasoning", "summary": []}
        self.add("response.output_item.added", output_index=index, item=item)
        for k, text in enumerate(summary):
            for piece in _pieces(text, 16):
                self.add(
                    "response.reasoning_summary_text.delta",
                    item_id=item_id,
                    output_index=index,
                    summary_index=k,
                    delta=piece,
                )
        parts = [{"type": "summary_text", "text": t} for t in summary]
        done = {**item, "summary": parts, "encrypted_content": encrypted}
        self.add("response.output_item.done", output_index=index, item=done)
        return done


def responses_stream(
    payloads: Sequence[dict[str, Any]], *, request_id: str = "req_replay", **options: Any
) -> ScriptedResponse:
    """A Responses SSE stream from payloads; each frame's `event:` line is its type."""
    frames = tuple(Frame(compact_json(p), str(p["type"])) for p in payloads)
    headers = (*_HEADERS, ("x-request-id", request_id))
    return ScriptedResponse(200, headers, frames=frames, **options)


def responses_turn(
    *,
    text: str | None = None,
    tool_calls: Sequence[ToolCall] = (),
    reasoning: tuple[Sequence[str], str] | None = None,
    refusal: str | None = None,
    incomplete: str | None = None,
    input_tokens: int = 100,
    output_tokens: int = 20,
    cached_tokens: int = 0,
    reasoning_tokens: int = 0,
    model: str = "gpt-replay",
    request_id: str = "req_replay",
    **options: Any,
) -> ScriptedResponse:
    """One response: (summary parts, encrypted content)?, text?, refusal?, then calls;
    it ends with response.incomplete when `incomplete` names a reason."""
    events = EventList()
    response_id = f"resp_{request_id}"
    events.add("response.created", response=response_object(response_id, model, "in_progress", []))
    output: list[dict[str, Any]] = []
    if reasoning is not None:
        output.append(events.reasoning(len(output), *reasoning))
    if text is not None:
        output.append(events.message(len(output), text))
    if refusal is not None:
        output.append(events.message(len(output), refusal, refusal=True))
    for call in tool_calls:
        output.append(events.call(len(output), call))
    usage = usage_object(input_tokens, output_tokens, cached_tokens, reasoning_tokens)
    status = "incomplete" if incomplete else "completed"
    details = {"reason": incomplete} if incomplete else None
    final = response_object(
        response_id, model, status, output, usage=usage, incomplete_details=details
    )
    events.add(f"response.{status}", response=final)
    return responses_stream(events.payloads, request_id=request_id, **options)
