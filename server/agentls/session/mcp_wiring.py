"""A session's MCP servers: starting them, asking once before a project's own may run,
and reporting their state to clients.

The servers live in the session's `Toolbox`; `McpWiring` is what starts them and asks
about them, so the rest of the session sees only "start" and "approve" (their tools join
the registry when the toolbox refreshes, before a model call).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentls.commands.catalog import CommandCatalog
from agentls.config import Settings
from agentls.events import McpStatusEvent
from agentls.hooks.points import Aborted, unless_aborted
from agentls.mcp_servers import approval as mcp_approval
from agentls.mcp_servers.prompts import McpPromptCommands
from agentls.mcp_servers.servers import McpServers
from agentls.mcp_servers.state import McpServerState
from agentls.permissions.asking import PermissionPrompter
from agentls.session.events_out import SessionEvents
from agentls.session.toolbox import Toolbox
from agentls.session.turn import Turn


@dataclass(frozen=True, slots=True)
class McpWiring:
    settings: Callable[[], Settings]
    cwd: Path
    # Where the servers' logs go (beside the session's transcript).
    log_dir: Path
    toolbox: Toolbox
    commands: CommandCatalog
    events: SessionEvents
    answers: PermissionPrompter
    # Tells clients the session's slash commands (a server's prompts are some).
    announce_commands: Callable[[], None]

    def start(self) -> None:
        """Start the configured MCP servers in the background (their tools join the
        session's once ready; a turn waits a little for servers still starting)."""
        settings = self.settings()
        configs = settings.mcp_servers
        if not configs or self.toolbox.mcp is not None:
            return
        project = mcp_approval.project_servers(configs, self.cwd)
        verdict = mcp_approval.remembered(settings.home, self.cwd, project)
        mcp = McpServers(
            configs,
            self.cwd,
            self.log_dir,
            self._status,
            settings.mcp_tool_timeout,
            settings.mcp_startup_timeout,
            held=[c.name for c in project] if verdict is not True else (),
        )
        self.toolbox.mcp = mcp
        mcp.start()
        self.commands.add_source(McpPromptCommands(mcp))
        if verdict is False:
            mcp.decline("the user chose never to start this project's MCP servers")

    async def approve(self, turn: Turn) -> bool:
        """Ask, once, whether the project's own MCP servers may start; False when the
        turn was aborted meanwhile (it is then ended)."""
        mcp = self.toolbox.mcp
        held = mcp.awaiting_approval() if mcp is not None else []
        if mcp is None or not held:
            return True
        asking = mcp_approval.ask(
            held,
            self.cwd,
            self.settings().home,
            self.answers,
            lambda event: self.events.send(event, turn),
        )
        try:
            approved = await unless_aborted(turn.abort, asking)
        except Aborted:
            self.events.end_broken_turn(turn, "aborted", None)
            return False
        if approved:
            await mcp.approve()
        else:
            mcp.decline("the user did not approve this project's MCP servers")
        return True

    def _status(self, state: McpServerState) -> None:
        count = len(state.tools) if state.status == "ready" else None
        attempt = state.attempts or None
        event = McpStatusEvent(
            state.name, state.status, state.transport, count, state.error, attempt
        )
        self.events.emit(event, None)
        # A server that became ready (or went away) may change the slash commands.
        if state.status in ("ready", "stopped") and self.commands.refresh():
            self.announce_commands()
