"""The Bash sandbox: bubblewrap (`bwrap`) with the whole file system read-only but the
paths the mode lets a command write, and no network unless allowed.

`workspace-write` (the default where bwrap works) lets commands write the workspace, /tmp
and the paths the user names; `read-only` lets them write nothing; `danger-full-access`
runs them unconfined. A mode the user chose fails closed: when bwrap is missing or cannot
create its namespaces here, every command is refused with the reason, never run
unconfined. Only the default, which nobody chose, falls back to running unconfined, and
says so (`note`).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentls.names import SandboxMode
from agentls.sandbox.settings import NO_BOX, SandboxSettings

PROBE_TIMEOUT_SECONDS = 10
DEFAULT_MODE: SandboxMode = "workspace-write"
# What file tools answer in a read-only session.
READ_ONLY_WRITES = (
    "Refused: this session's sandbox is read-only (the `sandbox.mode` setting), so no file "
    "may be written. Tell the user what you would change; they can switch the mode."
)


@dataclass(frozen=True, slots=True)
class Sandbox:
    """A session's sandbox: the mode in force, how to wrap a command, or why commands
    cannot run (`problem`)."""

    settings: SandboxSettings
    mode: SandboxMode
    bwrap: str | None
    # A chosen box that cannot run here: every command is refused with this.
    problem: str | None = None
    # Why the default box did not apply (commands run unconfined), told to clients once.
    note: str | None = None

    @property
    def confines(self) -> bool:
        """Whether commands run inside bwrap."""
        return self.mode != NO_BOX and self.bwrap is not None

    def wrap(self, argv: Sequence[str], cwd: Path, writable: Sequence[Path]) -> list[str]:
        """`argv` run by bwrap in `cwd`, able to write only to `writable`."""
        if self.bwrap is None:
            raise RuntimeError("wrap() needs a usable bwrap; check `problem` first")
        return bwrap_command(self.bwrap, self.settings.network, argv, cwd, writable)

    def writable_paths(self, cwd: Path, roots: Sequence[Path]) -> list[Path]:
        """The directories a command may write: in workspace-write the workspace roots,
        /tmp and the settings' own; none in read-only (and no box at all in full access)."""
        if self.mode != "workspace-write":
            return []
        named = [cwd / os.path.expanduser(p) for p in self.settings.writable_paths]
        return _existing_unique([*roots, Path("/tmp"), *named])


def prepare_sandbox(settings: SandboxSettings) -> Sandbox:
    """The sandbox a session's Bash runs in, for the mode chosen or the default."""
    if settings.mode == NO_BOX:
        return Sandbox(settings, NO_BOX, None)
    mode = settings.mode or DEFAULT_MODE
    bwrap = shutil.which("bwrap")
    problem = _probe(bwrap, settings.network) if bwrap else "bubblewrap (bwrap) is not installed"
    if problem is None:
        return Sandbox(settings, mode, bwrap)
    if settings.mode is None:
        return Sandbox(settings, NO_BOX, None, note=_fallback(problem))
    return Sandbox(settings, mode, None, problem=_refusal(mode, problem))


def bwrap_command(
    bwrap: str, network: bool, argv: Sequence[str], cwd: Path, writable: Sequence[Path]
) -> list[str]:
    """The bwrap command line: / read-only, `writable` bound read-write, a private /dev and
    /proc, its own pid namespace (everything dies with it), no network unless allowed."""
    command = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for path in writable:
        command += ["--bind", str(path), str(path)]
    if not network:
        command.append("--unshare-net")
    command += ["--unshare-pid", "--die-with-parent", "--chdir", str(cwd), "--", *argv]
    return command


@functools.cache
def _probe(bwrap: str, network: bool) -> str | None:
    """Why bwrap cannot run a command here (containers often forbid user namespaces), or None."""
    command = bwrap_command(bwrap, network, ["true"], Path("/"), [])
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


def _refusal(mode: SandboxMode, reason: str) -> str:
    return (
        f"The Bash sandbox is set to {mode} (the `sandbox` setting) but {reason}, so "
        "commands are not run: install bubblewrap where it can create namespaces, or set "
        "`sandbox.mode` to danger-full-access."
    )


def _fallback(reason: str) -> str:
    return (
        f"Bash runs without a sandbox (danger-full-access): {reason}. Install bubblewrap "
        "where it can create namespaces to confine commands to the workspace, or set "
        "`sandbox.mode` to say which mode you want."
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
    """What clients are told about a session's sandbox (wire spelling); None without one."""
    if sandbox is None:
        return None
    status: dict[str, Any] = {
        "mode": sandbox.mode,
        "active": sandbox.confines,
        "network": sandbox.settings.network or sandbox.mode == NO_BOX,
        "writablePaths": [str(p) for p in sandbox.writable_paths(cwd, roots)],
    }
    if sandbox.problem is not None:
        status["problem"] = sandbox.problem
    if sandbox.note is not None:
        status["note"] = sandbox.note
    return status
