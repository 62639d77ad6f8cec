"""A session's MCP servers as agent/listMcpServers shows them: the servers' state, in the
wire's terms (a tool by the name the model calls it and the name its server gives it)."""

from __future__ import annotations

from agentls import api
from agentls.mcp_servers.state import McpServerState, tool_name


def mcp_server_entry(state: McpServerState) -> api.McpServerEntry:
    """A session's MCP server as agent/listMcpServers shows it."""
    return api.McpServerEntry(
        name=state.name,
        status=state.status,
        transport=state.transport,
        source=state.source,
        error=state.error,
        attempts=state.attempts,
        server_version=state.server_version,
        tools=[
            api.McpToolEntry(
                name=tool_name(state.name, t.name),
                server_name=t.name,
                description=t.description,
                read_only=t.read_only,
            )
            for t in state.tools
        ],
        resources=[
            api.McpResourceEntry(
                uri=r.uri, name=r.name, description=r.description, mime_type=r.mime_type
            )
            for r in state.resources
        ],
        prompts=[
            api.McpPromptEntry(
                name=p.name,
                description=p.description,
                arguments=[
                    api.McpPromptArgumentEntry(
                        name=a.name, description=a.description, required=a.required
                    )
                    for a in p.arguments
                ],
            )
            for p in state.prompts
        ],
    )
