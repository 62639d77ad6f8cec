"""The agent/* handlers of a session's MCP servers: list them, restart one, turn one off
or on.

A mixin of AgentHandlers (whose dispatch table finds them by name), kept apart so the
handlers module stays small; each converts params, calls the session layer, converts back.
"""

from __future__ import annotations

from agentls import api
from agentls.lsp.mcp_entries import mcp_server_entry
from agentls.lsp.server import AgentServer
from agentls.session.manager import SessionManager


class McpHandlers:
    manager: SessionManager

    async def list_mcp_servers(
        self, p: api.SessionParams, _client: AgentServer
    ) -> api.ListMcpServersResult:
        mcp = self.manager.get(p.session_id).mcp
        return api.ListMcpServersResult(
            servers=[mcp_server_entry(state) for state in (mcp.states() if mcp else [])]
        )

    async def restart_mcp_server(
        self, p: api.McpServerParams, _client: AgentServer
    ) -> api.EmptyResult:
        await self.manager.get(p.session_id).mcp_wiring.restart(p.name)
        return api.EmptyResult()

    async def set_mcp_server_enabled(
        self, p: api.SetMcpServerEnabledParams, _client: AgentServer
    ) -> api.EmptyResult:
        await self.manager.get(p.session_id).mcp_wiring.set_enabled(p.name, p.enabled)
        return api.EmptyResult()
