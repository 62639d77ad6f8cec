"""The tool registry: tools by name, and their specs exactly as the model sees them.

The specs are part of the prompt-cache prefix, so they are computed once and stay
byte-identical for the life of the registry. Their JSON Schemas are cleaned of pydantic's
noise (titles, `anyOf [T, null]` for optional fields) so they read like the schemas models
were trained on.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from agentls.messages import ToolSpec
from agentls.sandbox import Sandbox
from agentls.tools.apply_patch import ApplyPatchTool
from agentls.tools.ask_user import AskUserTool
from agentls.tools.base import Tool
from agentls.tools.bash import BashTool
from agentls.tools.data import QueryDataTool, SummarizeDataTool, ValidateDataTool
from agentls.tools.files import EditTool, MultiEditTool, ReadTool, WriteTool
from agentls.tools.notebook import NotebookEditTool
from agentls.tools.search import GlobTool, GrepTool
from agentls.tools.shells import BashOutputTool, KillShellTool
from agentls.tools.todo import TodoWriteTool
from agentls.tools.web_fetch import WebFetchTool
from agentls.tools.web_search import WebSearchTool
from agentls.tools.write_stdin import WriteStdinTool
from agentls.web_config import WebOptions


def _without_null(schema: dict[str, Any]) -> dict[str, Any]:
    """`anyOf [T, null]` with a None default becomes plain T: optional means 'may be omitted'."""
    branches = schema.get("anyOf")
    if not isinstance(branches, list) or schema.get("default", ...) is not None:
        return schema
    non_null = [branch for branch in branches if branch != {"type": "null"}]
    if len(non_null) != 1 or len(non_null) == len(branches):
        return schema
    merged: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "anyOf":
            merged.update(non_null[0])
        elif key != "default":
            merged[key] = value
    return merged


def clean_schema(schema: Any) -> Any:
    """A JSON Schema without pydantic's `title` keys and null-unions for optional fields."""
    if isinstance(schema, list):
        return [clean_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    cleaned: dict[str, Any] = {}
    for key, value in _without_null(schema).items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "properties" and isinstance(value, dict):
            # Here the keys are field names (a field may be called "title"); only values clean.
            cleaned[key] = {name: clean_schema(sub) for name, sub in value.items()}
        else:
            cleaned[key] = clean_schema(value)
    return cleaned


def tool_spec(tool: Tool[Any]) -> ToolSpec:
    """The spec a provider sends for `tool`."""
    schema = tool.spec_schema()
    return ToolSpec(tool.name, tool.description, schema or input_schema(tool.input_model))


@functools.cache
def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A model's cleaned JSON Schema, made once per daemon (pydantic takes ~1.5 ms a tool,
    and every session lists them all). Shared, so never mutated."""
    schema: dict[str, Any] = clean_schema(model.model_json_schema(by_alias=True))
    return schema


class ToolRegistry:
    """The tools of a session, by name, in the order the model is shown them."""

    def __init__(self, tools: Iterable[Tool[Any]], shown: Sequence[ToolSpec] | None = None) -> None:
        self._tools: dict[str, Tool[Any]] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"duplicate tool name {tool.name!r}")
            self._tools[tool.name] = tool
        # `shown`: the specs to send instead of these tools' own (a sub-agent shows its
        # parent's, so their requests share a cached prefix; it can call only its own).
        specs = shown if shown is not None else (tool_spec(t) for t in self._tools.values())
        self._specs = tuple(specs)

    def get(self, name: str) -> Tool[Any] | None:
        """The tool called `name`, or None when there is none."""
        return self._tools.get(name)

    def names(self) -> list[str]:
        """Tool names in registration order."""
        return list(self._tools)

    def specs(self) -> list[ToolSpec]:
        """The same spec objects on every call, so the request bytes never drift."""
        return list(self._specs)


def default_tools(
    todo: bool = True,
    *,
    sandbox: Sandbox | None = None,
    web: WebOptions | None = None,
    apply_patch: bool = False,
) -> list[Tool[Any]]:
    """The built-in tools, in the order models know them (TodoWrite unless turned off; Bash
    in the sandbox when there is one; WebSearch only with a search backend; apply_patch
    when asked for)."""
    # Codex offers its models apply_patch alone. Here Write, Edit and MultiEdit stay beside
    # it: the openai provider also serves OpenAI-compatible local models that were never
    # trained on the patch format, and Edit's one-file change is what editors let the user
    # review hunk by hunk (acceptedText).
    patch: list[Tool[Any]] = [ApplyPatchTool()] if apply_patch else []
    tools: list[Tool[Any]] = [
        ReadTool(),
        WriteTool(),
        EditTool(),
        MultiEditTool(),
        *patch,
        NotebookEditTool(),
        GlobTool(),
        GrepTool(),
        BashTool(sandbox),
        BashOutputTool(),
        WriteStdinTool(),
        KillShellTool(),
        *web_tools(web or WebOptions()),
        QueryDataTool(),
        SummarizeDataTool(),
        ValidateDataTool(),
        AskUserTool(),
    ]
    return [*tools, TodoWriteTool()] if todo else tools


def web_tools(web: WebOptions) -> list[Tool[Any]]:
    """WebFetch, and WebSearch when a backend is configured (a model never sees it otherwise)."""
    fetch = WebFetchTool(allow_private=web.allow_private)
    if web.search is None:
        return [fetch]
    return [fetch, WebSearchTool(web.search, web.search_key)]


def _error_line(error: Any) -> str:
    location = ".".join(str(part) for part in error["loc"]) or "(input)"
    return f"{location}: {error['msg']}"


def validate_input(tool: Tool[Any], raw: object) -> BaseModel | str:
    """The tool's typed input, or a short message naming the bad fields for the model."""
    try:
        return tool.input_model.model_validate(raw)
    except ValidationError as exc:
        details = "; ".join(_error_line(error) for error in exc.errors())
        return f"Invalid input for {tool.name}: {details}"
