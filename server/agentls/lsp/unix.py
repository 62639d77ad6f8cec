"""The daemon on a private Unix socket, for the warm `agentls run` (agentls.warm) and the
editors' relay (agentls.relay).

Connections are served as on TCP (each its own pygls server in front of one hub): an
editor's `shutdown` and `exit` end its connection, never the daemon. The socket's folder
is the user's alone (0700), and the daemon holds the socket's lock (taken before this
module is imported: agentls.lsp.socket_daemon). With no connection for `idle_timeout`
seconds the daemon removes its socket and exits, so a warm daemon never lingers. SIGTERM
ends it as it ends the TCP daemon: turns aborted, recorded and reported, then exit 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from agentls.lsp.early import Early
from agentls.lsp.ending import on_sigterm
from agentls.lsp.hub import Hub
from agentls.lsp.server import AgentProtocol, AgentServer
from agentls.lsp.tcp import one_connection, stop_serving

log = logging.getLogger(__name__)


def serve_unix(
    path: Path, idle_timeout: float, listener: socket.socket, early: Sequence[Early]
) -> int:
    """Serve on `listener` (bound at `path`) until idle, taking over the connections that
    agentls.lsp.early accepted while this module loaded."""
    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(_serve(path, idle_timeout, listener, early))
    return 0


async def _serve(
    path: Path, idle_timeout: float, listener: socket.socket, early: Sequence[Early]
) -> int:
    hub = Hub()
    live: set[AgentServer] = set()
    open_connections = 0
    idle, busy = asyncio.Event(), asyncio.Event()
    idle.set()

    async def connection(
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        answered: int | str | None = None,
    ) -> None:
        nonlocal open_connections
        open_connections += 1
        idle.clear()
        busy.set()
        try:
            prepare = None if answered is None else _preanswered(answered)
            await one_connection(hub, reader, writer, live=live, prepare=prepare)
        finally:
            open_connections -= 1
            if open_connections == 0:
                busy.clear()
                idle.set()

    server = await asyncio.start_unix_server(connection, sock=listener)
    taking_over = [asyncio.create_task(_take_over(e, connection)) for e in early]
    terminated = asyncio.Event()
    on_sigterm(terminated)
    sys.stderr.write(f"agentls: listening on {path}\n")
    sys.stderr.flush()
    # Nothing is loaded ahead: the client that started this daemon is already connecting
    # and waits for `initialize`, after which its `initialized` loads the core and the
    # provider's SDK (from its own workspace's settings) for every later client too.
    try:
        async with server:
            idle_out = asyncio.create_task(_until_idle(idle, busy, idle_timeout, hub.detached))
            stopped = asyncio.create_task(terminated.wait())
            await asyncio.wait({idle_out, stopped}, return_when=asyncio.FIRST_COMPLETED)
            idle_out.cancel()
            stopped.cancel()
            if terminated.is_set():
                await stop_serving(server, hub, live)
            del taking_over
            return 0
    finally:
        path.unlink(missing_ok=True)


def _preanswered(msg_id: int | str) -> Callable[[AgentServer], None]:
    def prepare(server: AgentServer) -> None:
        protocol = server.protocol
        assert isinstance(protocol, AgentProtocol)
        protocol.preanswered.add(msg_id)

    return prepare


async def _take_over(early: Early, connection: Callable[..., Awaitable[None]]) -> None:
    """Serve a connection agentls.lsp.early accepted, from the first byte it read."""
    reader, writer = await asyncio.open_unix_connection(sock=early.sock)
    # No await since the transport was made: these come before anything it reads.
    reader.feed_data(bytes(early.received))
    await connection(reader, writer, early.answered)


async def _until_idle(
    idle: asyncio.Event,
    busy: asyncio.Event,
    idle_timeout: float,
    detached: Callable[[], list[str]],
) -> None:
    while True:
        await idle.wait()
        try:
            # A connection within the timeout: wait for the next quiet spell.
            await asyncio.wait_for(busy.wait(), idle_timeout)
        except TimeoutError:
            if detached():
                # Turns run on with no window (a reload, a closed editor): the daemon stays
                # until they end or their detachedTurnTimeout aborts them, then idles out.
                continue
            log.info("idle for %.0f s: exiting", idle_timeout)
            return
