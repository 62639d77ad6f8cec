"""A project's own MCP servers start only once the user trusts them.

A server configured in the project's `.mcp.json` or `.agentls/settings.json` runs a
command the repository chose; like the project's hooks it waits for the user's yes
(asked at the session's first message, as a permission request every client answers).
The answer can be remembered, bound to a digest of the servers shown, so a changed file
is asked about again. Servers of the user's own settings, the client and
`agent/newSession` start at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path

from agentls.events import LoopEvent, PermissionRequest
from agentls.mcp_servers.config import McpServerConfig
from agentls.messages import new_id
from agentls.permissions import trust
from agentls.permissions.asking import PermissionPrompter, ask_permission


def project_servers(configs: Sequence[McpServerConfig], cwd: Path) -> list[McpServerConfig]:
    """The servers that a file inside the project configured."""
    return [c for c in configs if _inside(c.source, cwd)]


def remembered(home: Path, cwd: Path, servers: Sequence[McpServerConfig]) -> bool | None:
    """The user's remembered answer about these servers of this project, if any."""
    return trust.trusted(home, _key(cwd), _digest(servers))


async def ask(
    servers: Sequence[McpServerConfig],
    cwd: Path,
    home: Path,
    prompter: PermissionPrompter,
    emit: Callable[[LoopEvent], None],
) -> bool:
    """Ask whether the project's servers may start; an "always" answer is remembered."""
    request = PermissionRequest(
        new_id("perm"),
        new_id("mcp"),
        "Start this project's MCP servers? They run with your rights: "
        + "; ".join(_describe(s) for s in servers),
        {"mcpServers": {s.name: _shown(s) for s in servers}},
        trust.trust_options("this project's MCP servers"),
    )
    answer = await ask_permission(prompter, emit, request)
    approved = answer.option_id.startswith("allow")
    if answer.option_id.endswith("always"):
        trust.remember(home, _key(cwd), _digest(servers), approved)
    return approved


def _describe(server: McpServerConfig) -> str:
    if server.transport == "http":
        return f"{server.name} ({server.url})"
    return f"{server.name} ({' '.join([server.command or '', *server.args])})"


def _shown(server: McpServerConfig) -> dict[str, object]:
    """What the user is shown of a server: no header or environment values (secrets)."""
    shown = {k: v for k, v in asdict(server).items() if k not in ("env", "headers", "source")}
    shown["env"] = [name for name, _value in server.env]
    shown["headers"] = [name for name, _value in server.headers]
    shown["source"] = server.source
    return shown


def _key(cwd: Path) -> str:
    return f"{cwd}#mcpServers"


def _digest(servers: Sequence[McpServerConfig]) -> str:
    return trust.digest_of([asdict(s) for s in servers])


def _inside(source: str, cwd: Path) -> bool:
    path = Path(source)
    return path.is_absolute() and path.is_relative_to(cwd)
