"""The optional Bash sandbox: bubblewrap (`bwrap`) with the whole file system read-only but
the workspace, /tmp and the paths the user names, and no network unless allowed.

Off by default (`sandbox.enabled`). When it is on and bwrap is missing or cannot create its
namespaces here, Bash fails closed: every command is refused with the reason, never run
unconfined, so turning the sandbox on can only take power away.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROBE_TIMEOUT_SECONDS = 10
_KEYS = frozenset({"enabled", "network", "writablePaths"})


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    """The `sandbox` setting: whether Bash runs confined, with network, and where it writes."""

    enabled: bool = False
    network: bool = False
    # Writable besides the workspace roots and /tmp (relative to the session's cwd, or ~/).
    writable_paths: tuple[str, ...] = ()


def parse_sandbox(value: Any) -> SandboxSettings:
    """`{enabled, network, writablePaths}` as settings spell it; ValueError says what is wrong."""
    if not isinstance(value, Mapping):
        raise ValueError("must be an object {enabled, network, writablePaths}")
    unknown = set(value) - _KEYS
    if unknown:
        raise ValueError(f"has unknown keys {', '.join(sorted(unknown))}")
    enabled, network = value.get("enabled", False), value.get("network", False)
    if not isinstance(enabled, bool) or not isinstance(network, bool):
        raise ValueError("enabled and network must be true or false")
    paths = value.get("writablePaths", [])
    if not isinstance(paths, list) or not all(isinstance(p, str) and p for p in paths):
        raise ValueError("writablePaths must be a list of paths")
    return SandboxSettings(enabled, network, tuple(paths))


@dataclass(frozen=True, slots=True)
class Sandbox:
    """A session's sandbox: how to wrap a command, or why commands cannot run (`problem`)."""

    settings: SandboxSettings
    bwrap: str | None
    problem: str | None

    def wrap(self, argv: Sequence[str], cwd: Path, writable: Sequence[Path]) -> list[str]:
        """`argv` run by bwrap in `cwd`, able to write only to `writable`."""
        if self.bwrap is None:
            raise RuntimeError("wrap() needs a usable bwrap; check `problem` first")
        return bwrap_command(self.bwrap, self.settings, argv, cwd, writable)

    def writable_paths(self, cwd: Path, roots: Sequence[Path]) -> list[Path]:
        """The directories a command may write: the workspace roots, /tmp, the settings' own."""
        named = [cwd / os.path.expanduser(p) for p in self.settings.writable_paths]
        return _existing_unique([*roots, Path("/tmp"), *named])


def prepare_sandbox(settings: SandboxSettings) -> Sandbox | None:
    """The sandbox a session's Bash runs in; None when the setting leaves it off."""
    if not settings.enabled:
        return None
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return Sandbox(settings, None, _refusal("bubblewrap (bwrap) is not installed"))
    problem = _probe(bwrap, settings.network)
    return Sandbox(settings, None if problem else bwrap, _refusal(problem) if problem else None)


def bwrap_command(
    bwrap: str, settings: SandboxSettings, argv: Sequence[str], cwd: Path, writable: Sequence[Path]
) -> list[str]:
    """The bwrap command line: / read-only, `writable` bound read-write, a private /dev and
    /proc, its own pid namespace (everything dies with it), no network unless allowed."""
    command = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for path in writable:
        command += ["--bind", str(path), str(path)]
    if not settings.network:
        command.append("--unshare-net")
    command += ["--unshare-pid", "--die-with-parent", "--chdir", str(cwd), "--", *argv]
    return command


@functools.cache
def _probe(bwrap: str, network: bool) -> str | None:
    """Why bwrap cannot run a command here (containers often forbid user namespaces), or None."""
    command = bwrap_command(bwrap, SandboxSettings(True, network), ["true"], Path("/"), [])
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=PROBE_TIMEOUT_SECONDS, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap cannot run here ({exc})"
    if done.returncode != 0:
        detail = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        return f"bwrap cannot create its sandbox here ({detail[0]})"
    return None


def _refusal(reason: str) -> str:
    return (
        f"The Bash sandbox is enabled (the `sandbox.enabled` setting) but {reason}, so "
        "commands are not run: install bubblewrap where it can create namespaces, or turn "
        "the sandbox off."
    )


def _existing_unique(paths: Sequence[Path]) -> list[Path]:
    """The directories that exist (bwrap cannot bind a missing one), real, each once."""
    seen: dict[Path, None] = {}
    for path in paths:
        real = Path(os.path.realpath(path))
        if real.is_dir():
            seen.setdefault(real, None)
    # Parents first: a later bind of a parent would cover the binds made inside it.
    return sorted(seen, key=lambda path: len(path.parts))


def sandbox_status(
    sandbox: Sandbox | None, cwd: Path, roots: Sequence[Path]
) -> dict[str, Any] | None:
    """What clients are told about a session's sandbox (wire spelling); None when it is off."""
    if sandbox is None:
        return None
    status: dict[str, Any] = {
        "active": sandbox.problem is None,
        "network": sandbox.settings.network,
        "writablePaths": [str(p) for p in sandbox.writable_paths(cwd, roots)],
    }
    if sandbox.problem is not None:
        status["problem"] = sandbox.problem
    return status
