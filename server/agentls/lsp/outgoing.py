"""Bytes to a client without ever blocking the daemon: a slow reader slows only itself.

pygls writes stdout with a blocking `write` and `flush` on the event loop, so an editor that
stopped reading (a pause, a breakpoint, a busy UI thread) froze every session, timer and
signal handler of the daemon as soon as the pipe was full. Here every connection writes
through an asyncio transport (a write-pipe transport for stdout, the socket's own for TCP
and the Unix socket): what the reader cannot take yet waits in that connection's buffer
and goes out, in order, as it catches up.

A reader that never comes back must not take all memory. Past `unread_limit()` bytes
waiting (`AGENTLS_UNREAD_LIMIT_MB`, default 64 MiB) the connection is dropped with one log
line, as if the client had gone: over stdio the daemon then ends as on EOF (turns aborted
and recorded, so every session can be resumed), over a socket only that connection ends.
A cap rather than pausing the producer: a session's events go to every window attached to
it, so pausing the session for one stalled window would stall the others, and a turn
paused mid-stream would keep its model stream and commands hanging. Events are small (a
busy turn sends tens of KiB a second), so only a reader that is gone in all but name
reaches the cap.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import time
from collections.abc import Callable
from typing import BinaryIO, Final

log = logging.getLogger(__name__)

DEFAULT_UNREAD_LIMIT_MB: Final = 64
# Past this much waiting, the slow reader is logged once (until it has caught up).
BEHIND_BYTES: Final = 1024 * 1024


def unread_limit(environ: dict[str, str] | os._Environ[str] = os.environ) -> int:
    """Bytes a connection may leave unread before it is dropped (AGENTLS_UNREAD_LIMIT_MB)."""
    raw = environ.get("AGENTLS_UNREAD_LIMIT_MB", "")
    try:
        megabytes = float(raw) if raw else DEFAULT_UNREAD_LIMIT_MB
    except ValueError:
        megabytes = DEFAULT_UNREAD_LIMIT_MB
        log.warning("AGENTLS_UNREAD_LIMIT_MB=%r is not a number: %d used", raw, megabytes)
    return max(1, int(megabytes * 1024 * 1024))


class OutgoingWriter:
    """pygls's synchronous `Writer` over an asyncio transport: `write` never waits."""

    def __init__(
        self,
        transport: asyncio.WriteTransport,
        limit: int,
        on_overflow: Callable[[], None] = lambda: None,
    ) -> None:
        self._transport = transport
        self._on_overflow = on_overflow
        self._limit = limit
        self._behind_since: float | None = None
        self.dropped = False

    @property
    def waiting(self) -> int:
        """Bytes written but not yet taken by the reader."""
        return self._transport.get_write_buffer_size()

    def write(self, data: bytes) -> None:
        if self.dropped or self._transport.is_closing():
            return
        self._transport.write(data)
        waiting = self._transport.get_write_buffer_size()
        if waiting > self._limit:
            self._drop(waiting)
        elif waiting > BEHIND_BYTES and self._behind_since is None:
            self._behind_since = time.monotonic()
            log.warning("the client is not reading: %d KiB of output wait for it", waiting >> 10)
        elif waiting == 0 and self._behind_since is not None:
            log.info("the client caught up after %.1f s", time.monotonic() - self._behind_since)
            self._behind_since = None

    def _drop(self, waiting: int) -> None:
        self.dropped = True
        log.error(
            "the client left %d MiB of output unread (limit %d MiB, AGENTLS_UNREAD_LIMIT_MB): "
            "closing its connection",
            waiting >> 20,
            self._limit >> 20,
        )
        self._transport.abort()
        self._on_overflow()

    def close(self) -> None:
        """Close once everything written has been sent (the transport flushes first)."""
        self._transport.close()

    async def flushed(self, timeout: float) -> bool:
        """Wait until the reader has taken everything written, at most `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while self.waiting:
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.01)
        return not self.waiting


class _PipeEnd(asyncio.Protocol):
    """The protocol side of the stdout transport: only its loss matters."""

    def __init__(self, on_lost: Callable[[], None]) -> None:
        self._on_lost = on_lost

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is not None:
            log.info("stdout closed: %s", exc)
        self._on_lost()


def can_write_without_blocking(out: BinaryIO) -> bool:
    """Whether stdout can get a non-blocking transport: a pipe or socket of its own.

    A regular file never waits for a reader, and a terminal is usually stdin's own file
    description too, where non-blocking mode would also reach the blocking stdin reader."""
    fd = out.fileno()
    mode = os.fstat(fd).st_mode
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        return False
    try:
        return not os.path.sameopenfile(0, fd)
    except OSError:
        return True


async def stdout_transport(out: BinaryIO, on_lost: Callable[[], None]) -> asyncio.WriteTransport:
    """A write-pipe transport on a duplicate of `out` (closing it leaves fd 1 alone)."""
    duplicate = os.fdopen(os.dup(out.fileno()), "wb", buffering=0)
    loop = asyncio.get_running_loop()
    transport, _ = await loop.connect_write_pipe(lambda: _PipeEnd(on_lost), duplicate)
    return transport
