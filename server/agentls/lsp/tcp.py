"""The daemon over TCP: many editor windows at once, one core.

pygls's own TCP server drives one protocol object for every connection, so a second
window took over the first one's output, and the daemon exited when a connection closed.
Here each connection gets its own pygls server (its own capabilities, buffers and editor
state) in front of one shared hub, and the daemon serves until it is stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading

from agentls.lsp.hub import Hub
from agentls.lsp.jsonrpc import FrameReader, serve_frames
from agentls.lsp.server import build_server

log = logging.getLogger(__name__)


def serve_tcp(host: str, port: int) -> None:
    """Serve connections on host:port until interrupted (port 0 picks a free one)."""
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(host, port))


async def _serve(host: str, port: int) -> None:
    hub = Hub()

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await one_connection(hub, reader, writer)

    server = await asyncio.start_server(connection, host, port)
    bound = ", ".join(f"{s.getsockname()[0]}:{s.getsockname()[1]}" for s in server.sockets)
    # Editors and tests that asked for port 0 read the port from this line.
    sys.stderr.write(f"agentls: listening on {bound}\n")
    sys.stderr.flush()
    async with server:
        await server.serve_forever()


async def one_connection(
    hub: Hub, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    server = build_server(hub, shared=True)
    server._stop_event = stop = threading.Event()
    server.protocol.set_writer(writer)
    try:
        await serve_frames(FrameReader(lambda: reader.read(65536)), server.protocol, stop)
    except (ConnectionError, asyncio.IncompleteReadError) as exc:
        log.info("a connection ended: %s", exc)
    finally:
        await hub.detach(server)
        writer.close()
