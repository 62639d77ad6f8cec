"""OpenAI Responses API streams (`POST /v1/responses`, what Codex speaks), built like the
generated turns of tests/replay_server.py: one assistant message, or one function call.

The event sequence is the API's for a single output item: response.created, then
output_item.added, one delta, output_item.done, and response.completed with usage.
"""

from __future__ import annotations

import json
from typing import Any

from replay_server import Frame, ScriptedResponse, compact_json

_HEADERS = (("content-type", "text/event-stream; charset=utf-8"), ("x-request-id", "req_bench"))
_USAGE = {
    "input_tokens": 1000,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 20,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 1020,
}


def _stream(
    item: dict[str, Any], started: dict[str, Any], delta: dict[str, Any]
) -> ScriptedResponse:
    response = {"id": "resp_bench", "object": "response", "model": "gpt-bench", "output": []}
    done = {**response, "status": "completed", "output": [item], "usage": _USAGE}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**response, "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": started},
        {**delta, "item_id": item["id"], "output_index": 0},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": done},
    ]
    frames = tuple(Frame(compact_json(e), e["type"]) for e in events)
    return ScriptedResponse(200, _HEADERS, frames=frames)


def responses_text(text: str) -> ScriptedResponse:
    """An assistant message saying `text`."""
    content = {"type": "output_text", "text": text, "annotations": []}
    item = {"type": "message", "id": "msg_bench", "role": "assistant", "status": "completed"}
    started = {**item, "status": "in_progress", "content": []}
    delta = {"type": "response.output_text.delta", "content_index": 0, "delta": text}
    return _stream({**item, "content": [content]}, started, delta)


def responses_call(call_id: str, name: str, arguments: dict[str, Any]) -> ScriptedResponse:
    """A call of the function tool `name` with `arguments`."""
    encoded = json.dumps(arguments)
    item = {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "name": name}
    started = {**item, "arguments": "", "status": "in_progress"}
    delta = {"type": "response.function_call_arguments.delta", "delta": encoded}
    return _stream({**item, "arguments": encoded, "status": "completed"}, started, delta)
