"""The registry: tool order, byte-stable specs, clean schemas and input validation messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from agentls.tools.base import Tool, ToolContext, ToolOutput
from agentls.tools.bash import BashInput, BashTool
from agentls.tools.files import EditTool
from agentls.tools.registry import ToolRegistry, clean_schema, default_tools, validate_input
from agentls.tools.search import GrepInput, GrepTool


def dump(registry: ToolRegistry) -> str:
    return json.dumps([(s.name, s.description, s.input_schema) for s in registry.specs()])


def keys(schema: Any) -> set[str]:
    """Every key of every schema object; property names themselves are not keys."""
    if isinstance(schema, list):
        return set().union(*map(keys, schema))
    if not isinstance(schema, dict):
        return set()
    found = set(schema)
    for name, value in schema.items():
        children = value.values() if name == "properties" else [value]
        found |= set().union(*map(keys, children))
    return found


def test_default_tools_come_in_the_order_models_know() -> None:
    registry = ToolRegistry(default_tools())
    assert registry.names() == [
        "Read",
        "Write",
        "Edit",
        "MultiEdit",
        "NotebookEdit",
        "Glob",
        "Grep",
        "Bash",
        "BashOutput",
        "WriteStdin",
        "KillShell",
        "WebFetch",
        "QueryData",
        "SummarizeData",
        "ValidateData",
        "AskUser",
        "TodoWrite",
    ]
    assert isinstance(registry.get("Grep"), GrepTool)
    assert registry.get("Nope") is None


def test_specs_are_byte_identical_on_every_call_and_in_every_registry() -> None:
    registry = ToolRegistry(default_tools())
    first = registry.specs()
    assert [id(spec) for spec in registry.specs()] == [id(spec) for spec in first]
    assert dump(registry) == dump(ToolRegistry(default_tools()))


def test_schemas_use_the_dash_names_and_carry_no_pydantic_noise() -> None:
    specs = {spec.name: spec for spec in ToolRegistry(default_tools()).specs()}
    grep = specs["Grep"].input_schema
    assert {"-i", "-n", "-A", "-B", "-C", "head_limit"} <= set(grep["properties"])
    assert grep["required"] == ["pattern"]
    assert grep["properties"]["path"]["type"] == "string"
    for spec in specs.values():
        assert not {"title", "anyOf"} & keys(spec.input_schema), spec.name
        assert spec.description


def test_cleaning_keeps_a_field_that_is_called_title() -> None:
    class Note(BaseModel):
        title: str
        body: str | None = None

    schema = clean_schema(Note.model_json_schema())
    assert schema["properties"] == {"title": {"type": "string"}, "body": {"type": "string"}}
    assert "title" not in {key for key in schema if key != "properties"}


def test_duplicate_tool_names_are_refused() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        ToolRegistry([EditTool(), EditTool()])


def test_validate_input_names_the_missing_field() -> None:
    message = validate_input(EditTool(), {"file_path": "a.py", "new_string": "x"})
    assert message == "Invalid input for Edit: old_string: Field required"


def test_validate_input_names_bad_dash_fields_by_their_alias() -> None:
    message = validate_input(GrepTool(), {"pattern": "x", "-C": -1})
    assert isinstance(message, str)
    assert message.startswith("Invalid input for Grep: -C: ")


def test_validate_input_returns_the_model_and_ignores_extra_fields() -> None:
    args = validate_input(GrepTool(), {"pattern": "x", "-i": True, "multiline": True})
    assert isinstance(args, GrepInput) and args.case_insensitive


def test_validate_input_refuses_a_non_object() -> None:
    message = validate_input(BashTool(), "ls")
    assert isinstance(message, str) and message.startswith("Invalid input for Bash: (input): ")
    assert isinstance(validate_input(BashTool(), {"command": "ls"}), BashInput)


def test_a_tool_that_says_nothing_fails_closed(tmp_path: Path) -> None:
    # A new tool is not read-only (write lane, permission asked), names no file and gives
    # rules nothing to match until it says otherwise.
    class Quiet(BaseModel):
        text: str

    class QuietTool(Tool[Quiet]):
        name = "Quiet"
        description = "says nothing"
        input_model = Quiet

        async def run(self, args: Quiet, ctx: ToolContext) -> ToolOutput:
            return ToolOutput(args.text)

    tool, args = QuietTool(), Quiet(text="x")
    assert tool.is_read_only(args) is False
    assert tool.locations(args, tmp_path) == []
    assert tool.rule_content(args, tmp_path) is None
    assert tool.title(args) == "Quiet"
    assert tool.kind == "other"
