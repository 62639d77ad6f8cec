"""A session's MCP servers: starting them, asking once before a project's own may run,
and reporting their state to clients.

The servers live in `AgentSession.mcp`; these functions are the session's code for them,
kept together so the rest of the session sees only "start" and "approve" (their tools
join the registry in `loop_deps`, where a loop's tools are gathered).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentls.events import McpStatusEvent
from agentls.hooks.points import Aborted, unless_aborted
from agentls.mcp_servers import approval as mcp_approval
from agentls.mcp_servers.prompts import McpPromptCommands
from agentls.mcp_servers.servers import McpServers
from agentls.mcp_servers.state import McpServerState

if TYPE_CHECKING:
    from agentls.session.session import AgentSession
    from agentls.session.turn import Turn


def start_mcp_servers(session: AgentSession) -> None:
    """Start the configured MCP servers in the background (their tools join the
    session's once ready; a turn waits a little for servers still starting)."""
    settings = session.settings
    configs = settings.mcp_servers
    if not configs or session.mcp is not None:
        return
    project = mcp_approval.project_servers(configs, session.cwd)
    verdict = mcp_approval.remembered(settings.home, session.cwd, project)
    mcp = McpServers(
        configs,
        session.cwd,
        session.transcript.path.with_suffix("") / "mcp",
        lambda state: _mcp_status(session, state),
        settings.mcp_tool_timeout,
        settings.mcp_startup_timeout,
        held=[c.name for c in project] if verdict is not True else (),
    )
    session.toolbox.mcp = mcp
    mcp.start()
    session.commands.add_source(McpPromptCommands(mcp))
    if verdict is False:
        mcp.decline("the user chose never to start this project's MCP servers")


async def approve_mcp_servers(session: AgentSession, turn: Turn) -> bool:
    """Ask, once, whether the project's own MCP servers may start; False when the
    turn was aborted meanwhile (it is then ended)."""
    mcp = session.mcp
    held = mcp.awaiting_approval() if mcp is not None else []
    if mcp is None or not held:
        return True
    asking = mcp_approval.ask(
        held,
        session.cwd,
        session.settings.home,
        session.answers,
        lambda event: session.events.send(event, turn),
    )
    try:
        approved = await unless_aborted(turn.abort, asking)
    except Aborted:
        session.events.end_broken_turn(turn, "aborted", None)
        return False
    if approved:
        await mcp.approve()
    else:
        mcp.decline("the user did not approve this project's MCP servers")
    return True


def _mcp_status(session: AgentSession, state: McpServerState) -> None:
    count = len(state.tools) if state.status == "ready" else None
    attempt = state.attempts or None
    event = McpStatusEvent(state.name, state.status, state.transport, count, state.error, attempt)
    session.events.emit(event, None)
    # A server that became ready (or went away) may change the slash commands.
    if state.status in ("ready", "stopped") and session.commands.refresh():
        session.announce_commands()
