"""What one plugin brings: its commands, agent types, skills, hooks and MCP servers, read
from its folder once, with `${CLAUDE_PLUGIN_ROOT}` (or `${AGENTLS_PLUGIN_ROOT}`) in hook
and MCP server settings replaced by the plugin's folder.

Names are namespaced by the plugin's: `/plugin:command`, agent type `plugin:agent`, skill
`plugin:skill` (as Claude Code names them). The digest covers every file of the plugin
(not `.git`), so trust given to one version is not given to the next.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agentls.commands.catalog import CommandFolder, SlashCommand, parse_command_file
from agentls.mcp_servers.config import McpServerConfig, parse_servers
from agentls.plugins.manifest import ManifestError, PluginManifest, read_json_object
from agentls.skills.found import Skill, SkillPlace, find_skills
from agentls.subagents.types import AgentType, parse_agent_file

PLUGIN_SOURCE = "plugin"
ROOT_VARIABLES = ("${CLAUDE_PLUGIN_ROOT}", "${AGENTLS_PLUGIN_ROOT}")
DEFAULT_HOOKS = "hooks/hooks.json"
DEFAULT_MCP = ".mcp.json"


@dataclass(frozen=True, slots=True)
class PluginContents:
    manifest: PluginManifest
    commands: tuple[SlashCommand, ...]
    agents: tuple[AgentType, ...]
    skills: tuple[Skill, ...]
    # The `hooks` object (event → matchers), root expanded; None when it has none.
    hooks: dict[str, Any] | None
    mcp_servers: tuple[McpServerConfig, ...]
    # What was wrong with some of its files (the rest is used).
    problems: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.manifest.name

    def digest(self) -> str:
        """Its trust key, computed only for a plugin that would run something."""
        return folder_digest(self.manifest.folder)

    def runs(self) -> tuple[str, ...]:
        """The commands its hooks and MCP servers would run, for the trust question."""
        found = [
            str(hook.get("command"))
            for matchers in (self.hooks or {}).values()
            if isinstance(matchers, list)
            for matcher in matchers
            if isinstance(matcher, dict) and isinstance(matcher.get("hooks"), list)
            for hook in matcher["hooks"]
            if isinstance(hook, dict) and hook.get("command")
        ]
        for server in self.mcp_servers:
            found.append(server.url or " ".join([server.command or "", *server.args]))
        return tuple(dict.fromkeys(found))


def read_contents(manifest: PluginManifest) -> PluginContents:
    """Everything `manifest`'s plugin brings (ManifestError when its hooks or MCP file is
    unusable: those run commands, so a half-read one is not used)."""
    problems: list[str] = []
    skills, skill_problems = _skills(manifest)
    problems += skill_problems
    return PluginContents(
        manifest,
        _commands(manifest, problems),
        _agents(manifest, problems),
        skills,
        _hooks(manifest),
        _mcp_servers(manifest),
        tuple(problems),
    )


def _places(manifest: PluginManifest, default: str, extra: Iterable[str]) -> list[Path]:
    return [manifest.folder / default, *(manifest.folder / p for p in extra)]


def _commands(manifest: PluginManifest, problems: list[str]) -> tuple[SlashCommand, ...]:
    found: list[SlashCommand] = []
    for place in _places(manifest, "commands", manifest.commands):
        if place.is_file():
            try:
                text = place.read_text(encoding="utf-8")
                found.append(parse_command_file(text, place.stem, PLUGIN_SOURCE))
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                problems.append(f"command {place} ignored: {exc}")
        else:
            found += CommandFolder(place, PLUGIN_SOURCE).commands()
    return tuple(replace(c, name=f"{manifest.name}:{c.name}") for c in found)


def _agents(manifest: PluginManifest, problems: list[str]) -> tuple[AgentType, ...]:
    found: list[AgentType] = []
    for place in _places(manifest, "agents", manifest.agents):
        files = [place] if place.is_file() else sorted(place.glob("*.md"))
        for path in files:
            try:
                parsed = parse_agent_file(path.read_text(encoding="utf-8"), path.stem)
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                problems.append(f"agent {path} ignored: {exc}")
                continue
            found.append(replace(parsed, name=f"{manifest.name}:{parsed.name}"))
    return tuple(found)


def _skills(manifest: PluginManifest) -> tuple[tuple[Skill, ...], list[str]]:
    places = [SkillPlace(p, PLUGIN_SOURCE) for p in _places(manifest, "skills", manifest.skills)]
    found = find_skills(places)
    named = (replace(s, name=f"{manifest.name}:{s.name}") for s in found.skills)
    return tuple(named), list(found.problems)


def _hooks(manifest: PluginManifest) -> dict[str, Any] | None:
    value = _file_or_object(manifest, manifest.hooks, DEFAULT_HOOKS)
    if value is None:
        return None
    # hooks.json wraps the events in "hooks" (beside a "description"); inline may not.
    inner = value.get("hooks", value)
    if not isinstance(inner, dict):
        raise ManifestError(f"{manifest.name}: hooks must map event names to matchers")
    expanded: dict[str, Any] = _expand_root(inner, manifest.folder)
    return expanded


def _mcp_servers(manifest: PluginManifest) -> tuple[McpServerConfig, ...]:
    value = _file_or_object(manifest, manifest.mcp_servers, DEFAULT_MCP)
    if value is None:
        return ()
    servers = value.get("mcpServers", value)
    try:
        source = f"{PLUGIN_SOURCE}:{manifest.name}"
        return parse_servers(_expand_root(servers, manifest.folder), source, os.environ)
    except ValueError as exc:
        raise ManifestError(f"{manifest.name}: mcpServers {exc}") from None


def _file_or_object(
    manifest: PluginManifest, value: str | dict[str, Any] | None, default: str
) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return value
    path = manifest.folder / (value or default)
    if value is None and not path.is_file():
        return None
    return read_json_object(path)


def _expand_root(value: Any, folder: Path) -> Any:
    """Every string of `value` with the plugin-root variables replaced by `folder`."""
    if isinstance(value, str):
        for variable in ROOT_VARIABLES:
            value = value.replace(variable, str(folder))
        return value
    if isinstance(value, list):
        return [_expand_root(v, folder) for v in value]
    if isinstance(value, dict):
        return {k: _expand_root(v, folder) for k, v in value.items()}
    return value


def folder_digest(folder: Path) -> str:
    """A digest of every file's path and bytes under `folder` (`.git` left out)."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if ".git" in relative.parts or not path.is_file():
            continue
        digest.update(json.dumps(str(relative)).encode("utf-8"))
        try:
            digest.update(hashlib.sha256(path.read_bytes()).digest())
        except OSError:
            digest.update(b"?")
    return digest.hexdigest()
