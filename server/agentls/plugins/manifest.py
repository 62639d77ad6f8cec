"""A plugin's manifest: `.agentls-plugin/plugin.json`, or Claude Code's
`.claude-plugin/plugin.json`, read and checked.

Only `name` is required (kebab-case: it namespaces the plugin's commands and agents).
`commands`, `agents` and `skills` may name extra paths (a string or a list, relative to the
plugin's folder) beside the default `commands/`, `agents/` and `skills/` folders; `hooks`
and `mcpServers` are a path to a JSON file or the object itself, and default to
`hooks/hooks.json` and `.mcp.json`. Any error is a `ManifestError` of one line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MANIFEST_FOLDERS = (".agentls-plugin", ".claude-plugin")
MANIFEST_FILE = "plugin.json"
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


class ManifestError(ValueError):
    """A plugin (or marketplace) file that cannot be used; the message is one line."""


@dataclass(frozen=True, slots=True)
class PluginManifest:
    name: str
    folder: Path
    version: str | None = None
    description: str | None = None
    author: str | None = None
    # Extra paths (relative to the folder) beside the default folders.
    commands: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()
    # A path to a JSON file, an inline object, or None for the default file.
    hooks: str | dict[str, Any] | None = None
    mcp_servers: str | dict[str, Any] | None = None


def manifest_path(folder: Path) -> Path | None:
    """The plugin.json of `folder` (agentls's own folder first), None when it has none."""
    for name in MANIFEST_FOLDERS:
        path = folder / name / MANIFEST_FILE
        if path.is_file():
            return path
    return None


def read_manifest(folder: Path) -> PluginManifest:
    """The manifest of the plugin in `folder` (ManifestError saying what is wrong)."""
    path = manifest_path(folder)
    if path is None:
        raise ManifestError(
            f"{folder}: not a plugin (no .agentls-plugin/plugin.json or .claude-plugin/plugin.json)"
        )
    data = read_json_object(path)
    try:
        return _manifest(data, folder.resolve())
    except ManifestError as exc:
        raise ManifestError(f"{path}: {exc}") from None


def read_json_object(path: Path) -> dict[str, Any]:
    """A JSON object from `path` (ManifestError naming the file and the fault)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"{path}: not readable ({exc})") from None
    except ValueError as exc:
        raise ManifestError(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ManifestError(f"{path}: must be a JSON object")
    return data


def check_name(name: Any, what: str = "name") -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ManifestError(
            f'"{what}" must be kebab-case (lowercase letters, digits, hyphens), not {name!r}'
        )
    return name


def _manifest(data: dict[str, Any], folder: Path) -> PluginManifest:
    return PluginManifest(
        check_name(data.get("name")),
        folder,
        _optional_text(data, "version"),
        _optional_text(data, "description"),
        _author(data.get("author")),
        _paths(data, "commands", folder),
        _paths(data, "agents", folder),
        _paths(data, "skills", folder),
        _file_or_object(data, "hooks", folder),
        _file_or_object(data, "mcpServers", folder),
    )


def _optional_text(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise ManifestError(f'"{key}" must be a string')
    return value


def _author(value: Any) -> str | None:
    """Claude Code writes `{"name", "email", "url"}`; a plain string is taken too."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        return str(value["name"])
    raise ManifestError('"author" must be a string or an object with a "name"')


def _paths(data: dict[str, Any], key: str, folder: Path) -> tuple[str, ...]:
    value = data.get(key)
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise ManifestError(f'"{key}" must be a path or a list of paths')
    for item in items:
        _inside(item, folder, key)
    return tuple(items)


def _file_or_object(data: dict[str, Any], key: str, folder: Path) -> str | dict[str, Any] | None:
    value = data.get(key)
    if value is None or isinstance(value, dict):
        return value
    if isinstance(value, str):
        _inside(value, folder, key)
        return value
    raise ManifestError(f'"{key}" must be a path to a JSON file or an object')


def _inside(relative: str, folder: Path, key: str) -> None:
    """A path of the manifest stays inside the plugin (no `../` out of it)."""
    if Path(relative).is_absolute() or not (folder / relative).resolve().is_relative_to(folder):
        raise ManifestError(f'"{key}": {relative!r} must be a path inside the plugin')
