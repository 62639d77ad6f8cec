"""The wire's description of a session's plugins (`agent/newSession`'s `plugins`).

Kept beside `api.py` (which is at its size limit), on the same wire base.
"""

from __future__ import annotations

from pydantic import Field

from agentls.api_base import WireModel


class PluginInfo(WireModel):
    """One installed plugin: whether it is enabled, and what it adds to sessions."""

    name: str
    enabled: bool
    # What it was installed from: a folder, a git URL, or name@marketplace.
    source: str
    path: str
    version: str | None = None
    description: str | None = None
    # Namespaced names: `plugin:command`, `plugin:agent`, `plugin:skill`.
    commands: list[str] = Field(default_factory=list)
    agents: list[str] = Field(default_factory=list)
    skills: list[str] = Field(default_factory=list)
    # Whether it has hooks (they run once the user trusts the plugin).
    hooks: bool = False
    mcp_servers: list[str] = Field(default_factory=list)
    # Why it could not be loaded (it then adds nothing).
    error: str | None = None
