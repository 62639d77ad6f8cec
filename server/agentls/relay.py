"""`agentls --stdio` as editors start it: a byte relay to the per-user daemon.

Spawning a fresh daemon per editor window pays for pygls, lsprotocol and the core at
every start (about a second). Instead this process reaches the daemon that already serves
this environment over its private Unix socket (agentls.daemon_socket; started when none
answers) and copies bytes both ways between stdin/stdout and the socket. The daemon serves
the socket's connection as its own editor (its capabilities, buffers and editor state), so
the editor cannot tell the difference.

The relay's first frame is an `agent/clientContext` notification carrying its working
directory: the daemon's own is "/", and a connection whose `initialize` names no
workspace takes this one, as the in-process server would take its own.

How the relay ends follows the in-process server: stdin closing half-closes the socket and
the relay still passes on what the daemon sends (the turns' ends) until it closes; an
`exit` ends the connection (never the daemon) and the relay with 0 after `shutdown`, else
1; the daemon closing the connection otherwise is exit 1. Killing the relay closes its
connection, which the daemon ends as any other.

Standard library only, no asyncio, and none of what `socket` and `json` load (enum, re):
an editor waits for this to start.
"""

from __future__ import annotations

import errno
import os
import select
import stat
import sys
from _socket import SHUT_WR, socket

from agentls import daemon_socket

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

CLIENT_CONTEXT = "agent/clientContext"
CHUNK = 1 << 16
# Bytes waiting for a slow reader before the relay stops reading the other side (the
# daemon then buffers for a slow editor, as it does on any connection).
HIGH_WATER = 1 << 20
EXIT_OK, EXIT_FAILED = 0, 1


def relay_stdio(env: dict[str, str]) -> int | None:
    """Serve the editor on stdio through the daemon; None when no daemon can be had (the
    caller serves in this process; the reason is one line on stderr)."""
    try:
        sock = daemon_socket.open_socket(env)
    except daemon_socket.Unavailable as exc:
        sys.stderr.write(f"agentls: no daemon ({exc}); serving in this process\n")
        sys.stderr.flush()
        return None

    def reconnect() -> socket | None:
        try:
            return daemon_socket.open_socket(env)
        except daemon_socket.Unavailable as exc:
            sys.stderr.write(f"agentls: no daemon to reconnect to ({exc})\n")
            return None

    relay = Relay(sock, sys.stdin.fileno(), sys.stdout.fileno(), reconnect)
    cwd = _cwd()
    if cwd is not None:
        relay.send(client_context_frame(cwd))
    return relay.run()


def _cwd() -> str | None:
    """This process's working directory; None when it was deleted since (none to offer)."""
    try:
        return os.getcwd()
    except OSError:
        return None


def client_context_frame(cwd: str) -> bytes:
    """The `agent/clientContext` notification that opens a relayed connection."""
    params = f'{{"cwd":{json_string(cwd)},"pid":{os.getpid()}}}'
    body = f'{{"jsonrpc":"2.0","method":"{CLIENT_CONTEXT}","params":{params}}}'.encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def json_string(text: str) -> str:
    """`text` as an ASCII JSON string, as json.dumps writes it (without loading json, which
    loads re). A path's undecodable bytes, which Python holds as lone surrogates, come out
    as such, and the daemon refuses them as it refuses any text that is not Unicode."""
    parts = []
    for ch in text:
        code = ord(ch)
        if 0x20 <= code < 0x7F and ch not in '"\\':
            parts.append(ch)
        elif code < 0x10000:
            parts.append(f"\\u{code:04x}")
        else:
            code -= 0x10000
            parts.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
    return '"' + "".join(parts) + '"'


class Lifecycle:
    """Watches the editor's messages for `shutdown` and `exit`, which decide the exit code."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self.shutdown = False
        self.exit = False

    def feed(self, data: bytes) -> None:
        self._buffer += data
        while True:
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            length = _content_length(bytes(self._buffer[:end]))
            if len(self._buffer) < end + 4 + length:
                return
            body = bytes(self._buffer[end + 4 : end + 4 + length])
            del self._buffer[: end + 4 + length]
            # Only a body that may name them is parsed: didChange floods stay cheap.
            if b"shutdown" in body or b"exit" in body:
                self._note(body)

    def _note(self, body: bytes) -> None:
        import json

        try:
            method = json.loads(body).get("method")
        except (ValueError, AttributeError):
            return
        self.shutdown = self.shutdown or method == "shutdown"
        self.exit = self.exit or method == "exit"

    def code(self) -> int:
        """The exit code LSP asks for: 1 for an `exit` that came without `shutdown`."""
        return EXIT_FAILED if self.exit and not self.shutdown else EXIT_OK


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length" and value.strip().isdigit():
            return int(value)
    # A malformed header: the daemon answers it; nothing here to watch for.
    return 0


class Relay:
    """Copies stdin → socket and socket → stdout until the connection ends."""

    def __init__(
        self, sock: socket, stdin: int, stdout: int, reconnect: Callable[[], socket | None]
    ) -> None:
        self._sock = sock
        self._stdin = stdin
        self._stdout = stdout
        self._to_daemon = bytearray()
        self._to_editor = bytearray()
        self._stdin_open = True
        self._daemon_open = True
        self._half_closed = False
        self.lifecycle = Lifecycle()
        # A daemon that closes the connection before sending a byte (it was exiting, idle
        # or stopped, just as this relay connected) has answered nothing: once, another is
        # reached and sent all again. Until its first byte, what it was sent is kept.
        self._reconnect: Callable[[], socket | None] | None = reconnect
        self._unanswered: bytearray | None = bytearray()

    def send(self, data: bytes) -> None:
        """Queue bytes for the daemon (sent as the socket takes them)."""
        self._to_daemon += data

    def run(self) -> int:
        """Relay until the daemon closes the connection (or the editor stops reading)."""
        restore = [_nonblocking(fd) for fd in (self._stdin, self._stdout)]
        self._sock.setblocking(False)
        try:
            return self._pump()
        finally:
            self._sock.close()
            for fd, flags in zip((self._stdin, self._stdout), restore, strict=True):
                if flags is not None:
                    _set_flags(fd, flags)

    def _pump(self) -> int:
        while self._daemon_open or self._to_editor:
            sock = self._sock.fileno()
            readers, writers = [], []
            if self._stdin_open and len(self._to_daemon) < HIGH_WATER:
                readers.append(self._stdin)
            if self._daemon_open and len(self._to_editor) < HIGH_WATER:
                readers.append(sock)
            if self._to_daemon and self._daemon_open:
                writers.append(sock)
            if self._to_editor:
                writers.append(self._stdout)
            readable, writable, _ = select.select(readers, writers, [])
            if self._stdin in readable:
                self._from_editor()
            if sock in readable:
                self._from_daemon()
            if sock in writable:
                self._to_daemon_some()
            if self._stdout in writable and not self._to_editor_some():
                # The editor is gone: closing the socket ends the connection.
                return EXIT_FAILED
            self._half_close_when_drained()
        return self._ending_code()

    def _ending_code(self) -> int:
        if self.lifecycle.exit or not self._stdin_open:
            return self.lifecycle.code()
        sys.stderr.write("agentls: the daemon closed the connection\n")
        return EXIT_FAILED

    def _from_editor(self) -> None:
        try:
            data = os.read(self._stdin, CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._stdin_open = False
            return
        self.lifecycle.feed(data)
        self._to_daemon += data

    def _from_daemon(self) -> None:
        try:
            data = self._sock.recv(CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._daemon_gone()
            return
        self._unanswered = self._reconnect = None
        self._to_editor += data

    def _daemon_gone(self) -> None:
        """The daemon closed the connection: replaced if it never answered, else the end."""
        reconnect, self._reconnect = self._reconnect, None
        sock = reconnect() if reconnect is not None and self._unanswered is not None else None
        if sock is None:
            self._daemon_open = False
            return
        self._sock.close()
        sock.setblocking(False)
        self._sock = sock
        assert self._unanswered is not None
        self._to_daemon[:0] = self._unanswered
        self._unanswered = None
        self._half_closed = False

    def _to_daemon_some(self) -> None:
        try:
            sent = self._sock.send(self._to_daemon)
        except BlockingIOError:
            return
        except OSError:
            # The daemon went away; what it sent before is still passed on.
            self._daemon_gone()
            return
        if self._unanswered is not None:
            self._unanswered += self._to_daemon[:sent]
        del self._to_daemon[:sent]

    def _to_editor_some(self) -> bool:
        """Write what stdout takes now; False when the editor closed it."""
        try:
            written = os.write(self._stdout, self._to_editor)
        except BlockingIOError:
            return True
        except OSError as exc:
            if exc.errno in (errno.EPIPE, errno.EBADF, errno.EIO):
                return False
            raise
        del self._to_editor[:written]
        return True

    def _half_close_when_drained(self) -> None:
        """stdin ended: once its last bytes are sent, the daemon hears EOF (it ends the
        connection's turns and sends their ends, which still come through)."""
        if self._stdin_open or self._to_daemon or self._half_closed or not self._daemon_open:
            return
        self._half_closed = True
        try:
            self._sock.shutdown(SHUT_WR)
        except OSError:
            self._daemon_open = False


def _nonblocking(fd: int) -> int | None:
    """Make a pipe or socket non-blocking; its old flags, or None when left alone (a
    terminal or a file, whose flags other processes share)."""
    import fcntl

    mode = os.fstat(fd).st_mode
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        return None
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    return flags


def _set_flags(fd: int, flags: int) -> None:
    import fcntl

    try:
        fcntl.fcntl(fd, fcntl.F_SETFL, flags)
    except OSError:
        return
