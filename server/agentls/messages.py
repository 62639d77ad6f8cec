"""The conversation model: provider-neutral messages, serialised losslessly for transcripts.

Images travel as base64 `ImageBlock`s, in user messages and inside tool results; a tool
result's content is either a plain string (what every transcript before images holds) or
a tuple of text and image parts.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, cast


@dataclass(frozen=True, slots=True)
class TextBlock:
    text: str
    type: Literal["text"] = "text"


@dataclass(frozen=True, slots=True)
class ThinkingBlock:
    thinking: str
    # Providers bind the signature to the model; it goes back unchanged.
    signature: str | None = None
    # OpenAI Responses' reasoning, encrypted by the server: sent back as a reasoning item
    # so the model keeps its chain across tool calls (the API keeps nothing itself).
    encrypted_content: str | None = None
    type: Literal["thinking"] = "thinking"


@dataclass(frozen=True, slots=True)
class ToolUseBlock:
    id: str
    name: str
    input: dict[str, Any]
    type: Literal["tool_use"] = "tool_use"


@dataclass(frozen=True, slots=True)
class ImageBlock:
    """An image as base64 bytes; name and size are for people and summaries, not the model."""

    media_type: str
    data: str
    name: str | None = None
    width: int | None = None
    height: int | None = None
    type: Literal["image"] = "image"


ResultPart: TypeAlias = TextBlock | ImageBlock


@dataclass(frozen=True, slots=True)
class ToolResultBlock:
    tool_use_id: str
    content: str | tuple[ResultPart, ...]
    is_error: bool = False
    type: Literal["tool_result"] = "tool_result"

    def text(self) -> str:
        """The result's text: the string itself, or its text parts joined."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(p.text for p in self.content if isinstance(p, TextBlock))

    def images(self) -> tuple[ImageBlock, ...]:
        """The result's image parts, in order."""
        if isinstance(self.content, str):
            return ()
        return tuple(p for p in self.content if isinstance(p, ImageBlock))


ContentBlock: TypeAlias = TextBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock | ImageBlock
Role = Literal["user", "assistant"]


def new_id(prefix: str) -> str:
    """A short unique id such as `msg_3f2a…`."""
    return f"{prefix}_{uuid.uuid4().hex[:20]}"


# What follows an id's prefix: ASCII letters and digits, short enough for a file name.
_ID_TAIL = re.compile(r"[A-Za-z0-9]{1,64}")


def is_id(value: object, prefix: str) -> bool:
    """Whether `value` has the shape of a `prefix` id (`sess_…`, `agent_…`).

    Session and agent ids name files: anything else could leave their folder (`..`,
    `/`), fail as a file name (too long, a NUL, a lone surrogate) or alias another
    (Unicode letters), so an id is checked against this before it becomes a path."""
    return (
        isinstance(value, str)
        and value.startswith(f"{prefix}_")
        and _ID_TAIL.fullmatch(value, len(prefix) + 1) is not None
    )


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

    def images(self) -> list[ImageBlock]:
        """Every image of this message, its tool results' included, in order."""
        found: list[ImageBlock] = []
        for block in self.content:
            if isinstance(block, ImageBlock):
                found.append(block)
            elif isinstance(block, ToolResultBlock):
                found.extend(block.images())
        return found


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
        if block.encrypted_content is not None:
            out["encrypted_content"] = block.encrypted_content
        return out
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if isinstance(block, ImageBlock):
        return _image_to_dict(block)
    content = block.content
    return {
        "type": "tool_result",
        "tool_use_id": block.tool_use_id,
        "content": content if isinstance(content, str) else [block_to_dict(p) for p in content],
        "is_error": block.is_error,
    }


def _image_to_dict(block: ImageBlock) -> dict[str, Any]:
    source = {"type": "base64", "media_type": block.media_type, "data": block.data}
    out: dict[str, Any] = {"type": "image", "source": source}
    for key in ("name", "width", "height"):
        value = getattr(block, key)
        if value is not None:
            out[key] = value
    return out


def block_from_dict(data: dict[str, Any]) -> ContentBlock:
    """The inverse of `block_to_dict`; raises ValueError on an unknown block type."""
    kind = data.get("type")
    if kind == "text":
        return TextBlock(str(data["text"]))
    if kind == "thinking":
        encrypted = data.get("encrypted_content")
        return ThinkingBlock(
            str(data["thinking"]),
            data.get("signature"),
            str(encrypted) if encrypted is not None else None,
        )
    if kind == "tool_use":
        return ToolUseBlock(str(data["id"]), str(data["name"]), dict(data["input"]))
    if kind == "image":
        return _image_from_dict(data)
    if kind == "tool_result":
        return ToolResultBlock(
            str(data["tool_use_id"]),
            _result_content_from(data["content"]),
            bool(data.get("is_error", False)),
        )
    raise ValueError(f"unknown content block type {kind!r}")


def _image_from_dict(data: dict[str, Any]) -> ImageBlock:
    source = data["source"]
    width, height = data.get("width"), data.get("height")
    return ImageBlock(
        str(source["media_type"]),
        str(source["data"]),
        data.get("name"),
        int(width) if width is not None else None,
        int(height) if height is not None else None,
    )


def _result_content_from(content: Any) -> str | tuple[ResultPart, ...]:
    if not isinstance(content, list):
        return str(content)
    parts = tuple(block_from_dict(p) for p in content)
    if not all(isinstance(p, (TextBlock, ImageBlock)) for p in parts):
        raise ValueError("a tool_result holds only text and image parts")
    return cast(tuple[ResultPart, ...], parts)


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


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as the model sees it."""

    name: str
    description: str
    input_schema: dict[str, Any]
