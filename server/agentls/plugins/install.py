"""Installing, enabling and removing plugins and marketplaces (what `agentls plugin` does).

A local folder is referenced where it is, not copied: a plugin being written is used as it
is now by the next session, and its trust is bound to a digest of its files, so an edit
asks again before its hooks run. A git URL is cloned with git into
`$AGENTLS_HOME/plugins/<name>` (marketplaces into `$AGENTLS_HOME/marketplaces/<name>`),
first into a temporary folder: a clone whose manifest is bad leaves nothing behind.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from agentls.plugins.manifest import ManifestError, PluginManifest, manifest_path, read_manifest
from agentls.plugins.marketplace import Marketplace, marketplace_path, read_marketplace
from agentls.plugins.state import Installed, MarketplaceEntry, PluginState

GIT_PREFIXES = ("https://", "http://", "git@", "ssh://", "git://", "file://")


class PluginError(ValueError):
    """What `agentls plugin` reports and exits on; one line."""


def is_git_url(spec: str) -> bool:
    return spec.startswith(GIT_PREFIXES) or (spec.endswith(".git") and not Path(spec).exists())


def add(home: Path, spec: str) -> str:
    """Install a plugin (folder, git URL, or `name@marketplace`), or add a marketplace when
    the folder or repository holds a marketplace.json and no plugin.json."""
    if is_git_url(spec):
        return _add_clone(home, spec)
    folder = Path(spec).expanduser()
    if folder.is_dir():
        if manifest_path(folder) is None and marketplace_path(folder) is not None:
            return add_marketplace(home, spec)
        manifest = read_manifest(folder)
        return _install(home, manifest, str(manifest.folder), cloned=False)
    name, at, market = spec.partition("@")
    if at:
        return _add_listed(home, name, market)
    raise PluginError(f"{spec}: not a folder, a git URL or name@marketplace")


def add_marketplace(home: Path, spec: str) -> str:
    state = PluginState.read(home)
    if is_git_url(spec):
        with _cloned(home, spec) as clone:
            market = read_marketplace(clone)
            _check_new(market.name, state.marketplaces, "marketplace")
            target = _move_in(clone, home / "marketplaces" / market.name)
        state.marketplaces[market.name] = MarketplaceEntry(str(target), spec, cloned=True)
    else:
        market = read_marketplace(Path(spec).expanduser())
        _check_new(market.name, state.marketplaces, "marketplace")
        state.marketplaces[market.name] = MarketplaceEntry(str(market.folder), spec)
    state.write(home)
    names = ", ".join(p.name for p in market.plugins) or "none"
    return f"added marketplace {market.name} (plugins: {names})"


def remove_marketplace(home: Path, name: str) -> str:
    state = PluginState.read(home)
    entry = state.marketplaces.pop(name, None)
    if entry is None:
        raise PluginError(f"no marketplace named {name}")
    state.write(home)
    if entry.cloned:
        shutil.rmtree(entry.path, ignore_errors=True)
    return f"removed marketplace {name}"


def set_enabled(home: Path, name: str, enabled: bool) -> str:
    state = PluginState.read(home)
    entry = state.plugins.get(name)
    if entry is None:
        raise PluginError(f"no plugin named {name} (see `agentls plugin list`)")
    state.plugins[name] = replace(entry, enabled=enabled)
    state.write(home)
    return f"{'enabled' if enabled else 'disabled'} {name}"


def remove(home: Path, name: str) -> str:
    state = PluginState.read(home)
    entry = state.plugins.pop(name, None)
    if entry is None:
        raise PluginError(f"no plugin named {name} (see `agentls plugin list`)")
    state.write(home)
    if entry.cloned:
        shutil.rmtree(entry.path, ignore_errors=True)
    return f"removed {name}"


def marketplaces(home: Path) -> list[Marketplace]:
    """The marketplaces added (one whose file went bad is left out)."""
    found = []
    for entry in PluginState.read(home).marketplaces.values():
        try:
            found.append(read_marketplace(Path(entry.path)))
        except ManifestError:
            continue
    return found


def _add_listed(home: Path, name: str, market_name: str) -> str:
    entry = PluginState.read(home).marketplaces.get(market_name)
    if entry is None:
        raise PluginError(f"no marketplace named {market_name} (add it first)")
    listed = read_marketplace(Path(entry.path)).find(name)
    if listed is None:
        raise PluginError(f"marketplace {market_name} lists no plugin named {name}")
    spec = f"{name}@{market_name}"
    if listed.git_url is not None:
        return _add_clone(home, listed.git_url, spec)
    assert listed.folder is not None
    return _install(home, read_manifest(listed.folder), spec, cloned=False)


def _add_clone(home: Path, url: str, source: str | None = None) -> str:
    with _cloned(home, url) as clone:
        if manifest_path(clone) is None and marketplace_path(clone) is not None:
            return add_marketplace(home, url)
        manifest = read_manifest(clone)
        _check_new(manifest.name, PluginState.read(home).plugins, "plugin")
        target = _move_in(clone, home / "plugins" / manifest.name)
    return _install(home, read_manifest(target), source or url, cloned=True)


def _install(home: Path, manifest: PluginManifest, source: str, cloned: bool) -> str:
    state = PluginState.read(home)
    _check_new(manifest.name, state.plugins, "plugin")
    state.plugins[manifest.name] = Installed(str(manifest.folder), source, True, cloned)
    state.write(home)
    version = f" {manifest.version}" if manifest.version else ""
    return f"installed {manifest.name}{version} from {source} (enabled)"


def _check_new(name: str, known: Mapping[str, object], kind: str) -> None:
    if name in known:
        raise PluginError(f"a {kind} named {name} is already installed (remove it first)")


class _cloned:
    """A temporary clone of `url` under `home` (gone on exit unless moved away)."""

    def __init__(self, home: Path, url: str) -> None:
        self.home, self.url = home, url
        self.folder: Path | None = None

    def __enter__(self) -> Path:
        self.home.mkdir(parents=True, exist_ok=True)
        self.folder = Path(tempfile.mkdtemp(prefix=".plugin-clone-", dir=self.home))
        clone = self.folder / "repo"
        env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
        done = subprocess.run(
            ["git", "clone", "--quiet", "--depth", "1", self.url, str(clone)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        if done.returncode != 0:
            self.__exit__()
            last = (done.stderr.strip().splitlines() or ["git clone failed"])[-1]
            raise PluginError(f"{self.url}: {last}")
        return clone

    def __exit__(self, *_exc: object) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def _move_in(clone: Path, target: Path) -> Path:
    if target.exists():
        raise PluginError(f"{target} already exists (remove it first)")
    target.parent.mkdir(parents=True, exist_ok=True)
    clone.rename(target)
    return target.resolve()
