"""A session's MCP servers: starting them, asking once before a project's own may run,
and reporting their state to clients.

The servers live in the session's `Toolbox`; `McpWiring` is what starts them and asks
about them, so the rest of the session sees only "start" and "approve" (their tools join
the registry when the toolbox refreshes, before a model call).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentls.commands.catalog import CommandCatalog
from agentls.config import Settings
from agentls.errors import InvalidParams
from agentls.events import Emit, McpStatusEvent
from agentls.hooks.points import Aborted, unless_aborted
from agentls.mcp_servers import approval as mcp_approval
from agentls.mcp_servers.config import McpServerConfig, merge_servers
from agentls.mcp_servers.prompts import McpPromptCommands
from agentls.mcp_servers.servers import McpServers
from agentls.mcp_servers.state import McpServerState
from agentls.permissions.asking import PermissionPrompter
from agentls.permissions.plugin_trust import PluginTrust
from agentls.session.disabled_servers import remember_disabled
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
    # The enabled plugins' servers (the settings' win on a name) and the trust in them.
    plugin_servers: tuple[McpServerConfig, ...] = ()
    plugin_trust: PluginTrust | None = None

    def start(self) -> None:
        """Start the configured MCP servers in the background (their tools join the
        session's once ready; a turn waits a little for servers still starting)."""
        settings = self.settings()
        configs = merge_servers(self.plugin_servers, settings.mcp_servers)
        if not configs or self.toolbox.mcp is not None:
            return
        project = mcp_approval.project_servers(configs, self.cwd)
        verdict = mcp_approval.remembered(settings.home, self.cwd, project)
        held = [c.name for c in project] if verdict is not True else []
        held += [c.name for c in configs if self._untrusted_plugin(c) is not None]
        mcp = McpServers(
            configs,
            self.cwd,
            self.log_dir,
            self._status,
            settings.mcp_tool_timeout,
            settings.mcp_startup_timeout,
            held=held,
            disabled=settings.disabled_mcp_servers,
        )
        self.toolbox.mcp = mcp
        mcp.start()
        self.commands.add_source(McpPromptCommands(mcp))
        if verdict is False:
            names = [c.name for c in project]
            mcp.decline("the user chose never to start this project's MCP servers", names)
        refused = [c.name for c in configs if self._refused_plugin(c)]
        if refused:
            mcp.decline("the user chose never to run this plugin", refused)

    async def approve(self, turn: Turn) -> bool:
        """Ask, once, whether the project's own MCP servers may start; False when the
        turn was aborted meanwhile (it is then ended)."""
        mcp = self.toolbox.mcp
        held = mcp.awaiting_approval() if mcp is not None else []
        if mcp is None or not held:
            return True
        emit = lambda event: self.events.send(event, turn)  # noqa: E731
        try:
            await unless_aborted(turn.abort, self._decide_plugins(mcp, held, emit))
        except Aborted:
            self.events.end_broken_turn(turn, "aborted", None)
            return False
        waiting = mcp.awaiting_approval()
        project = [c for c in waiting if not c.source.startswith("plugin:")]
        if not project:
            if waiting:
                await mcp.approve()
            return True
        asking = mcp_approval.ask(
            project,
            self.cwd,
            self.settings().home,
            self.answers,
            emit,
        )
        try:
            approved = await unless_aborted(turn.abort, asking)
        except Aborted:
            self.events.end_broken_turn(turn, "aborted", None)
            return False
        if not approved:
            names = [c.name for c in project]
            mcp.decline("the user did not approve this project's MCP servers", names)
        if mcp.awaiting_approval():
            await mcp.approve()
        return True

    async def restart(self, name: str) -> None:
        """agent/restartMcpServer: stop the server and start it again."""
        mcp = self._servers_with(name)
        try:
            await mcp.restart(name)
        except ValueError as exc:
            raise InvalidParams(str(exc), {"field": "name"}) from exc

    async def set_enabled(self, name: str, enabled: bool) -> None:
        """agent/setMcpServerEnabled: start or stop the server, its tools with it, and
        remember the choice for the project's next sessions."""
        mcp = self._servers_with(name)
        try:
            await asyncio.to_thread(remember_disabled, self.cwd, name, not enabled)
        except (OSError, ValueError) as exc:
            raise InvalidParams(f"The choice could not be saved: {exc}") from exc
        if enabled:
            await mcp.enable(name)
        else:
            await mcp.disable(name)

    def _servers_with(self, name: str) -> McpServers:
        """The session's servers, if one is called `name` (else -32602 on `name`)."""
        mcp = self.toolbox.mcp
        if mcp is None or all(c.name != name for c in mcp.configs):
            shown = name if len(name) <= 80 else name[:80] + "…"
            raise InvalidParams(f"This session has no MCP server {shown!r}.", {"field": "name"})
        return mcp

    def _untrusted_plugin(self, config: McpServerConfig) -> str | None:
        """The plugin that brought `config`, unless the user trusts it already."""
        plugin = config.source.removeprefix("plugin:")
        if plugin == config.source:
            return None
        trusted = self.plugin_trust is not None and self.plugin_trust.allowed(plugin)
        return None if trusted else plugin

    def _refused_plugin(self, config: McpServerConfig) -> bool:
        plugin, trust = self._untrusted_plugin(config), self.plugin_trust
        return plugin is not None and trust is not None and trust.refused(plugin)

    async def _decide_plugins(
        self, mcp: McpServers, held: list[McpServerConfig], emit: Emit
    ) -> None:
        """Ask about the plugins whose servers wait; decline those not trusted."""
        if not any(self._untrusted_plugin(c) for c in held):
            return
        if self.plugin_trust is not None:
            await self.plugin_trust.decide(emit, self.answers)
        for config in held:
            plugin = self._untrusted_plugin(config)
            if plugin is not None:
                mcp.decline(f"the user did not trust the plugin {plugin}", [config.name])

    def _status(self, state: McpServerState) -> None:
        count = len(state.tools) if state.status == "ready" else None
        attempt = state.attempts or None
        event = McpStatusEvent(
            state.name, state.status, state.transport, count, state.error, attempt
        )
        self.events.emit(event, None)
        # A server that became ready (or went away) may change the slash commands.
        if state.status in ("ready", "stopped", "disabled") and self.commands.refresh():
            self.announce_commands()
