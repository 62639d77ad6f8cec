"""A history's messages as JSON, each converted and encoded once while the history keeps it.

An agent loop resends the whole history on every call. The OpenAI request bodies
(openai_body.py, responses_body.py) keep each message's encoded API form here and reuse
it while the next request's history holds the same frozen `Message` object at the same
place, so only the new tail is converted. It serves APIs where a message's API form
depends on that message alone, whatever comes before or after it. The tools' JSON is kept
the same way by all three request bodies (anthropic_body.py too).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from agentls.images import without_images
from agentls.messages import Message, ToolSpec


class EncodedHistory:
    """The previous request's history and each message's JSON ("" when it sends nothing).

    Only the previous request is remembered, by the identity of its messages, so a
    compacted or rewritten history, or another history (a subagent sharing the
    provider), simply converts again from where it differs.
    """

    def __init__(self, encode: Callable[[Message], str]) -> None:
        self._encode = encode
        self._messages: list[Message] = []
        self._encoded: list[str] = []
        self._last_reused = 0
        # The model whose images are replaced by notes; None when images are sent.
        self._blind_model: str | None = None

    @property
    def reused(self) -> int:
        """How many messages the last update took from the one before."""
        return self._last_reused

    def update(self, messages: Sequence[Message], blind_model: str | None) -> list[str]:
        """Each message's JSON for this request (images as notes for a blind model)."""
        if blind_model != self._blind_model:
            # A blind model's images become notes naming the model: start afresh.
            self._blind_model = blind_model
            del self._messages[:], self._encoded[:]
        same = 0
        limit = min(len(messages), len(self._messages))
        while same < limit and messages[same] is self._messages[same]:
            same += 1
        self._last_reused = same
        del self._messages[same:], self._encoded[same:]
        for message in messages[same:]:
            self._messages.append(message)
            seen = message
            if blind_model is not None:
                (seen,) = without_images([message], blind_model)
            self._encoded.append(self._encode(seen))
        return self._encoded


class EncodedTools:
    """The tools' JSON, encoded again only when the registry hands out other specs (it
    hands out the same spec objects on every call of a session)."""

    def __init__(self, params: Callable[[Sequence[ToolSpec]], Any], dumps: Callable[[Any], str]):
        self._params = params
        self._dumps = dumps
        self._tools: list[ToolSpec] = []
        self._json = ""

    def json_of(self, tools: Sequence[ToolSpec]) -> str:
        if len(tools) != len(self._tools) or any(
            a is not b for a, b in zip(tools, self._tools, strict=True)
        ):
            self._tools = list(tools)
            self._json = self._dumps(self._params(tools))
        return self._json
