"""Ending a connection so that its editor hears how its turns ended.

However a connection ends (`shutdown`, `exit`, stdin closing, SIGTERM on the daemon), the
turns only it sees are aborted and recorded; while its client still reads, it also gets
each one's `turn_completed`, and the daemon waits (boundedly) until the client has taken
them before it closes the connection or exits.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable, Iterable
from typing import Final

from agentls.lsp.hub import Hub
from agentls.lsp.outgoing import OutgoingWriter
from agentls.lsp.server import AgentProtocol, AgentServer

log = logging.getLogger(__name__)
# How long ending the turns may take before the connection goes anyway.
CLOSE_TIMEOUT_SECONDS: Final = 5.0
# How long a client still connected gets to read its last events.
FLUSH_TIMEOUT_SECONDS: Final = 5.0


async def end_connection(server: AgentServer) -> None:
    """Abort the turns only this connection sees, then let its client read their ends."""
    await _bounded(server.hub.detach(server))
    await _flushed(server)


async def end_connections(hub: Hub, servers: Iterable[AgentServer]) -> None:
    """The daemon stops: every session closed while all its connections see it, then
    each client given time to read what it was sent."""
    await _bounded(hub.close_all())
    await asyncio.gather(*(_flushed(server) for server in list(servers)))


async def _bounded(closing: Awaitable[None]) -> None:
    try:
        await asyncio.wait_for(closing, CLOSE_TIMEOUT_SECONDS)
    except TimeoutError:
        log.error("turns still running after %g s at exit", CLOSE_TIMEOUT_SECONDS)


async def _flushed(server: AgentServer) -> None:
    protocol = server.protocol
    if isinstance(protocol, AgentProtocol):
        protocol.flush_outbox()
    writer = protocol.writer
    if isinstance(writer, OutgoingWriter) and not await writer.flushed(FLUSH_TIMEOUT_SECONDS):
        log.warning("the client did not read its last %d bytes before the end", writer.waiting)


def on_sigterm(stop: asyncio.Event) -> None:
    """Let SIGTERM set `stop` (editors and service managers end daemons with it)."""
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
