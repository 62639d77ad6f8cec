"""The Chat Completions request body as JSON bytes, converted and encoded one new message at a time.

An agent loop resends the whole history on every call, and converting every message and
encoding it again cost time that grows with the history (about 9 ms of a call's 12 ms
CPU at 1,000 messages). Here each history message is converted and encoded once, and
reused while the history keeps it (history_json.py). A history message's API messages
depend on that message alone (its tool results go first, then its text; an assistant's
calls ride on its own message), so a kept message's JSON stays right whatever follows
it. The body is what `build_params` gives plus `"stream": true`, equal once parsed:
`build_params` stays the reference.
"""

from __future__ import annotations

import json
from typing import Any

from agentls.messages import Message
from agentls.providers.base import ModelRequest
from agentls.providers.history_json import EncodedHistory, EncodedTools
from agentls.providers.openai_request import (
    RequestOptions,
    assistant_params,
    is_reasoning_model,
    tool_params,
    user_params,
)


def _dumps(value: Any) -> str:
    return json.dumps(value)


def _message_json(message: Message) -> str:
    """One history message's API messages as comma-joined JSON ("" when there are none)."""
    params = assistant_params(message) if message.role == "assistant" else user_params(message)
    return ", ".join(_dumps(p) for p in params)


class ChatBody:
    """Builds each request's body, reusing the encoded messages of the previous request.

    One per provider. Only the previous request's history is remembered, by the identity
    of its `Message` objects, so a compacted or rewritten history, or another history (a
    subagent sharing the provider), simply converts again from where it differs.
    """

    def __init__(self, options: RequestOptions = RequestOptions()) -> None:
        self._options = options
        self._history = EncodedHistory(_message_json)
        self._tools = EncodedTools(tool_params, _dumps)
        self._system: tuple[str, str] = ("", "")
        self._system_json = ""

    @property
    def reused(self) -> int:
        """How many messages the last body took from the one before (for tests and benches)."""
        return self._history.reused

    def encode(self, request: ModelRequest, vision: bool = True) -> bytes:
        """The body of `chat.completions.create(stream=True, **build_params(request, ...))`."""
        options = self._options
        reasoning = is_reasoning_model(request.model)
        field_name = options.max_tokens_field or (
            "max_completion_tokens" if reasoning else "max_tokens"
        )
        parts = [
            f'"model": {_dumps(request.model)}',
            f'"messages": {self._messages_json(request, vision)}',
            f'"{field_name}": {_dumps(request.max_tokens)}',
        ]
        if options.stream_usage:
            parts.append('"stream_options": {"include_usage": true}')
        if options.reasoning_effort and reasoning:
            parts.append(f'"reasoning_effort": {_dumps(options.reasoning_effort)}')
        if request.tools:
            parts.append(f'"tools": {self._tools.json_of(request.tools)}')
            if request.tool_choice == "none":
                parts.append('"tool_choice": "none"')
        parts.append('"stream": true')
        return ("{" + ", ".join(parts) + "}").encode()

    def _messages_json(self, request: ModelRequest, vision: bool) -> str:
        encoded = self._history.update(request.messages, None if vision else request.model)
        texts = [self._system_json_for(request.system_static, request.system_dynamic)]
        return "[" + ", ".join(t for t in [*texts, *encoded] if t) + "]"

    def _system_json_for(self, static: str, dynamic: str) -> str:
        # The same prompt comes back on every call of a session: compare, don't encode.
        if (static, dynamic) != self._system:
            self._system = (static, dynamic)
            system = "\n\n".join(p for p in (static, dynamic) if p)
            self._system_json = _dumps({"role": "system", "content": system}) if system else ""
        return self._system_json
