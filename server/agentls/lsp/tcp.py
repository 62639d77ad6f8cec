"""The daemon over TCP: many editor windows at once, one core.

pygls's own TCP server drives one protocol object for every connection, so a second
window took over the first one's output, and the daemon exited when a connection closed.
Here each connection gets its own pygls server (its own capabilities, buffers and editor
state) in front of one shared hub, and the daemon serves until it is stopped. SIGTERM
stops it cleanly: every connection's turns are aborted and recorded, each client still
connected gets their `turn_completed`, and the process exits 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading

from agentls.lsp.ending import end_connections, on_sigterm
from agentls.lsp.hub import Hub
from agentls.lsp.jsonrpc import FrameReader, serve_frames
from agentls.lsp.outgoing import OutgoingWriter, unread_limit
from agentls.lsp.server import AgentServer, build_server

log = logging.getLogger(__name__)


def serve_tcp(host: str, port: int) -> None:
    """Serve connections on host:port until interrupted (port 0 picks a free one)."""
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(host, port))


async def _serve(host: str, port: int) -> None:
    hub = Hub()
    live: set[AgentServer] = set()

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await one_connection(hub, reader, writer, live)

    server = await asyncio.start_server(connection, host, port)
    bound = ", ".join(f"{s.getsockname()[0]}:{s.getsockname()[1]}" for s in server.sockets)
    # Editors and tests that asked for port 0 read the port from this line.
    sys.stderr.write(f"agentls: listening on {bound}\n")
    sys.stderr.flush()
    terminated = asyncio.Event()
    on_sigterm(terminated)
    async with server:
        await terminated.wait()
        await stop_serving(server, hub, live)


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
    live: set[AgentServer] | None = None,
) -> None:
    """Serve one client until it goes; `live` holds it meanwhile (for a clean stop)."""
    server = build_server(hub, shared=True)
    server._stop_event = stop = threading.Event()
    # Buffered in the socket's transport: a client that stops reading holds up only itself.
    server.protocol.set_writer(OutgoingWriter(writer.transport, unread_limit()))
    live = set() if live is None else live
    live.add(server)
    try:
        await serve_frames(FrameReader(lambda: reader.read(65536)), server.protocol, stop)
    except (ConnectionError, asyncio.IncompleteReadError) as exc:
        log.info("a connection ended: %s", exc)
    finally:
        live.discard(server)
        await hub.detach(server)
        writer.close()
