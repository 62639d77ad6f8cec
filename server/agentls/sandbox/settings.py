"""The `sandbox` setting: which mode Bash runs in (as Codex names them), its network and the
paths it may write besides the workspace.

Layers merge key by key, so `agentls run --sandbox read-only` changes the mode and keeps
the `writablePaths` a settings file gave. The older `enabled` key still works: `true` is
`workspace-write`, `false` is `danger-full-access`, unless the same layer names a `mode`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from agentls.names import SANDBOX_MODES, SandboxMode

# What a box mode is without bwrap: commands run unconfined.
NO_BOX: SandboxMode = "danger-full-access"
_KEYS = frozenset({"mode", "enabled", "network", "writablePaths"})


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    """The `sandbox` setting as the layers left it."""

    # None: nobody chose, so the default applies (workspace-write where bwrap works).
    mode: SandboxMode | None = None
    network: bool = False
    # Writable besides the workspace roots and /tmp (relative to the session's cwd, or ~/).
    writable_paths: tuple[str, ...] = ()


def parse_sandbox(value: Any, base: SandboxSettings | None = None) -> SandboxSettings:
    """`base` updated by `{mode, enabled, network, writablePaths}` as a layer spells them;
    ValueError says what is wrong (and nothing of the layer is taken)."""
    if not isinstance(value, Mapping):
        raise ValueError("must be an object {mode, network, writablePaths}")
    unknown = set(value) - _KEYS
    if unknown:
        raise ValueError(f"has unknown keys {', '.join(sorted(unknown))}")
    changes: dict[str, Any] = {}
    mode = _mode(value)
    if mode is not None:
        changes["mode"] = mode
    if "network" in value:
        if not isinstance(value["network"], bool):
            raise ValueError("network must be true or false")
        changes["network"] = value["network"]
    if "writablePaths" in value:
        paths = value["writablePaths"]
        if not isinstance(paths, list) or not all(isinstance(p, str) and p for p in paths):
            raise ValueError("writablePaths must be a list of paths")
        changes["writable_paths"] = tuple(paths)
    return replace(base or SandboxSettings(), **changes)


def _mode(value: Mapping[str, Any]) -> SandboxMode | None:
    """The layer's mode: `mode`, else what `enabled` stood for; None when it names neither."""
    enabled = value.get("enabled")
    if "enabled" in value and not isinstance(enabled, bool):
        raise ValueError("enabled must be true or false")
    if "mode" in value:
        mode = value["mode"]
        if mode not in SANDBOX_MODES:
            raise ValueError(f"mode must be one of {', '.join(SANDBOX_MODES)}")
        chosen: SandboxMode = mode
        return chosen
    if enabled is None:
        return None
    return "workspace-write" if enabled else NO_BOX
