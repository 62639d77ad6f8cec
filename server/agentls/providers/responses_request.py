"""What OpenAI's Responses API is sent: `instructions`, input items and function tools.

Our history becomes a list of input items: user messages, assistant messages, one
`function_call` item per tool_use block and one `function_call_output` item per result,
paired by `call_id`. Nothing is stored server-side (`store: false`), so a reasoning model's
chain survives across tool calls only through the encrypted reasoning items it gave us,
which go back in order, before the text and calls they led to. Items are sent without
their server ids: with `store: false` the server keeps none, and an id it cannot find is
refused ("Item with id 'rs_…' not found").
"""

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
    ThinkingBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)
from agentls.model_table import by_model
from agentls.names import ReasoningEffort
from agentls.providers.base import ModelRequest
from agentls.providers.openai_request import is_reasoning_model

# Models served only by the Responses API (by name prefix): `openaiApi: "auto"` picks it
# for them whatever the base URL.
RESPONSES_ONLY_MODELS = (
    "codex-mini",
    "gpt-5-codex",
    "gpt-5.1-codex",
    "gpt-5.2-codex",
    "gpt-5-pro",
    "o1-pro",
    "o3-pro",
    "o3-deep-research",
    "o4-mini-deep-research",
    "computer-use-preview",
)
# Asked of reasoning models so their reasoning comes back (encrypted) and can be sent again.
ENCRYPTED_REASONING = "reasoning.encrypted_content"


def is_responses_only(model: str) -> bool:
    """Whether `model` exists only on the Responses API (`gpt-5-codex` and the like)."""
    return by_model(model, ((RESPONSES_ONLY_MODELS, True),), False)


def uses_reasoning(model: str) -> bool:
    """Reasoning models: the o-series, gpt-5 and the Responses-only codex models."""
    return is_reasoning_model(model) or is_responses_only(model)


@dataclass(frozen=True, slots=True)
class ResponsesOptions:
    """The request fields settings choose."""

    reasoning_effort: ReasoningEffort | None = None


def build_params(
    request: ModelRequest, vision: bool = True, options: ResponsesOptions = ResponsesOptions()
) -> dict[str, Any]:
    """The keyword arguments of `responses.stream` for `request`."""
    if not vision:
        request = replace(request, messages=without_images(request.messages, request.model))
    params: dict[str, Any] = {
        "model": request.model,
        "input": input_items(request.messages),
        "max_output_tokens": request.max_tokens,
        "store": False,
    }
    instructions = "\n\n".join(p for p in (request.system_static, request.system_dynamic) if p)
    if instructions:
        params["instructions"] = instructions
    if uses_reasoning(request.model):
        reasoning: dict[str, Any] = {"summary": "auto"}
        if options.reasoning_effort:
            reasoning["effort"] = options.reasoning_effort
        params["reasoning"] = reasoning
        params["include"] = [ENCRYPTED_REASONING]
    if request.tools:
        params["tools"] = tool_params(request.tools)
        if request.tool_choice == "none":
            params["tool_choice"] = "none"
    return params


def tool_params(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Our tools as function tools. `strict` is off: strict schemas must list every
    property as required and forbid others, which ours do not."""
    return [
        {
            "type": "function",
            "name": t.name,
            "description": t.description,
            "parameters": t.input_schema,
            "strict": False,
        }
        for t in tools
    ]


def input_items(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The history as input items, in order."""
    items: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "assistant":
            items += _assistant_items(message)
        else:
            items += _user_items(message)
    return items


def _assistant_items(message: Message) -> list[dict[str, Any]]:
    """Reasoning, text and calls in the order the model gave them; consecutive text
    blocks make one assistant message."""
    items: list[dict[str, Any]] = []
    texts: list[str] = []

    def flush_text() -> None:
        if texts:
            part = {"type": "output_text", "text": "\n\n".join(texts)}
            items.append({"type": "message", "role": "assistant", "content": [part]})
            texts.clear()

    for block in message.content:
        if isinstance(block, TextBlock) and block.text:
            texts.append(block.text)
            continue
        if isinstance(block, ThinkingBlock) and block.encrypted_content:
            flush_text()
            items.append(reasoning_item(block))
        elif isinstance(block, ToolUseBlock):
            flush_text()
            items.append(_function_call(block))
    flush_text()
    return items


def reasoning_item(block: ThinkingBlock) -> dict[str, Any]:
    """A reasoning item given back: its encrypted content, and its summary as we kept it.
    A thinking block without encrypted content (Anthropic's, a chat server's) is not sent:
    this API could not read it."""
    summary = [{"type": "summary_text", "text": block.thinking}] if block.thinking else []
    return {"type": "reasoning", "summary": summary, "encrypted_content": block.encrypted_content}


def _function_call(block: ToolUseBlock) -> dict[str, Any]:
    return {
        "type": "function_call",
        "call_id": block.id,
        "name": block.name,
        "arguments": json.dumps(block.input, ensure_ascii=False),
    }


def _user_items(message: Message) -> list[dict[str, Any]]:
    """Tool outputs first (they answer the calls just before), then the user's words."""
    items = [_function_call_output(b) for b in message.tool_results()]
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock) and block.text:
            parts.append({"type": "input_text", "text": block.text})
        elif isinstance(block, ImageBlock):
            parts.append(_image_part(block))
    if parts:
        items.append({"type": "message", "role": "user", "content": parts})
    return items


def _function_call_output(block: ToolResultBlock) -> dict[str, Any]:
    """A result as text, or as text and image parts (the API takes images in outputs)."""
    output: str | list[dict[str, Any]] = block.text()
    if block.images():
        output = [{"type": "input_text", "text": block.text()}] if block.text() else []
        output += [_image_part(i) for i in block.images()]
    return {"type": "function_call_output", "call_id": block.tool_use_id, "output": output}


def _image_part(block: ImageBlock) -> dict[str, Any]:
    url = f"data:{block.media_type};base64,{block.data}"
    return {"type": "input_image", "image_url": url, "detail": "auto"}
