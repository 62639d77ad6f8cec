"""Folding a normalised stream into the assistant message, and when calls are released."""

from __future__ import annotations

import json

from agentls.loop.assemble import AssistantAssembler, ToolCallReady
from agentls.messages import TextBlock, ThinkingBlock, ToolUseBlock
from agentls.providers.base import (
    BlockStop,
    MessageStop,
    SignatureDelta,
    TextDelta,
    ThinkingDelta,
    ToolInputDelta,
    ToolUseStart,
    UsageUpdate,
)
from agentls.usage import Usage


def ready(items: list) -> list[str]:
    return [i.block.id for i in items if isinstance(i, ToolCallReady)]


def test_text_thinking_and_signature_fold_into_blocks() -> None:
    asm = AssistantAssembler()
    asm.feed(ThinkingDelta(0, "think "))
    asm.feed(ThinkingDelta(0, "hard"))
    asm.feed(SignatureDelta(0, "sig-1"))
    asm.feed(SignatureDelta(0, "sig-2"))
    asm.feed(BlockStop(0))
    events = asm.feed(TextDelta(1, "Hello"))
    asm.feed(UsageUpdate(Usage(10, 2)))
    asm.feed(MessageStop("end_turn"))
    assert events[0].type == "text_delta" and events[0].message_id == asm.message_id
    assert asm.message().content == (ThinkingBlock("think hard", "sig-2"), TextBlock("Hello"))
    assert asm.usage == Usage(10, 2)


def test_a_call_is_released_when_the_next_block_starts() -> None:
    asm = AssistantAssembler()
    asm.feed(ToolUseStart(0, "a", "Read"))
    asm.feed(ToolInputDelta(0, '{"file_'))
    asm.feed(ToolInputDelta(0, 'path": "x"}'))
    assert ready(asm.feed(BlockStop(0))) == []
    released = asm.feed(ToolUseStart(1, "b", "Read"))
    assert ready(released) == ["a"]
    assert released[0].block == ToolUseBlock("a", "Read", {"file_path": "x"})
    asm.feed(ToolInputDelta(1, "{}"))
    asm.feed(BlockStop(1))
    assert ready(asm.feed(MessageStop("tool_use"))) == ["b"]


def test_the_last_call_of_a_max_tokens_response_is_never_released() -> None:
    asm = AssistantAssembler()
    asm.feed(ToolUseStart(0, "a", "Read"))
    asm.feed(ToolInputDelta(0, "{}"))
    asm.feed(BlockStop(0))
    asm.feed(ToolUseStart(1, "cut", "Write"))
    asm.feed(ToolInputDelta(1, '{"file_path": "x", "content": "hal'))
    asm.feed(BlockStop(1))
    assert ready(asm.feed(MessageStop("max_tokens"))) == []
    assert [b.id for b in asm.message().tool_uses()] == ["a"]


def test_broken_json_is_reported_not_raised() -> None:
    asm = AssistantAssembler()
    asm.feed(ToolUseStart(0, "a", "Read"))
    asm.feed(ToolInputDelta(0, "[1, 2]"))
    asm.feed(BlockStop(0))
    (item,) = asm.feed(MessageStop("tool_use"))
    assert isinstance(item, ToolCallReady)
    assert item.input_error is not None and "JSON object" in item.input_error
    assert item.block.input == {}


def test_a_reused_tool_call_id_gets_a_fresh_one() -> None:
    asm = AssistantAssembler()
    out: list = []
    for index in (0, 1):
        out += asm.feed(ToolUseStart(index, "dup_1", "Read"))
        asm.feed(ToolInputDelta(index, json.dumps({"file_path": str(index)})))
        asm.feed(BlockStop(index))
    out += asm.feed(MessageStop("tool_use"))
    ids = ready(out)
    assert ids[0] == "dup_1" and ids[1] != "dup_1" and ids[1].startswith("toolu_")
    calls = [b for b in asm.message().content if isinstance(b, ToolUseBlock)]
    assert [(c.id, c.input) for c in calls] == [
        ("dup_1", {"file_path": "0"}),
        (ids[1], {"file_path": "1"}),
    ]
