"""The daemon over TCP: many editor windows at once, one core, only for the token's holder.

pygls's own TCP server drives one protocol object for every connection, so a second
window took over the first one's output, and the daemon exited when a connection closed.
Here each connection gets its own pygls server (its own capabilities, buffers and editor
state) in front of one shared hub, and the daemon serves until it is stopped. SIGTERM
stops it cleanly: every connection's turns are aborted and recorded, each client still
connected gets their `turn_completed`, and the process exits 0.

Every connection must present the daemon's token in `initialize` (agentls.lsp.gate); the
token, with the host, port and pid, is in the discovery file (agentls.lsp.tcp_trust),
which is removed however the daemon ends (SIGTERM, Ctrl-C).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
from collections.abc import Callable

from agentls.lsp.ending import end_connections, on_sigterm
from agentls.lsp.gate import gated_frames
from agentls.lsp.hub import Hub
from agentls.lsp.jsonrpc import serve_frames
from agentls.lsp.outgoing import OutgoingWriter, unread_limit
from agentls.lsp.server import AgentServer, build_server
from agentls.lsp.tcp_trust import remove_discovery, write_discovery

log = logging.getLogger(__name__)


def serve_tcp(host: str, port: int, token: str) -> None:
    """Serve connections on host:port until stopped (port 0 picks a free one); TrustError
    when the discovery file cannot be written privately."""
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(host, port, token))


async def _serve(host: str, port: int, token: str) -> None:
    hub = Hub()
    live: set[AgentServer] = set()

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await one_connection(hub, reader, writer, token, live)

    server = await asyncio.start_server(connection, host, port)
    bound_host, bound_port = server.sockets[0].getsockname()[:2]
    try:
        discovery = write_discovery(bound_host, bound_port, token)
    except BaseException:
        server.close()
        raise
    try:
        bound = ", ".join(f"{s.getsockname()[0]}:{s.getsockname()[1]}" for s in server.sockets)
        # Editors and tests read the port, then the token's file, from these lines.
        sys.stderr.write(f"agentls: listening on {bound}\n")
        sys.stderr.write(f"agentls: discovery file {discovery}\n")
        sys.stderr.flush()
        stopped = asyncio.Event()
        on_sigterm(stopped)
        await stopped.wait()
        # Bounded (agentls.lsp.ending): a client that does not read is not waited for long.
        await stop_serving(server, hub, live)
    finally:
        # Also on Ctrl-C, which cancels this coroutine. Connections still open are not
        # waited for: asyncio.run cancels them when this returns.
        server.close()
        remove_discovery(discovery)


async def stop_serving(listener: asyncio.Server, hub: Hub, live: set[AgentServer]) -> None:
    """No new connections; every open one ended so its client hears how its turns ended."""
    listener.close()
    await end_connections(hub, live)
    for server in list(live):
        if server.protocol.writer is not None:
            server.protocol.writer.close()


async def one_connection(
    hub: Hub,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    token: str | None = None,
    live: set[AgentServer] | None = None,
    prepare: Callable[[AgentServer], None] | None = None,
) -> None:
    """Serve one connection; with `token`, only a client that presents it in `initialize`.

    `live` holds the connection while it lasts, for a clean stop of the daemon; `prepare`
    sees its server before any message is read."""
    server = build_server(hub, shared=True)
    if prepare is not None:
        prepare(server)
    server._stop_event = stop = threading.Event()
    # Buffered in the socket's transport: a client that stops reading holds up only itself.
    server.protocol.set_writer(OutgoingWriter(writer.transport, unread_limit()))
    live = set() if live is None else live
    live.add(server)
    try:
        frames = gated_frames(server, lambda: reader.read(65536), token)
        await serve_frames(frames, server.protocol, stop)
    except (ConnectionError, asyncio.IncompleteReadError) as exc:
        log.info("a connection ended: %s", exc)
    finally:
        live.discard(server)
        await hub.detach(server)
        writer.close()
