"""Marketplaces: a `marketplace.json` (in `.claude-plugin/` or `.agentls-plugin/`) listing
plugins by name and source, so `agentls plugin add name@marketplace` can find them.

    {"name": "team-tools", "owner": {"name": "…"},
     "plugins": [{"name": "review", "source": "./plugins/review"},
                 {"name": "lint", "source": {"source": "github", "repo": "org/lint"}},
                 {"name": "fmt", "source": {"source": "url", "url": "https://…/fmt.git"}}]}

A relative source is a folder of the marketplace (under `metadata.pluginRoot` when it is a
bare name); `github` and `url` (or `git`) sources are git repositories to clone.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentls.plugins.manifest import MANIFEST_FOLDERS, ManifestError, check_name, read_json_object

MARKETPLACE_FILE = "marketplace.json"


@dataclass(frozen=True, slots=True)
class ListedPlugin:
    name: str
    # Exactly one: a folder inside the marketplace, or a git URL to clone.
    folder: Path | None = None
    git_url: str | None = None
    description: str | None = None


@dataclass(frozen=True, slots=True)
class Marketplace:
    name: str
    folder: Path
    plugins: tuple[ListedPlugin, ...]

    def find(self, name: str) -> ListedPlugin | None:
        return next((p for p in self.plugins if p.name == name), None)


def marketplace_path(folder: Path) -> Path | None:
    for name in MANIFEST_FOLDERS:
        path = folder / name / MARKETPLACE_FILE
        if path.is_file():
            return path
    return None


def read_marketplace(folder: Path) -> Marketplace:
    """The marketplace in `folder` (ManifestError naming the file and the fault)."""
    path = marketplace_path(folder)
    if path is None:
        raise ManifestError(f"{folder}: no .claude-plugin/marketplace.json")
    data = read_json_object(path)
    try:
        name = check_name(data.get("name"))
        entries = data.get("plugins")
        if not isinstance(entries, list):
            raise ManifestError('"plugins" must be a list')
        metadata = data.get("metadata")
        root = metadata.get("pluginRoot") if isinstance(metadata, dict) else None
        base = folder.resolve()
        listed = tuple(_listed(e, i, base, root) for i, e in enumerate(entries))
    except ManifestError as exc:
        raise ManifestError(f"{path}: {exc}") from None
    return Marketplace(name, base, listed)


def _listed(entry: Any, index: int, base: Path, root: Any) -> ListedPlugin:
    if not isinstance(entry, dict):
        raise ManifestError(f"plugins[{index}] must be an object with name and source")
    name = check_name(entry.get("name"), f"plugins[{index}].name")
    description = entry.get("description") if isinstance(entry.get("description"), str) else None
    source = entry.get("source")
    if isinstance(source, str):
        bare = not source.startswith(".") and isinstance(root, str)
        relative = f"{root}/{source}" if bare else source
        folder = (base / relative).resolve()
        if not folder.is_relative_to(base):
            raise ManifestError(f"plugins[{index}].source {source!r} leaves the marketplace")
        return ListedPlugin(name, folder=folder, description=description)
    if isinstance(source, dict):
        kind = source.get("source")
        if kind == "github" and isinstance(source.get("repo"), str):
            url = f"https://github.com/{source['repo']}.git"
            return ListedPlugin(name, git_url=url, description=description)
        if kind in ("url", "git") and isinstance(source.get("url"), str):
            return ListedPlugin(name, git_url=source["url"], description=description)
    raise ManifestError(
        f"plugins[{index}].source must be a relative path, "
        '{"source": "github", "repo": "owner/name"} or {"source": "url", "url": "…"}'
    )
