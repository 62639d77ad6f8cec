"""The conversation model: provider-neutral messages, serialised losslessly for transcripts."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias


@dataclass(frozen=True, slots=True)
class TextBlock:
    text: str
    type: Literal["text"] = "text"


@dataclass(frozen=True, slots=True)
class ThinkingBlock:
    thinking: str
    # Providers bind the signature to the model; it goes back unchanged.
    signature: str | None = None
    type: Literal["thinking"] = "thinking"


@dataclass(frozen=True, slots=True)
class ToolUseBlock:
    id: str
    name: str
    input: dict[str, Any]
    type: Literal["tool_use"] = "tool_use"


@dataclass(frozen=True, slots=True)
class ToolResultBlock:
    tool_use_id: str
    content: str
    is_error: bool = False
    type: Literal["tool_result"] = "tool_result"


ContentBlock: TypeAlias = TextBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock
Role = Literal["user", "assistant"]


def new_id(prefix: str) -> str:
    """A short unique id such as `msg_3f2a…`."""
    return f"{prefix}_{uuid.uuid4().hex[:20]}"


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: tuple[ContentBlock, ...]
    id: str = field(default_factory=lambda: new_id("msg"))

    def tool_uses(self) -> list[ToolUseBlock]:
        """The tool_use blocks of this message, in order."""
        return [b for b in self.content if isinstance(b, ToolUseBlock)]

    def tool_results(self) -> list[ToolResultBlock]:
        """The tool_result blocks of this message, in order."""
        return [b for b in self.content if isinstance(b, ToolResultBlock)]

    def text(self) -> str:
        """The message's text blocks joined."""
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))


def user_text(text: str) -> Message:
    """A user message holding one text block."""
    return Message("user", (TextBlock(text),))


def block_to_dict(block: ContentBlock) -> dict[str, Any]:
    """A content block as stored in transcripts (snake_case, Anthropic-shaped)."""
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ThinkingBlock):
        out: dict[str, Any] = {"type": "thinking", "thinking": block.thinking}
        if block.signature is not None:
            out["signature"] = block.signature
        return out
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    return {
        "type": "tool_result",
        "tool_use_id": block.tool_use_id,
        "content": block.content,
        "is_error": block.is_error,
    }


def block_from_dict(data: dict[str, Any]) -> ContentBlock:
    """The inverse of `block_to_dict`; raises ValueError on an unknown block type."""
    kind = data.get("type")
    if kind == "text":
        return TextBlock(str(data["text"]))
    if kind == "thinking":
        return ThinkingBlock(str(data["thinking"]), data.get("signature"))
    if kind == "tool_use":
        return ToolUseBlock(str(data["id"]), str(data["name"]), dict(data["input"]))
    if kind == "tool_result":
        return ToolResultBlock(
            str(data["tool_use_id"]), str(data["content"]), bool(data.get("is_error", False))
        )
    raise ValueError(f"unknown content block type {kind!r}")


def message_to_dict(message: Message) -> dict[str, Any]:
    """A message as stored in transcripts."""
    return {
        "id": message.id,
        "role": message.role,
        "content": [block_to_dict(b) for b in message.content],
    }


def message_from_dict(data: dict[str, Any]) -> Message:
    """The inverse of `message_to_dict`."""
    role = data["role"]
    if role not in ("user", "assistant"):
        raise ValueError(f"unknown role {role!r}")
    blocks = tuple(block_from_dict(b) for b in data["content"])
    return Message(role, blocks, str(data["id"]))
