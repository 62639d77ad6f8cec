"""What an OpenAI-compatible server is sent: the request's fields, messages and tools.

Only standard fields are sent, because the strict servers reject unknown ones; content
is a string wherever a server may not take parts (llama.cpp)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from agentls.images import without_images
from agentls.messages import (
    ImageBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)
from agentls.model_table import by_model
from agentls.names import MaxTokensField, ReasoningEffort
from agentls.providers.base import (
    ModelRequest,
)

# Local servers ignore the key, but the SDK refuses to start without one.
PLACEHOLDER_API_KEY = "not-needed"

# --- request ------------------------------------------------------------------------

# OpenAI's reasoning models refuse `max_tokens` and `temperature`.
_REASONING_MODELS = ("o1", "o3", "o4", "gpt-5")


@dataclass(frozen=True, slots=True)
class RequestOptions:
    """The request fields that differ between servers, from settings.

    `max_tokens_field` None picks by model: `max_completion_tokens` for OpenAI's reasoning
    models, else `max_tokens` (vLLM, Ollama and llama.cpp accept only that one, and
    api.openai.com still honours it for other models).
    """

    stream_usage: bool = True
    max_tokens_field: MaxTokensField | None = None
    reasoning_effort: ReasoningEffort | None = None


def is_reasoning_model(model: str) -> bool:
    """OpenAI's o-series and gpt-5 family, by name."""
    return by_model(model, ((_REASONING_MODELS, True),), False)


def build_params(
    request: ModelRequest, vision: bool = True, options: RequestOptions = RequestOptions()
) -> dict[str, Any]:
    """The keyword arguments of `chat.completions.create` for `request` (without `stream`).

    Without `vision`, every image goes as a note saying the model cannot see it.
    """
    if not vision:
        request = replace(request, messages=without_images(request.messages, request.model))
    reasoning = is_reasoning_model(request.model)
    field_name = options.max_tokens_field or (
        "max_completion_tokens" if reasoning else "max_tokens"
    )
    params: dict[str, Any] = {
        "model": request.model,
        "messages": message_params(request),
        field_name: request.max_tokens,
    }
    if options.stream_usage:
        params["stream_options"] = {"include_usage": True}
    if options.reasoning_effort and reasoning:
        params["reasoning_effort"] = options.reasoning_effort
    if request.tools:
        params["tools"] = tool_params(request.tools)
        if request.tool_choice == "none":
            params["tool_choice"] = "none"
    return params


def tool_params(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Tool definitions as function tools."""
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.input_schema,
            },
        }
        for t in tools
    ]


def message_params(request: ModelRequest) -> list[dict[str, Any]]:
    """One system message, then the history; thinking blocks are not sent."""
    params: list[dict[str, Any]] = []
    system = "\n\n".join(p for p in (request.system_static, request.system_dynamic) if p)
    if system:
        params.append({"role": "system", "content": system})
    for message in request.messages:
        if message.role == "assistant":
            params += assistant_params(message)
        else:
            params += user_params(message)
    return params


def _joined_text(message: Message) -> str:
    return "\n\n".join(b.text for b in message.content if isinstance(b, TextBlock) and b.text)


def assistant_params(message: Message) -> list[dict[str, Any]]:
    """An assistant message: its text and its tool calls, or nothing when it has neither."""
    text = _joined_text(message)
    calls = [_tool_call_param(b) for b in message.content if isinstance(b, ToolUseBlock)]
    if not text and not calls:
        return []
    # `content` always a string: OpenAI accepts null beside tool_calls, but llama.cpp's
    # server (and others on the same pydantic schema) refuse null and require the key.
    param: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        param["tool_calls"] = calls
    return [param]


def _tool_call_param(block: ToolUseBlock) -> dict[str, Any]:
    arguments = json.dumps(block.input, ensure_ascii=False)
    return {
        "id": block.id,
        "type": "function",
        "function": {"name": block.name, "arguments": arguments},
    }


def user_params(message: Message) -> list[dict[str, Any]]:
    """Tool results first (they must directly follow the assistant's calls), then the rest.

    A tool message holds text only, so the images of tool results follow in one user
    message, with the message's own text and images (content parts only when there are
    images, so a text-only history stays what it always was).
    """
    results = message.tool_results()
    params: list[dict[str, Any]] = [_tool_param(b) for b in results]
    if not message.images():
        text = _joined_text(message)
        if text:
            params.append({"role": "user", "content": text})
        return params
    parts = [part for b in results for part in _result_image_parts(b)]
    parts += _content_parts(message)
    params.append({"role": "user", "content": parts})
    return params


def _tool_param(block: ToolResultBlock) -> dict[str, Any]:
    content = block.text()
    if block.images():
        content += "\n(The image is in the next user message.)"
    return {"role": "tool", "tool_call_id": block.tool_use_id, "content": content}


def _result_image_parts(block: ToolResultBlock) -> list[dict[str, Any]]:
    images = block.images()
    if not images:
        return []
    label = {"type": "text", "text": f"Image returned by tool call {block.tool_use_id}:"}
    return [label, *(image_url_part(i) for i in images)]


def _content_parts(message: Message) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock) and block.text:
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            parts.append(image_url_part(block))
    return parts


def image_url_part(block: ImageBlock) -> dict[str, Any]:
    """An image as a data URL content part."""
    url = f"data:{block.media_type};base64,{block.data}"
    return {"type": "image_url", "image_url": {"url": url}}
