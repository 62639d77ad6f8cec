"""MCP tools as agentls tools: `mcp__<server>__<tool>` with the server's own schema, and two
tools over the servers' resources.

Each MCP tool gets its own input model, which checks the arguments against the server's
JSON Schema, so a bad call fails before anyone is asked about it. A tool the server marks
read-only shares the read lane, but it still asks: the mark is the server's word, and
permission rules (`mcp__server`, `mcp__server__*`, `mcp__server__tool`) are the user's.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentls.mcp_servers.connection import McpConnection, McpUnavailable
from agentls.mcp_servers.state import McpToolInfo, tool_name
from agentls.messages import ImageBlock
from agentls.tool_values import ToolKind
from agentls.tools.base import ReadOnlyTool, Tool, ToolContext, ToolError, ToolOutput, short_title
from agentls.tools.registry import clean_schema

# What one result may put into the context; more is cut (the model is told).
RESULT_CHARS = 100_000
_ERROR_LINES = 5


class _Arguments(BaseModel):
    """Any JSON object; an MCP tool's own subclass checks it against the server's schema."""

    model_config = ConfigDict(extra="allow")


def _arguments_model(info: McpToolInfo) -> type[BaseModel]:
    try:
        Draft202012Validator.check_schema(info.input_schema)
        validator: Draft202012Validator | None = Draft202012Validator(info.input_schema)
    except SchemaError:
        validator = None  # the server validates what we cannot

    class Arguments(_Arguments):
        @model_validator(mode="before")
        @classmethod
        def _follows_schema(cls, data: Any) -> Any:
            if validator is None:
                return data
            errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
            if errors:
                lines = [_schema_error(e) for e in errors[:_ERROR_LINES]]
                raise ValueError("; ".join(lines))
            return data

    return Arguments


def _schema_error(error: Any) -> str:
    where = "/".join(str(p) for p in error.absolute_path)
    return f"{where}: {error.message}" if where else error.message


class McpTool(Tool[BaseModel]):
    """One tool of an MCP server."""

    kind: ToolKind = "other"
    # A read-only mark lets it share the read lane, never skip asking.
    read_only_skips_asking = False

    def __init__(self, connection: McpConnection, info: McpToolInfo, timeout: float) -> None:
        self.connection = connection
        self.info = info
        self.name = tool_name(connection.config.name, info.name)
        self.description = info.description or f"{info.name} (MCP server {connection.config.name})"
        self.input_model = _arguments_model(info)
        self._timeout = timeout

    def spec_schema(self) -> dict[str, Any] | None:
        schema: dict[str, Any] = clean_schema(self.info.input_schema)
        return schema

    def is_read_only(self, args: BaseModel) -> bool:
        return self.info.read_only

    def title(self, args: BaseModel) -> str:
        label = f"{self.connection.config.name}: {self.info.title or self.info.name}"
        values = args.model_extra or {}
        return short_title(label, json.dumps(values, ensure_ascii=False)) if values else label

    async def run(self, args: BaseModel, ctx: ToolContext) -> ToolOutput:
        async def report(progress: float, total: float | None, message: str | None) -> None:
            amount = f"{progress:g}/{total:g}" if total else f"{progress:g}"
            ctx.progress(f"{amount} {message}" if message else amount)

        try:
            result = await self.connection.call_tool(
                self.info.name, dict(args.model_extra or {}), self._timeout, report
            )
        except McpUnavailable as exc:
            raise ToolError(str(exc)) from exc
        except RuntimeError as exc:
            raise ToolError(str(exc)) from exc
        return tool_output(result.content, result.structured_content, bool(result.is_error))


class ListResourcesInput(BaseModel):
    server: str | None = Field(None, description="Only this server's resources")


class ListMcpResourcesTool(ReadOnlyTool[ListResourcesInput]):
    """Lists the resources the session's MCP servers offer."""

    name = "ListMcpResources"
    description = (
        "Lists the resources (documents, records, files) that the connected MCP servers "
        "offer, with their URIs; read one with ReadMcpResource."
    )
    input_model: type[BaseModel] = ListResourcesInput
    kind: ToolKind = "search"

    def __init__(self, connections: dict[str, McpConnection]) -> None:
        self._connections = connections

    async def run(self, args: ListResourcesInput, ctx: ToolContext) -> ToolOutput:
        if args.server is not None and args.server not in self._connections:
            raise ToolError(_unknown_server(args.server, self._connections))
        lines = []
        for name, connection in self._connections.items():
            if args.server not in (None, name):
                continue
            for r in connection.state.resources:
                about = f" ({r.mime_type})" if r.mime_type else ""
                detail = f": {r.description}" if r.description else ""
                lines.append(f"{name} {r.uri} {r.name}{about}{detail}")
        return ToolOutput("\n".join(lines) or "No MCP server offers resources.")


class ReadResourceInput(BaseModel):
    server: str = Field(description="The MCP server's name")
    uri: str = Field(description="The resource's URI, as ListMcpResources gives it")


class ReadMcpResourceTool(ReadOnlyTool[ReadResourceInput]):
    """Reads one resource of an MCP server."""

    name = "ReadMcpResource"
    description = "Reads one resource of a connected MCP server by its URI."
    input_model: type[BaseModel] = ReadResourceInput
    kind: ToolKind = "read"

    def __init__(self, connections: dict[str, McpConnection]) -> None:
        self._connections = connections

    def title(self, args: ReadResourceInput) -> str:
        return f"Read {args.server}: {args.uri}"

    async def run(self, args: ReadResourceInput, ctx: ToolContext) -> ToolOutput:
        connection = self._connections.get(args.server)
        if connection is None:
            raise ToolError(_unknown_server(args.server, self._connections))
        try:
            result = await connection.read_resource(args.uri)
        except (McpUnavailable, RuntimeError) as exc:
            raise ToolError(str(exc)) from exc
        embedded = [types.EmbeddedResource(type="resource", resource=c) for c in result.contents]
        return tool_output(embedded, None, False)


def _unknown_server(name: str, connections: dict[str, McpConnection]) -> str:
    known = ", ".join(connections) or "none"
    return f"No MCP server is called {name!r}; the servers are: {known}."


def tool_output(content: list[Any], structured: Any, is_error: bool) -> ToolOutput:
    """An MCP result as the model reads it: text in order, images as images, other
    media named; the structured result when there is no text."""
    texts: list[str] = []
    images: list[ImageBlock] = []
    for block in content:
        if isinstance(block, types.TextContent):
            texts.append(block.text)
        elif isinstance(block, types.ImageContent):
            images.append(ImageBlock(block.mime_type, block.data))
            texts.append(f"[image {len(images)}: {block.mime_type}]")
        elif isinstance(block, types.AudioContent):
            texts.append(f"[audio ({block.mime_type}) not shown: models here take no audio]")
        elif isinstance(block, types.ResourceLink):
            texts.append(f"[resource {block.name}: {block.uri}]")
        elif isinstance(block, types.EmbeddedResource):
            texts.append(_embedded(block.resource))
    if not texts and structured is not None:
        texts.append(json.dumps(structured, ensure_ascii=False, indent=2))
    text = "\n".join(texts)
    truncated = len(text) > RESULT_CHARS
    if truncated:
        cut = len(text) - RESULT_CHARS
        text = f"{text[:RESULT_CHARS]}\n[… {cut} more characters of this result were cut]"
    return ToolOutput(text, is_error=is_error, truncated=truncated, images=tuple(images))


def _embedded(resource: Any) -> str:
    if isinstance(resource, types.TextResourceContents):
        return f'<resource uri="{resource.uri}">\n{resource.text}\n</resource>'
    mime = getattr(resource, "mime_type", None) or "binary"
    return f"[resource {resource.uri} ({mime}) is binary and not shown]"
