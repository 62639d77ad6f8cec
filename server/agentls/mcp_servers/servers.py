"""A session's MCP servers: started in the background (newSession never waits for them),
their tools offered once they are ready, all stopped with the session.

The tools' order and specs change only when a server's tool list does (a restart that
offers the same tools leaves the requests' cached prefix alone).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import time
from collections.abc import Callable, Collection
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentls.mcp_servers.config import McpServerConfig
from agentls.mcp_servers.state import McpPromptInfo, McpServerState, McpStatus

if TYPE_CHECKING:
    from agentls.mcp_servers.connection import McpConnection
    from agentls.tools.base import Tool

log = logging.getLogger(__name__)


class McpServers:
    def __init__(
        self,
        configs: tuple[McpServerConfig, ...],
        cwd: Path,
        log_dir: Path,
        on_status: Callable[[McpServerState], None],
        tool_timeout: float,
        startup_timeout: float,
        held: Collection[str] = (),
        disabled: Collection[str] = (),
    ) -> None:
        self.configs = configs
        # Servers not started until the user approves them (a project's own).
        self._held = set(held)
        # Servers the user turned off: never started while they stay so.
        self.disabled = {c.name for c in configs if c.name in disabled}
        self._declined: dict[str, McpServerState] = {}
        self._cwd = cwd
        self._log_dir = log_dir
        self._on_status = on_status
        self._tool_timeout = tool_timeout
        self._startup_timeout = startup_timeout
        self._connections: dict[str, McpConnection] = {}
        self._started = asyncio.Event()
        self._starter: asyncio.Task[None] | None = None
        # What each server offered when last ready; `version` moves when that changes.
        self._offered: dict[str, tuple[str, ...]] = {}
        self.version = 0

    def start(self) -> None:
        """Start every server in the background (their first status comes from that task,
        after the request that made the session has been answered)."""
        self._starter = asyncio.create_task(self._start_all(), name="mcp:start")

    async def _start_all(self) -> None:
        try:
            # The SDK takes about a second to import: not on the event loop.
            module = await asyncio.to_thread(
                importlib.import_module, "agentls.mcp_servers.connection"
            )
            for config in self.configs:
                waiting = config.name in self._held or config.name in self._declined
                if waiting or config.name in self._connections or config.name in self.disabled:
                    continue
                connection = module.McpConnection(
                    config, self._cwd, self._log_dir, self._changed, self._startup_timeout
                )
                self._connections[config.name] = connection
                connection.start()
        except Exception as exc:
            log.exception("MCP servers could not start")
            for config in self.configs:
                error = f"the MCP client did not load: {exc}"
                self._on_status(
                    McpServerState(
                        config.name, config.transport, config.source, "failed", error=error
                    )
                )
        finally:
            self._started.set()

    def awaiting_approval(self) -> list[McpServerConfig]:
        """The servers held until the user approves them."""
        return [c for c in self.configs if c.name in self._held]

    async def approve(self) -> None:
        """Start the held servers (a turn then waits for them like any starting server)."""
        self._held.clear()
        await self._start_missing()

    async def _start_missing(self) -> None:
        """Start, in the background, the servers that may run and are not running."""
        if self._starter is not None:
            await asyncio.gather(self._starter, return_exceptions=True)
        self._started.clear()
        self._starter = asyncio.create_task(self._start_all(), name="mcp:start")

    async def restart(self, name: str) -> None:
        """Stop a server and start it again (one that failed, or gave up, too); a server
        that is disabled, or waits for or was refused the user's approval, stays as it is
        (ValueError says why)."""
        if name in self.disabled:
            raise ValueError(f"MCP server {name!r} is disabled; enable it to start it.")
        if name in self._held or name in self._declined:
            raise ValueError(
                f"MCP server {name!r} has not been approved; it starts once the user trusts "
                "the project's servers (asked at the next message)."
            )
        if self._starter is not None:
            await asyncio.gather(self._starter, return_exceptions=True)
        connection = self._connections.get(name)
        if connection is None:
            await self._start_missing()
        else:
            await connection.restart()

    async def disable(self, name: str) -> None:
        """Stop a server and take its tools away (from the next model call on)."""
        self.disabled.add(name)
        connection = self._connections.pop(name, None)
        if connection is not None:
            await connection.close()
        if self._offered.pop(name, None) is not None:
            self.version += 1
        self._on_status(self._disabled_state(name))

    async def enable(self, name: str) -> None:
        """Start a disabled server again (its tools come back once it is ready)."""
        if name in self.disabled:
            self.disabled.discard(name)
            await self._start_missing()

    def _disabled_state(self, name: str) -> McpServerState:
        config = next(c for c in self.configs if c.name == name)
        return McpServerState(config.name, config.transport, config.source, "disabled")

    def decline(self, reason: str, names: Collection[str] | None = None) -> None:
        """Never start the held servers (those of `names`, or all) in this session."""
        for config in self.awaiting_approval():
            if names is not None and config.name not in names:
                continue
            state = McpServerState(config.name, config.transport, config.source, "stopped")
            self._declined[config.name] = replace(state, error=reason)
            self._on_status(self._declined[config.name])
            self._held.discard(config.name)

    def _changed(self, state: McpServerState) -> None:
        offered = tuple(t.name for t in state.tools) + tuple(r.uri for r in state.resources)
        if state.status == "ready" and self._offered.get(state.name) != offered:
            self._offered[state.name] = offered
            self.version += 1
        self._on_status(state)

    def states(self) -> list[McpServerState]:
        """Every configured server, in configuration order."""
        states = []
        for config in self.configs:
            connection = self._connections.get(config.name)
            if config.name in self.disabled:
                states.append(self._disabled_state(config.name))
            elif connection is not None:
                states.append(connection.state)
            elif config.name in self._declined:
                states.append(self._declined[config.name])
            else:
                status: McpStatus = "awaiting_approval" if config.name in self._held else "starting"
                states.append(McpServerState(config.name, config.transport, config.source, status))
        return states

    async def wait_started(self, timeout: float) -> None:
        """Until every server is ready or has failed, at most `timeout` seconds in all
        (a turn's first model call should see the tools of servers that are coming)."""
        if self._started.is_set() and all(s.status != "starting" for s in self.states()):
            return
        deadline = time.monotonic() + timeout
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._started.wait(), timeout)
        for connection in list(self._connections.values()):
            await connection.wait_settled(max(0.0, deadline - time.monotonic()))

    def tools(self) -> list[Tool[Any]]:
        """The tools of every server that has been ready (a restarting server's calls fail
        with a message), then the resource tools when a server offers resources."""
        if not self._offered:
            return []
        from agentls.mcp_servers import tools as mcp_tools

        offered: list[Tool[Any]] = []
        has_resources = False
        for name, connection in self._connections.items():
            if name not in self._offered or connection.state.status == "stopped":
                continue
            has_resources = has_resources or bool(connection.state.resources)
            offered += [
                mcp_tools.McpTool(connection, info, self._tool_timeout)
                for info in connection.state.tools
            ]
        if has_resources:
            offered += [
                mcp_tools.ListMcpResourcesTool(self._connections),
                mcp_tools.ReadMcpResourceTool(self._connections),
            ]
        return offered

    def prompts(self) -> list[tuple[str, McpPromptInfo]]:
        """(server, prompt) for every ready server's prompts."""
        return [
            (name, prompt)
            for name, connection in self._connections.items()
            if connection.state.status == "ready"
            for prompt in connection.state.prompts
        ]

    async def prompt_text(self, server: str, name: str, arguments: dict[str, str]) -> str:
        """A server's prompt, filled in, as the text of a user message."""
        connection = self._connections.get(server)
        if connection is None:
            raise ValueError(f"No MCP server is called {server!r}.")
        from agentls.mcp_servers.tools import tool_output

        result = await connection.get_prompt(name, arguments)
        parts = [tool_output([m.content], None, False).content for m in result.messages]
        return "\n\n".join(p for p in parts if p)

    async def close(self) -> None:
        if self._starter is not None:
            await asyncio.gather(self._starter, return_exceptions=True)
        await asyncio.gather(
            *(c.close() for c in self._connections.values()), return_exceptions=True
        )
