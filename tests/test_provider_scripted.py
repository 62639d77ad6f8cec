"""The scripted provider's request log: what a client author's test sees of each request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentls.config import Settings
from agentls.images import IMAGE_TOKENS
from agentls.messages import ImageBlock, Message, TextBlock, ToolResultBlock, message_to_dict
from agentls.providers import scripted
from agentls.providers.base import ModelRequest, ToolSpec, UsageUpdate
from agentls.providers.factory import make_provider
from agentls.providers.scripted import ScriptedProvider

IMAGE = ImageBlock("image/png", "A" * 40_000, "shot.png", 3, 2)
HISTORY = [
    Message("user", (TextBlock("What is this?"), IMAGE)),
    Message("user", (ToolResultBlock("t1", (TextBlock("Image shot.png."), IMAGE)),)),
]


async def play(provider: Any, model: str = "scripted") -> None:
    async for _ in provider.stream(ModelRequest(model, "", "", HISTORY, [])):
        pass


def logged(path: Path) -> dict[str, Any]:
    (line,) = path.read_text(encoding="utf-8").splitlines()
    record: dict[str, Any] = json.loads(line)
    return record


async def test_the_request_log_shows_image_blocks(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    await play(ScriptedProvider([{"text": "A chart."}], log))
    first, second = logged(log)["messages"]
    assert first["content"][1]["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": IMAGE.data,
    }
    assert second["content"][0]["content"][1]["type"] == "image"


async def test_with_vision_off_the_log_shows_the_note_in_place_of_the_image(
    tmp_path: Path,
) -> None:
    log = tmp_path / "requests.jsonl"
    settings = Settings(script=[{"text": "I cannot see it."}], request_log=str(log), vision=False)
    await play(make_provider(settings))
    text = json.dumps(logged(log))
    assert IMAGE.data not in text
    assert text.count("[image: shot.png, png 3x2] Not shown: the model scripted") == 2


async def test_an_image_counts_as_a_fixed_size_in_scripted_usage(tmp_path: Path) -> None:
    provider = ScriptedProvider([{"text": "ok"}])
    events = [e async for e in provider.stream(ModelRequest("scripted", "", "", HISTORY, []))]
    (usage,) = [e.usage for e in events if isinstance(e, UsageUpdate)]
    assert usage.input_tokens < 2 * IMAGE_TOKENS + 200


def _spec(name: str) -> ToolSpec:
    return ToolSpec(name, f"{name} does things, café ✓", {"type": "object", "properties": {}})


async def _calls(
    provider: ScriptedProvider, tools: list[ToolSpec], n: int
) -> list[tuple[list[Message], int]]:
    """`n` calls over a history growing as a loop's does (the same message objects, two
    new ones a call); each call's messages and the input tokens its usage says."""
    history: list[Message] = [Message("user", (TextBlock("Où est le port? ✓"), IMAGE))]
    calls = []
    for call in range(n):
        request = ModelRequest("scripted", "system ✓", "today", list(history), list(tools))
        events = [e async for e in provider.stream(request)]
        (usage,) = [e.usage for e in events if isinstance(e, UsageUpdate)]
        calls.append((list(history), usage.input_tokens))
        history += [
            Message("assistant", (TextBlock(f"answer {call} ✓"),)),
            Message("user", (ToolResultBlock(f"t{call}", (TextBlock("résultat"),)),)),
        ]
    return calls


def _whole(request_messages: list[Message], tools: list[ToolSpec]) -> tuple[str, int]:
    """The log line and input tokens as the provider worked them out before it kept each
    message's JSON and the tools' size: everything encoded again."""
    as_dicts = [message_to_dict(m) for m in request_messages]
    record = {
        "model": "scripted",
        "max_tokens": 8192,
        "system_static": "system ✓",
        "system_dynamic": "today",
        "tools": [t.name for t in tools],
        "tool_choice": "auto",
        "messages": as_dicts,
    }
    chars = len("system ✓") + len("today")
    chars += sum(len(t.description) + len(json.dumps(t.input_schema)) for t in tools)
    chars += sum(len(json.dumps(d)) for d in as_dicts) - len(IMAGE.data) + 4 * IMAGE_TOKENS
    return json.dumps(record, ensure_ascii=False) + "\n", chars // 4


async def test_the_log_and_the_usage_are_those_of_the_whole_request(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    tools = [_spec("Read"), _spec("Grep")]
    calls = await _calls(ScriptedProvider([{"text": "ok", "chunk": 1}] * 4, log), tools, 4)
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    for line, (history, told) in zip(lines, calls, strict=True):
        expected_line, expected_tokens = _whole(history, tools)
        assert line == expected_line
        assert told == expected_tokens


async def test_the_tools_are_measured_again_only_when_they_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The tools' size was worked out (each schema dumped) at every call."""
    dumped: list[Any] = []
    real_dumps = json.dumps

    def counting(value: Any, **options: Any) -> str:
        if isinstance(value, dict) and value.get("type") == "object":
            dumped.append(value)
        return real_dumps(value, **options)

    monkeypatch.setattr(scripted.json, "dumps", counting)
    tools = [_spec("Read"), _spec("Grep")]
    provider = ScriptedProvider([{"text": "ok"}] * 4)
    await _calls(provider, tools, 3)
    assert len(dumped) == 2
    await _calls(provider, [*tools, _spec("Bash")], 1)
    assert len(dumped) == 5
