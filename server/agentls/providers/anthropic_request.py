"""What the Messages API is sent: the system prompt in two blocks, the tools, the messages,
with prompt-cache breakpoints where the stable prefix ends."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentls.images import without_images
from agentls.messages import (
    ContentBlock,
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)
from agentls.providers.base import ModelRequest

_EPHEMERAL = {"type": "ephemeral"}


def build_params(request: ModelRequest, vision: bool = True) -> dict[str, Any]:
    """The keyword arguments of `messages.create` for `request` (without `stream`).

    Without `vision`, every image goes as a note saying the model cannot see it.
    """
    messages = request.messages if vision else without_images(request.messages, request.model)
    params: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": message_params(messages),
    }
    system = system_params(request.system_static, request.system_dynamic)
    if system:
        params["system"] = system
    if request.tools:
        params["tools"] = tool_params(request.tools)
        if request.tool_choice == "none":
            params["tool_choice"] = {"type": "none"}
    if request.thinking_budget:
        params["thinking"] = {"type": "enabled", "budget_tokens": request.thinking_budget}
    return params


def system_params(static: str, dynamic: str) -> list[dict[str, Any]]:
    """The static part is a cache breakpoint; the dynamic part follows it, uncached."""
    blocks: list[dict[str, Any]] = []
    if static:
        blocks.append({"type": "text", "text": static, "cache_control": dict(_EPHEMERAL)})
    if dynamic:
        blocks.append({"type": "text", "text": dynamic})
    return blocks


def tool_params(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Tool definitions, with a cache breakpoint after the last one."""
    params = [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema}
        for t in tools
    ]
    if params:
        params[-1]["cache_control"] = dict(_EPHEMERAL)
    return params


def message_params(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The history as API messages, with a cache breakpoint on the newest content block.

    Messages left with no content (say, only an empty text block) are dropped, because
    the API rejects empty content.
    """
    params: list[dict[str, Any]] = []
    for message in messages:
        blocks = [b for b in (block_param(b) for b in message.content) if b is not None]
        if blocks:
            params.append({"role": message.role, "content": blocks})
    if params:
        mark_cache_breakpoint(params[-1]["content"])
    return params


def mark_cache_breakpoint(blocks: list[dict[str, Any]]) -> None:
    # The API refuses cache_control on thinking blocks, so the breakpoint goes on the
    # last block that can carry one.
    for block in reversed(blocks):
        if block["type"] != "thinking":
            block["cache_control"] = dict(_EPHEMERAL)
            return


def block_param(block: ContentBlock) -> dict[str, Any] | None:
    """One content block on the wire, or None when the API would reject it."""
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text} if block.text else None
    if isinstance(block, ThinkingBlock):
        # An unsigned block came from another provider; Anthropic rejects it.
        if not block.signature:
            return None
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if isinstance(block, ImageBlock):
        return image_param(block)
    return _tool_result_param(block)


def image_param(block: ImageBlock) -> dict[str, Any]:
    """An image as a base64 source (the API takes no name or size)."""
    source = {"type": "base64", "media_type": block.media_type, "data": block.data}
    return {"type": "image", "source": source}


def _tool_result_param(block: ToolResultBlock) -> dict[str, Any]:
    param: dict[str, Any] = {"type": "tool_result", "tool_use_id": block.tool_use_id}
    if isinstance(block.content, str):
        if block.content:
            param["content"] = block.content
    else:
        param["content"] = [
            image_param(p) if isinstance(p, ImageBlock) else {"type": "text", "text": p.text}
            for p in block.content
            if isinstance(p, ImageBlock) or p.text
        ]
    if block.is_error:
        param["is_error"] = True
    return param
