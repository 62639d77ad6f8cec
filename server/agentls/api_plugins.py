"""The wire's description of a session's plugins (`agent/newSession`'s `plugins`).

Kept beside `api.py` (which is at its size limit), on the same wire base.
"""

from __future__ import annotations

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
    commands: list[str] = []
    agents: list[str] = []
    skills: list[str] = []
    # Whether it has hooks (they run once the user trusts the plugin).
    hooks: bool = False
    mcp_servers: list[str] = []
    # Why it could not be loaded (it then adds nothing).
    error: str | None = None
