"""The user's private runtime folder: where the warm daemon's sockets and the TCP daemon's
discovery files live, so that no other user can reach or read them.

Standard library `os` only: the warm `agentls run` imports this at every start.
"""

from __future__ import annotations

import os
import stat


class NotPrivate(Exception):
    """The runtime folder exists but another user owns it or may enter it."""


def private_dir() -> str:
    """`${XDG_RUNTIME_DIR or TMPDIR or /tmp}/agentls-<uid>`, made 0700; checked to be ours."""
    base = os.environ.get("XDG_RUNTIME_DIR") or os.environ.get("TMPDIR") or "/tmp"
    folder = os.path.join(base, f"agentls-{os.getuid()}")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    # lstat: a symlink planted by someone else is refused, not followed.
    info = os.lstat(folder)
    if info.st_uid != os.getuid() or info.st_mode & 0o077 or not stat.S_ISDIR(info.st_mode):
        raise NotPrivate(f"{folder} is not private to this user")
    return folder
