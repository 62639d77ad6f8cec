"""What a session knows of an MCP server: its status and what it offers (no SDK types)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Literal

# `awaiting_approval`: a project's server, not started until the user trusts it;
# `disabled`: turned off by the user (agent/setMcpServerEnabled, `disabledMcpServers`).
McpStatus = Literal["awaiting_approval", "starting", "ready", "failed", "stopped", "disabled"]
# Model APIs take tool names of at most 64 of these characters.
_NAME_LIMIT = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True, slots=True)
class McpToolInfo:
    name: str
    description: str
    input_schema: dict[str, Any]
    # The server's readOnlyHint: the call may share the read lane (it still asks).
    read_only: bool = False
    title: str | None = None


@dataclass(frozen=True, slots=True)
class McpResourceInfo:
    uri: str
    name: str
    description: str | None = None
    mime_type: str | None = None


@dataclass(frozen=True, slots=True)
class McpPromptArgument:
    name: str
    description: str | None = None
    required: bool = False


@dataclass(frozen=True, slots=True)
class McpPromptInfo:
    name: str
    description: str | None = None
    arguments: tuple[McpPromptArgument, ...] = ()


@dataclass(frozen=True, slots=True)
class McpServerState:
    """One server as clients see it (agent/listMcpServers, the mcp_status event)."""

    name: str
    transport: Literal["stdio", "http"]
    source: str
    status: McpStatus = "starting"
    tools: tuple[McpToolInfo, ...] = ()
    resources: tuple[McpResourceInfo, ...] = ()
    prompts: tuple[McpPromptInfo, ...] = ()
    # Why it failed or stopped (its stderr's last lines for a process that exited).
    error: str | None = None
    # Starts so far; more than one means it was restarted.
    attempts: int = 0
    server_version: str | None = None


def tool_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>`, made safe for model APIs (a hash keeps long names apart)."""
    name = f"mcp__{server}__{_UNSAFE.sub('_', tool)}"
    if len(name) <= _NAME_LIMIT:
        return name
    digest = hashlib.sha1(name.encode()).hexdigest()[:8]
    return f"{name[: _NAME_LIMIT - 9]}_{digest}"
