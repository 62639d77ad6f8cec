"""The Responses request body as JSON bytes, converted and encoded one new message at a time.

As for Chat Completions (openai_body.py): each history message's input items are
converted and encoded once and reused while the history keeps the message
(history_json.py). A message's items depend on that message alone (its tool outputs,
then its words; an assistant's reasoning, text and calls in its own order). The body is
what `build_params` gives plus `"stream": true`, equal once parsed: `build_params` stays
the reference.
"""

from __future__ import annotations

import json
from typing import Any

from agentls.messages import Message
from agentls.providers.base import ModelRequest
from agentls.providers.history_json import EncodedHistory, EncodedTools
from agentls.providers.responses_request import (
    ENCRYPTED_REASONING,
    ResponsesOptions,
    input_items,
    tool_params,
    uses_reasoning,
)


def _dumps(value: Any) -> str:
    return json.dumps(value)


def _message_json(message: Message) -> str:
    """One history message's input items as comma-joined JSON ("" when there are none)."""
    return ", ".join(_dumps(item) for item in input_items([message]))


class ResponsesBody:
    """Builds each request's body, reusing the encoded items of the previous request."""

    def __init__(self, options: ResponsesOptions = ResponsesOptions()) -> None:
        self._options = options
        self._history = EncodedHistory(_message_json)
        self._tools = EncodedTools(tool_params, _dumps)

    @property
    def reused(self) -> int:
        """How many messages the last body took from the one before (for tests and benches)."""
        return self._history.reused

    def encode(self, request: ModelRequest, vision: bool = True) -> bytes:
        """The body of `responses.create(stream=True, **build_params(request, ...))`."""
        encoded = self._history.update(request.messages, None if vision else request.model)
        parts = [
            f'"model": {_dumps(request.model)}',
            '"input": [' + ", ".join(t for t in encoded if t) + "]",
            f'"max_output_tokens": {_dumps(request.max_tokens)}',
            '"store": false',
        ]
        instructions = "\n\n".join(p for p in (request.system_static, request.system_dynamic) if p)
        if instructions:
            parts.append(f'"instructions": {_dumps(instructions)}')
        if uses_reasoning(request.model):
            reasoning: dict[str, Any] = {"summary": "auto"}
            if self._options.reasoning_effort:
                reasoning["effort"] = self._options.reasoning_effort
            parts.append(f'"reasoning": {_dumps(reasoning)}')
            parts.append(f'"include": {_dumps([ENCRYPTED_REASONING])}')
        if request.tools:
            parts.append(f'"tools": {self._tools.json_of(request.tools)}')
            if request.tool_choice == "none":
                parts.append('"tool_choice": "none"')
        parts.append('"stream": true')
        return ("{" + ", ".join(parts) + "}").encode()
