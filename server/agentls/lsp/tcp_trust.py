"""Who may use the TCP daemon: the holder of its token, found in a file only the user reads.

Any local process (and any web page, through the browser) can open a TCP connection to
127.0.0.1, and an initialized connection is the user: it may start MCP servers and run
commands. So every TCP daemon has a token of 256 random bits (or one read from
`--token-file`, never from the command line, where `ps` shows it), written with the host,
port and pid to `tcp-<pid>.json` in the user's private runtime folder (0700, owner
checked; the file 0600), and removed when the daemon ends. A client reads it and presents
the token in `initialize` as `initializationOptions.authToken`.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import secrets
import socket
import stat
from pathlib import Path

from agentls.runtime_dir import NotPrivate, private_dir

TOKEN_BYTES = 32
# A token file's token: long enough to be unguessable, printable ASCII so JSON carries it.
MIN_TOKEN_CHARS = 32


class TrustError(Exception):
    """A TCP setting that would let others in (or a token that cannot be used)."""


def new_token() -> str:
    """256 random bits as 64 hex digits."""
    return secrets.token_hex(TOKEN_BYTES)


def read_token_file(path: Path) -> str:
    """The token in `path` (surrounding whitespace dropped); the file must be the user's alone."""
    try:
        info = path.stat()
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise TrustError(f"cannot read the token file {path}: {exc}") from None
    if info.st_mode & 0o077:
        raise TrustError(f"the token file {path} is readable by others (chmod 600 it)")
    if len(text) < MIN_TOKEN_CHARS or not all("!" <= c <= "~" for c in text):
        raise TrustError(
            f"the token in {path} must be at least {MIN_TOKEN_CHARS} printable ASCII "
            "characters without spaces"
        )
    return text


def check_host(host: str, allow_remote: bool) -> None:
    """TrustError for an address beyond this machine, unless remote clients were allowed."""
    if allow_remote or _is_loopback(host):
        return
    raise TrustError(
        f"--host {host or '(all interfaces)'} is reachable from other machines; "
        "pass --allow-remote to serve there (the token is still required)"
    )


def _is_loopback(host: str) -> bool:
    if not host:
        return False
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except OSError:
        return False
    addresses = {info[4][0] for info in found}
    return bool(addresses) and all(ipaddress.ip_address(a).is_loopback for a in addresses)


def discovery_path(pid: int | None = None) -> Path:
    """Where the daemon with this pid (default: this process) describes itself."""
    try:
        folder = private_dir()
    except NotPrivate as exc:
        raise TrustError(f"{exc}: the token cannot be written there") from None
    return Path(folder) / f"tcp-{os.getpid() if pid is None else pid}.json"


def write_discovery(host: str, port: int, token: str) -> Path:
    """Write `{host, port, pid, token}` atomically, readable by the user only; its path."""
    path = discovery_path()
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    content = json.dumps({"host": host, "port": port, "pid": os.getpid(), "token": token})
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IRUSR | stat.S_IWUSR)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(content + "\n")
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return path


def remove_discovery(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
