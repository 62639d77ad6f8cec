"""Whether a command that failed in the box failed because of it: a write the box refused,
or a connection it cut. Read from the command's output, conservatively: only messages the
box itself produces count, so an ordinary failure never asks the user to let it out.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from agentls.sandbox.box import Sandbox

READ_ONLY_FS = "Read-only file system"
# What programs print when a connection fails because there is no network (no DNS, no
# route, nothing listening on the box's own loopback: in a box nothing else listens there).
NETWORK_SIGNS = (
    "Could not resolve host",
    "Temporary failure in name resolution",
    "Name or service not known",
    "No address associated with hostname",
    "getaddrinfo EAI_AGAIN",
    "getaddrinfo ENOTFOUND",
    "Network is unreachable",
    "Connection refused",
)
# `touch: cannot touch '/x/y': Permission denied`, `bash: /x/y: Permission denied`.
_DENIED_PATH = re.compile(r"['‘\"]?(/[^\s'’\":]+)['’\"]?: Permission denied")


def blamed_on_sandbox(sandbox: Sandbox, output: str, writable: Sequence[Path]) -> str | None:
    """Why the failure printed in `output` looks caused by the box, or None."""
    if not sandbox.confines:
        return None
    if READ_ONLY_FS in output:
        where = "any write" if sandbox.mode == "read-only" else "a write outside the workspace"
        return f'the sandbox ({sandbox.mode}) refused {where} ("{READ_ONLY_FS}")'
    denied = _denied_outside(output, writable)
    if denied is not None:
        return f"the sandbox ({sandbox.mode}) refused access to {denied} (Permission denied)"
    if sandbox.settings.network:
        return None
    sign = next((sign for sign in NETWORK_SIGNS if sign in output), None)
    if sign is not None:
        return f'the sandbox has no network ("{sign}")'
    return None


def _denied_outside(output: str, writable: Sequence[Path]) -> str | None:
    """A path the box denied that lies outside its writable paths and that the daemon's
    own user could write (so outside the box the command would not have been refused)."""
    for match in _DENIED_PATH.finditer(output):
        path = Path(match.group(1))
        if any(path == root or path.is_relative_to(root) for root in writable):
            continue
        if _writable_outside(path):
            return str(path)
    return None


def _writable_outside(path: Path) -> bool:
    existing = next((p for p in (path, *path.parents) if p.exists()), None)
    return existing is not None and os.access(existing, os.W_OK)
