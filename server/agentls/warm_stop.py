"""`agentls stop`: end the warm daemons `agentls run` left behind, before their idle timeout.

Each daemon listens on a socket in the user's private folder (see agentls.warm); the
kernel names the process behind a socket (SO_PEERCRED), which gets SIGTERM: its turns are
aborted and recorded, its commands killed, its socket removed, as at any SIGTERM.
"""

from __future__ import annotations

import os
import signal
import socket
import struct
import time

from agentls import runtime_dir

# How long to wait for a daemon to remove its socket after SIGTERM.
STOP_WAIT = 10.0


def daemon_pid(path: str) -> int | None:
    """The pid of the process serving the socket at `path`, or None when none does."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(1.0)
        probe.connect(path)
        credentials = probe.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
    except OSError:
        return None
    finally:
        probe.close()
    pid, uid, _gid = struct.unpack("3i", credentials)
    # The folder is private, but make sure: only the user's own daemons are stopped.
    return pid if uid == os.getuid() else None


def stop_daemons() -> list[int]:
    """SIGTERM every warm daemon of this user and wait for each to go; their pids."""
    try:
        folder = runtime_dir.private_dir()
    except runtime_dir.NotPrivate:
        return []
    stopped: list[tuple[int, str]] = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        pid = daemon_pid(path) if name.endswith(".sock") else None
        if pid is None:
            continue
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
        stopped.append((pid, path))
    deadline = time.monotonic() + STOP_WAIT
    while time.monotonic() < deadline and any(os.path.exists(p) for _pid, p in stopped):
        time.sleep(0.05)
    return [pid for pid, _path in stopped]
