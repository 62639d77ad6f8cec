"""The wire models of a session's MCP servers: agent/listMcpServers, and the user's
control of them (agent/restartMcpServer, agent/setMcpServerEnabled).

Kept beside `api.py` (which is at its size limit), on the same wire base.
"""

from __future__ import annotations

from typing import Literal

from agentls.api_base import ParamsModel, WireModel


class McpToolEntry(WireModel):
    # As the model calls it (mcp__server__tool), and as the server names it.
    name: str
    server_name: str
    description: str
    read_only: bool


class McpResourceEntry(WireModel):
    uri: str
    name: str
    description: str | None = None
    mime_type: str | None = None


class McpPromptArgumentEntry(WireModel):
    name: str
    description: str | None = None
    required: bool


class McpPromptEntry(WireModel):
    name: str
    description: str | None = None
    arguments: list[McpPromptArgumentEntry]


class McpServerEntry(WireModel):
    name: str
    status: Literal["awaiting_approval", "starting", "ready", "failed", "stopped", "disabled"]
    transport: Literal["stdio", "http"]
    # "user settings", a settings file's path, a .mcp.json path, or "agent/newSession".
    source: str
    error: str | None = None
    attempts: int
    server_version: str | None = None
    tools: list[McpToolEntry]
    resources: list[McpResourceEntry]
    prompts: list[McpPromptEntry]


class ListMcpServersResult(WireModel):
    servers: list[McpServerEntry]


class McpServerParams(ParamsModel):
    session_id: str
    # The server's name, as agent/listMcpServers gives it.
    name: str


class SetMcpServerEnabledParams(McpServerParams):
    enabled: bool
