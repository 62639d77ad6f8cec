"""The Messages API request body as JSON bytes, converted and encoded one new message at a time.

An agent loop resends the whole history on every call. Converting every message to its
API form, letting the SDK deep-copy the result (its `messages.create` copies the params
tree before it encodes it) and encoding it to JSON again cost time that grows with the
history: about 10 ms of a call's 16 ms CPU at 1,000 messages. Here each message is
converted and encoded once; later calls reuse its JSON while the history keeps it (the
same `Message` object at the same place), so only the new tail is converted. The body is
what `build_params` gives, byte for byte once parsed: `build_params` stays the reference.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agentls.images import without_images
from agentls.messages import Message
from agentls.providers.anthropic_request import (
    block_param,
    mark_cache_breakpoint,
    system_params,
    tool_params,
)
from agentls.providers.base import ModelRequest
from agentls.providers.history_json import EncodedTools


def _dumps(value: Any) -> str:
    # The separators the SDK's own encoder uses (json.dumps's defaults).
    return json.dumps(value)


def _message_param(message: Message) -> dict[str, Any] | None:
    """One message as the API takes it (no cache breakpoint), or None when it has no content."""
    blocks = [b for b in (block_param(b) for b in message.content) if b is not None]
    return {"role": message.role, "content": blocks} if blocks else None


class RequestBody:
    """Builds each request's body, reusing the encoded messages of the previous request.

    One per provider. Only the previous request's history is remembered, by the identity
    of its `Message` objects (they are frozen), so a compacted or rewritten history, or
    another history (a subagent sharing the provider), simply converts again from where
    it differs.
    """

    def __init__(self) -> None:
        self._messages: list[Message] = []
        # The JSON of each message without a cache breakpoint; None for one the API would
        # reject as empty (it is left out).
        self._encoded: list[str | None] = []
        self._tools = EncodedTools(tool_params, _dumps)
        # The system prompt's two parts and their JSON (None: no system field).
        self._system: tuple[str, str] = ("", "")
        self._system_json: str | None = None
        self._last_reused = 0
        # The model whose images are replaced by notes; None when images are sent.
        self._blind_model: str | None = None

    def encode(self, request: ModelRequest, vision: bool = True) -> bytes:
        """The body of `messages.create(stream=True, **build_params(request, vision))`."""
        # A blind model's images become notes naming the model, so its messages encode
        # differently: a change of either starts the cache afresh.
        blind_model = None if vision else request.model
        if blind_model != self._blind_model:
            self._blind_model = blind_model
            del self._messages[:], self._encoded[:]
        parts = [
            f'"model": {_dumps(request.model)}',
            f'"max_tokens": {_dumps(request.max_tokens)}',
            f'"messages": {self._messages_json(request.messages)}',
        ]
        system = self._system_json_for(request.system_static, request.system_dynamic)
        if system is not None:
            parts.append(f'"system": {system}')
        if request.tools:
            parts.append(f'"tools": {self._tools.json_of(request.tools)}')
            if request.tool_choice == "none":
                parts.append('"tool_choice": {"type": "none"}')
        if request.thinking_budget:
            thinking = {"type": "enabled", "budget_tokens": request.thinking_budget}
            parts.append(f'"thinking": {_dumps(thinking)}')
        parts.append('"stream": true')
        return ("{" + ", ".join(parts) + "}").encode()

    @property
    def reused(self) -> int:
        """How many messages the last body took from the one before (for tests and benches)."""
        return self._last_reused

    def _messages_json(self, messages: Sequence[Message]) -> str:
        same = 0
        limit = min(len(messages), len(self._messages))
        while same < limit and messages[same] is self._messages[same]:
            same += 1
        self._last_reused = same
        del self._messages[same:], self._encoded[same:]
        for message in messages[same:]:
            param = self._param(message)
            self._messages.append(message)
            self._encoded.append(None if param is None else _dumps(param))
        return self._with_breakpoint()

    def _with_breakpoint(self) -> str:
        """The encoded messages as a JSON array, the last one re-encoded with its breakpoint."""
        kept = [i for i, text in enumerate(self._encoded) if text is not None]
        if not kept:
            return "[]"
        last = kept[-1]
        param = self._param(self._messages[last])
        assert param is not None
        mark_cache_breakpoint(param["content"])
        texts = [self._encoded[i] for i in kept[:-1]]
        return "[" + ", ".join([*(t for t in texts if t is not None), _dumps(param)]) + "]"

    def _param(self, message: Message) -> dict[str, Any] | None:
        if self._blind_model is not None:
            (message,) = without_images([message], self._blind_model)
        return _message_param(message)

    def _system_json_for(self, static: str, dynamic: str) -> str | None:
        # The same prompt comes back on every call of a session; comparing the strings
        # is cheaper than encoding them (they are usually the very same objects).
        if (static, dynamic) != self._system:
            self._system = (static, dynamic)
            system = system_params(static, dynamic)
            self._system_json = _dumps(system) if system else None
        return self._system_json
