"""The scripted provider's request log: what a client author's test sees of each request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentls.config import Settings
from agentls.images import IMAGE_TOKENS
from agentls.messages import ImageBlock, Message, TextBlock, ToolResultBlock
from agentls.providers.base import ModelRequest, UsageUpdate
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
