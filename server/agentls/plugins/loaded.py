"""A session's plugins: the enabled ones read when it opens, and what they add to its
commands, agent types, skills, hooks and MCP servers.

A plugin that cannot be read (its folder gone, a bad manifest, a bad hooks or MCP file)
is reported once and left out; the others load regardless. A plugin's command is also
offered without its namespace (`/command` beside `/plugin:command`) when no other plugin
has one of that name; a built-in, skill, user or project command of the name wins.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agentls.commands.catalog import FixedCommands
from agentls.hooks.config import HookConfig, HookMatcher, parse_hooks
from agentls.mcp_servers.config import McpServerConfig
from agentls.permissions.plugin_trust import PluginTrust, TrustSubject
from agentls.plugins.contents import PluginContents, read_contents
from agentls.plugins.manifest import ManifestError, read_manifest
from agentls.plugins.state import PluginState
from agentls.skills.found import Skill
from agentls.subagents.types import AgentType

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PluginSummary:
    """What `agentls plugin list` and the wire tell of one installed plugin."""

    name: str
    enabled: bool
    source: str
    path: str
    version: str | None = None
    description: str | None = None
    commands: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()
    hooks: bool = False
    mcp_servers: tuple[str, ...] = ()
    error: str | None = None


@dataclass(slots=True)
class SessionPlugins:
    loaded: tuple[PluginContents, ...] = ()
    summaries: tuple[PluginSummary, ...] = ()
    problems: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, home: Path) -> SessionPlugins:
        """The installed plugins; the enabled ones read."""
        loaded: list[PluginContents] = []
        summaries: list[PluginSummary] = []
        problems: list[str] = []
        for name, entry in sorted(PluginState.read(home).plugins.items()):
            base = PluginSummary(name, entry.enabled, entry.source, entry.path)
            try:
                contents = read_contents(read_manifest(Path(entry.path)))
            except (ManifestError, OSError) as exc:
                problems.append(f"Plugin {name} not loaded: {exc}")
                log.warning("%s", problems[-1])
                summaries.append(replace(base, error=str(exc)))
                continue
            problems += [f"Plugin {name}: {p}" for p in contents.problems]
            summaries.append(summarize(base, contents))
            if entry.enabled:
                loaded.append(contents)
        return cls(tuple(loaded), tuple(summaries), problems)

    def wire(self) -> list[dict[str, Any]]:
        """Every installed plugin as the wire describes it (`PluginInfo`)."""
        return [summary_dict(s) for s in self.summaries]

    def commands(self) -> FixedCommands:
        """`/plugin:command` for each, and `/command` where only one plugin has it."""
        namespaced = [c for p in self.loaded for c in p.commands]
        plain = Counter(_short(c.name) for c in namespaced)
        aliases = [
            replace(c, name=_short(c.name)) for c in namespaced if plain[_short(c.name)] == 1
        ]
        return FixedCommands((*aliases, *namespaced))

    def agent_types(self, others: Sequence[AgentType]) -> list[AgentType]:
        return [*others, *(a for p in self.loaded for a in p.agents)]

    def skills(self) -> tuple[Skill, ...]:
        return tuple(s for p in self.loaded for s in p.skills)

    def mcp_servers(self) -> tuple[McpServerConfig, ...]:
        return tuple(s for p in self.loaded for s in p.mcp_servers)

    def trust(self, home: Path) -> PluginTrust:
        """The session's trust in the plugins that would run something."""
        subjects = [TrustSubject(p.name, p.digest(), p.runs()) for p in self.loaded if p.runs()]
        return PluginTrust(home, subjects)

    def add_hooks(self, config: HookConfig, problems: list[str]) -> HookConfig:
        """`config` with every plugin's hooks after its own, each marked with its plugin."""
        matchers = dict(config.matchers)
        for plugin in self.loaded:
            if plugin.hooks is None:
                continue
            own = parse_hooks([(f"plugin {plugin.name}", plugin.hooks)], "", problems)
            for event, found in own.matchers.items():
                tagged = tuple(_tagged(m, plugin.name) for m in found)
                matchers[event] = (*matchers.get(event, ()), *tagged)
        return replace(config, matchers=matchers)


def summarize(base: PluginSummary, contents: PluginContents) -> PluginSummary:
    manifest = contents.manifest
    return replace(
        base,
        version=manifest.version,
        description=manifest.description,
        commands=tuple(c.name for c in contents.commands),
        agents=tuple(a.name for a in contents.agents),
        skills=tuple(s.name for s in contents.skills),
        hooks=bool(contents.hooks),
        mcp_servers=tuple(s.name for s in contents.mcp_servers),
    )


def _short(name: str) -> str:
    return name.split(":", 1)[1]


def _tagged(matcher: HookMatcher, plugin: str) -> HookMatcher:
    commands = tuple(replace(c, plugin=plugin) for c in matcher.commands)
    return HookMatcher(matcher.pattern, commands)


def summary_dict(summary: PluginSummary) -> dict[str, Any]:
    """A summary as the wire and `list --json` show it (camelCase, empty parts left out)."""
    shown: dict[str, Any] = {
        "name": summary.name,
        "enabled": summary.enabled,
        "source": summary.source,
        "path": summary.path,
    }
    optional = {
        "version": summary.version,
        "description": summary.description,
        "commands": list(summary.commands),
        "agents": list(summary.agents),
        "skills": list(summary.skills),
        "hooks": summary.hooks,
        "mcpServers": list(summary.mcp_servers),
        "error": summary.error,
    }
    shown.update({k: v for k, v in optional.items() if v})
    return shown
