"""A model that plays a script: the offline demo, the tests, and client authors' own tests.

A script is JSONL (or a list of objects), one model turn per entry:

    {"thinking": "…", "text": "…", "tool_calls": [{"name": "Read", "input": {…}}],
     "stop_reason": "tool_use", "delay": 0.01, "chunk": 16, "usage": {…}}

`tool_calls[].raw_input` streams a string as the tool input verbatim (for broken JSON);
`error` ({"kind", "message", "retryable", "retry_after", "output_limit"}) fails the call
after the text;
`hang: true` streams the text and then goes silent (for watchdog and abort tests);
`for: "text"` reserves an entry for requests in which a user message's text contains it
(a sub-agent's task), so concurrent sub-agents each get their own replies.
Every request is appended to `request_log` as JSON when a path is given, images included
(as base64 blocks, or as the note a model without `vision` gets in their place).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from agentls.images import IMAGE_TOKENS, supports_vision, without_images
from agentls.messages import Message, TextBlock, message_to_dict, new_id
from agentls.providers.base import (
    BlockStop,
    MessageStop,
    ModelInfo,
    ModelRequest,
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

_STOP_REASONS = {"end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "pause_turn"}


def load_script(source: str | Path | Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Script entries from a JSONL file path or an in-memory list; ValueError if malformed."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"cannot read script {path}: {exc.strerror}") from exc
        entries: list[Any] = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                entries.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not JSON ({exc.msg})") from exc
    else:
        entries = list(source)
    for number, entry in enumerate(entries, 1):
        if not isinstance(entry, dict):
            raise ValueError(f"script entry {number} must be an object")
        reason = entry.get("stop_reason")
        if reason is not None and reason not in _STOP_REASONS:
            raise ValueError(f"script entry {number}: unknown stop_reason {reason!r}")
    return cast(list[dict[str, Any]], entries)


class ScriptedProvider:
    """Plays script entries in order, one per model call."""

    name = "scripted"

    def __init__(
        self,
        script: Sequence[dict[str, Any]],
        request_log: str | Path | None = None,
        vision: bool | None = None,
    ) -> None:
        self._script = list(script)
        self._played = 0
        self._unplayed = list(range(len(self._script)))
        self._log = Path(request_log) if request_log else None
        # The `vision` setting; the model table says the scripted model sees images.
        self._vision = vision
        self._measured = _Measured()
        # The tool specs last measured and their size (the registry hands the same ones).
        self._tool_chars: tuple[tuple[Any, ...], int] = ((), 0)

    endpoint = "scripted"

    async def list_models(self) -> list[ModelInfo]:
        """The one model a script plays."""
        return [ModelInfo("scripted", "Scripted model")]

    @property
    def remaining(self) -> int:
        return len(self._script) - self._played

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if not supports_vision(request.model, self._vision):
            request = replace(request, messages=without_images(request.messages, request.model))
        messages = self._measured.messages(request.messages)
        self._record(request, messages)
        index = self._next_for(request)
        if index is None:
            raise ProviderError(
                "invalid_request",
                f"The scripted model has no more turns (it played {self._played}).",
                retryable=False,
            )
        self._unplayed.remove(index)
        self._played += 1
        prompt_chars = sum(measured.chars for measured in messages)
        prompt_chars += self._prefix_chars(request)
        # The entry's events come from a plain generator: an async one in between cost as
        # much per delta as the rest of the daemon's work on it.
        for event in _play(self._script[index], prompt_chars):
            if event.__class__ is _Pause:
                await event.wait()
            else:
                yield cast(StreamEvent, event)

    def _next_for(self, request: ModelRequest) -> int | None:
        """The entry for this request: the first unplayed one whose `for` text is in the
        text a user wrote in the request (how a sub-agent, whose task is such a text, gets
        its own replies while others run), else the first unplayed one without `for`."""
        reserved = [i for i in self._unplayed if "for" in self._script[i]]
        # What users wrote is only looked at when an entry is reserved: it grows with the
        # history, and was joined at every call of every script.
        written = "\n".join(
            block.text
            for message in (request.messages if reserved else ())
            if message.role == "user"
            for block in message.content
            if isinstance(block, TextBlock)
        )
        for index in reserved:
            if str(self._script[index]["for"]) in written:
                return index
        return next((i for i in self._unplayed if "for" not in self._script[i]), None)

    def _prefix_chars(self, request: ModelRequest) -> int:
        """The system prompt's and the tool definitions' size, for the usage estimate; the
        tools' part is worked out again only when the request's tools change."""
        tools = request.tools
        known, chars = self._tool_chars
        if len(known) != len(tools) or any(a is not b for a, b in zip(known, tools, strict=True)):
            chars = sum(len(t.description) + len(json.dumps(t.input_schema)) for t in tools)
            self._tool_chars = (tuple(tools), chars)
        return len(request.system_static) + len(request.system_dynamic) + chars

    def _record(self, request: ModelRequest, messages: list[_MeasuredMessage]) -> None:
        if self._log is None:
            return
        head = {
            "model": request.model,
            "max_tokens": request.max_tokens,
            "system_static": request.system_static,
            "system_dynamic": request.system_dynamic,
            "tools": [tool.name for tool in request.tools],
            "tool_choice": request.tool_choice,
        }
        # The line json.dumps(head | {"messages": [...]}) writes, each message's JSON kept
        # while the history holds it (the whole history was encoded again at every call).
        listed = ", ".join(measured.logged() for measured in messages)
        line = f'{json.dumps(head, ensure_ascii=False)[:-1]}, "messages": [{listed}]}}\n'
        with self._log.open("a", encoding="utf-8") as handle:
            handle.write(line)


@dataclass(frozen=True, slots=True)
class _Pause:
    """Where the script waits (its `delay` between chunks, or forever for `hang`)."""

    seconds: float | None

    async def wait(self) -> None:
        if self.seconds is None:
            await asyncio.Event().wait()
        else:
            await asyncio.sleep(self.seconds)


def _play(entry: dict[str, Any], prompt_chars: int) -> Iterator[StreamEvent | _Pause]:
    delay = float(entry.get("delay", 0))
    pause = _Pause(delay) if delay > 0 else None
    size = max(1, int(entry.get("chunk", 24)))
    index = 0
    output_chars = 0
    if entry.get("thinking"):
        for piece in _chunks(str(entry["thinking"]), size):
            yield ThinkingDelta(index, piece)
            if pause:
                yield pause
        yield SignatureDelta(index, str(entry.get("signature", "scripted-signature")))
        yield BlockStop(index)
        index += 1
    text = str(entry.get("text", ""))
    error = entry.get("error")
    if text:
        for piece in _chunks(text, size):
            yield TextDelta(index, piece)
            output_chars += len(piece)
            if pause:
                yield pause
        yield BlockStop(index)
        index += 1
    if entry.get("hang"):
        yield _Pause(None)
    if isinstance(error, dict):
        raise _error(error)
    for call in entry.get("tool_calls", []):
        raw = call.get("raw_input")
        payload = raw if isinstance(raw, str) else json.dumps(call.get("input", {}))
        yield ToolUseStart(index, str(call.get("id") or new_id("toolu")), str(call["name"]))
        for piece in _chunks(payload, size):
            yield ToolInputDelta(index, piece)
            output_chars += len(piece)
            if pause:
                yield pause
        yield BlockStop(index)
        index += 1
    yield UsageUpdate(_usage(entry, prompt_chars, output_chars))
    default = "tool_use" if entry.get("tool_calls") else "end_turn"
    yield MessageStop(cast(StopReason, entry.get("stop_reason", default)))


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _error(spec: dict[str, Any]) -> ProviderError:
    return ProviderError(
        spec.get("kind", "server"),
        str(spec.get("message", "scripted failure")),
        retryable=bool(spec.get("retryable", True)),
        status=spec.get("status"),
        retry_after=spec.get("retry_after"),
        output_limit=spec.get("output_limit"),
    )


def _usage(entry: dict[str, Any], prompt_chars: int, output_chars: int) -> Usage:
    given = entry.get("usage")
    if isinstance(given, dict):
        return Usage(
            int(given.get("input_tokens", 0)),
            int(given.get("output_tokens", 0)),
            int(given.get("cache_read_tokens", 0)),
            int(given.get("cache_write_tokens", 0)),
        )
    # About four characters per token: enough for a believable usage event offline.
    return Usage(prompt_chars // 4, max(1, output_chars // 4))


@dataclass(slots=True)
class _MeasuredMessage:
    """One history message as the fake model sees it: as a dict, its size, and (once asked
    for) its JSON as the request log writes it."""

    message: Message
    as_dict: dict[str, Any]
    chars: int
    logged_json: str | None = None

    def logged(self) -> str:
        if self.logged_json is None:
            self.logged_json = json.dumps(self.as_dict, ensure_ascii=False)
        return self.logged_json


class _Measured:
    """Each message of the history as a dict and its size, worked out once per message.

    Every request carries the whole history: converting and measuring all of it again at
    each call made the fake model's own cost grow with the conversation, and that cost
    was counted as agentls's in the per-call benchmarks."""

    def __init__(self) -> None:
        # By id, with the message itself (an id is only unique while its object lives).
        self._known: dict[int, _MeasuredMessage] = {}

    def messages(self, messages: Sequence[Message]) -> list[_MeasuredMessage]:
        """Each message measured, in order; only this request's are kept."""
        known: dict[int, _MeasuredMessage] = {}
        measured = []
        for message in messages:
            entry = self._known.get(id(message))
            if entry is None or entry.message is not message:
                as_dict = message_to_dict(message)
                entry = _MeasuredMessage(message, as_dict, _message_chars(message, as_dict))
            known[id(message)] = entry
            measured.append(entry)
        self._known = known
        return measured


def _message_chars(message: Message, as_dict: dict[str, Any]) -> int:
    """Its JSON size, an image counted as the text its tokens would hold, not as base64."""
    images = message.images()
    chars = len(json.dumps(as_dict))
    return chars - sum(len(i.data) for i in images) + 4 * IMAGE_TOKENS * len(images)
