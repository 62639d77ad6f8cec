"""The per-user daemon's private Unix socket: its name, reaching it, and claiming it.

Shared by the warm `agentls run` (agentls.warm) and the editors' relay (agentls.relay),
which both reach the daemon serving this environment, starting it when none answers, and
by the daemon itself (`agentls --socket PATH`), which claims the socket before anything
heavy is imported. Standard library only, and nothing heavy: clients run this at every
start, and an editor waits for it. Hence `_socket`, not `socket` (which loads enum), and
no json (which loads re): a few milliseconds of every editor start.
"""

from __future__ import annotations

import os
import sys
import time
import zlib
from _socket import AF_UNIX, SOCK_STREAM, socket

from agentls import __version__, runtime_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess

# The daemon reads its settings (keys, base URLs, AGENTLS_*) from its environment, so
# each distinct set of them gets its own daemon: they are hashed into the socket's name.
ENV_PREFIXES = ("AGENTLS_", "ANTHROPIC_", "OPENAI_", "AZURE_")
# Also hashed: where sessions live (HOME, XDG_DATA_HOME), what the daemon imports
# (VIRTUAL_ENV, PYTHONPATH, PYTHONHOME: with the interpreter and version, another agentls
# is never reused), and PATH. The daemon's commands (Bash, hooks, MCP servers) run in its
# environment, which is its first client's; an editor started with another PATH would see
# them find other programs. Hashing PATH gives that editor a daemon of its own, which costs
# one cold start per distinct PATH (editors started from one desktop session share one);
# passing each connection's environment down to every command instead would thread it
# through sessions and tools, and still leave a session shared by two windows to pick one.
ENV_NAMES = ("HOME", "XDG_DATA_HOME", "VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PATH")
# AF_UNIX paths are at most 107 bytes on Linux (sun_path is 108 with its NUL).
MAX_PATH = 107
START_TIMEOUT = 20.0
# How often a starting daemon's socket is tried: the connect itself costs microseconds.
POLL = 0.005
# How long a starting daemon waits for one that is exiting to let go of the socket.
CLAIM_WAIT = 2.0


class Unavailable(Exception):
    """No daemon could be reached or started; the caller works in its own process."""


def socket_path(env: dict[str, str]) -> str:
    """The daemon socket for this user, agentls version, interpreter and environment."""
    relevant = sorted(
        (k, v) for k, v in env.items() if k.startswith(ENV_PREFIXES) or k in ENV_NAMES
    )
    key = repr([__version__, sys.executable, relevant]).encode("utf-8", "surrogateescape")
    # A name, not a secret: the folder is private. 64 bits keep environments apart.
    name = f"{zlib.crc32(key):08x}{zlib.adler32(key):08x}.sock"
    return os.path.join(private_dir(), name)


def private_dir() -> str:
    """A folder only this user can enter (sockets there are unreachable to others)."""
    try:
        return runtime_dir.private_dir()
    except (runtime_dir.NotPrivate, OSError) as exc:
        raise Unavailable(str(exc)) from None


def log_path(path: str) -> str:
    """Where the daemon serving `path` writes its stderr."""
    return path.removesuffix(".sock") + ".log"


def open_socket(env: dict[str, str]) -> socket:
    """A connected socket to this environment's daemon, started if none answers."""
    path = socket_path(env)
    if len(os.fsencode(path)) > MAX_PATH:
        raise Unavailable(f"the socket path {path} is too long for a Unix socket")
    sock = try_connect(path)
    if sock is not None:
        return sock
    daemon = _start(path, env)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        sock = try_connect(path)
        if sock is not None:
            return sock
        code = daemon.poll()
        if code is not None:
            # It lost a race to another daemon starting at once, which will answer soon;
            # any other failure is final (its log says why).
            sock = _wait_for_winner(path, deadline)
            if sock is not None:
                return sock
            raise Unavailable(f"the daemon exited with code {code} (see {log_path(path)})")
        time.sleep(POLL)
    raise Unavailable(f"the daemon did not start on {path} (see {log_path(path)})")


def try_connect(path: str) -> socket | None:
    """A socket connected to `path`, or None when nothing accepts there."""
    sock = socket(AF_UNIX, SOCK_STREAM)
    try:
        sock.connect(path)
        return sock
    except OSError:
        sock.close()
        return None


def _wait_for_winner(path: str, deadline: float) -> socket | None:
    while claimed(path) and time.monotonic() < deadline:
        sock = try_connect(path)
        if sock is not None:
            return sock
        time.sleep(POLL)
    return try_connect(path)


def _start(path: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    import subprocess

    idle = env.get("AGENTLS_DAEMON_IDLE", "600")
    with open(log_path(path), "ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "agentls", "--socket", path, "--idle-timeout", idle],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            env=env,
            # Nothing of the daemon depends on where its first client stood: each
            # connection brings its workspace (initialize) and its relay's cwd.
            cwd="/",
            start_new_session=True,
        )


def claim(path: str) -> int | None:
    """Hold the socket's lock for as long as this process lives: its fd, or None when
    another live daemon holds it. Taken before the daemon imports anything heavy, so two
    daemons started at once never both bind (the loser exits; its client finds the
    winner). The kernel lets go of a dead daemon's lock, so a stale socket never blocks.
    OSError when the lock cannot be made."""
    import fcntl

    os.makedirs(os.path.dirname(path) or ".", mode=0o700, exist_ok=True)
    fd = os.open(path + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + CLAIM_WAIT
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            # A daemon that is exiting (idle) holds it a moment longer than its socket.
            if time.monotonic() >= deadline or try_connect_closed(path):
                os.close(fd)
                return None
            time.sleep(POLL)


def try_connect_closed(path: str) -> bool:
    """Whether a daemon accepts on `path` (the probe connection is closed at once)."""
    sock = try_connect(path)
    if sock is None:
        return False
    sock.close()
    return True


def claimed(path: str) -> bool:
    """Whether a live daemon holds (or is taking) the socket's lock."""
    import fcntl

    try:
        fd = os.open(path + ".lock", os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
