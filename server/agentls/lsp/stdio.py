"""The daemon on stdio, as an editor starts it, ending cleanly however the editor leaves.

Editors rarely say goodbye in order: Neovim sends `shutdown` and often quits before
`exit`, so the daemon just sees stdin close, and some end it with SIGTERM. Whichever comes
first, EOF, `exit` or SIGTERM, every running turn is aborted and its end written to its
transcript, and its commands and background shells killed, before the process ends; a
client still reading gets each turn's `turn_completed` first.

stdout is written through a non-blocking transport (agentls.lsp.outgoing), so an editor
that stops reading for a while holds up only its own output, not the daemon.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import threading
from collections.abc import Awaitable

from pygls.io_ import StdoutWriter

from agentls.lsp.ending import end_connection, on_sigterm
from agentls.lsp.gate import gated_frames
from agentls.lsp.gc_settle import daemon_process
from agentls.lsp.jsonrpc import serve_frames
from agentls.lsp.outgoing import (
    OutgoingWriter,
    can_write_without_blocking,
    stdout_transport,
    unread_limit,
)
from agentls.lsp.server import AgentServer, build_server

log = logging.getLogger(__name__)


def serve_stdio() -> int:
    """Serve the editor on stdin/stdout; the exit code LSP asks for (1: exit before shutdown)."""
    daemon_process()
    server = build_server()
    code = asyncio.run(_serve(server))
    if server.reading_blocked:
        # stdin is still open (`exit` came before EOF): a thread blocks reading it, and
        # waiting for that thread would keep the process alive after the editor left.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


async def _serve(server: AgentServer) -> int:
    server._stop_event = stop = threading.Event()
    server.protocol.set_writer(await _stdout_writer(server))
    stdin = sys.stdin.fileno()
    loop = asyncio.get_running_loop()

    def read_some() -> Awaitable[bytes]:
        # Whatever has arrived, up to 64 KiB: a thread blocks on the pipe, not the loop.
        return loop.run_in_executor(server.thread_pool, os.read, stdin, 65536)

    frames = gated_frames(server, read_some, token=None)
    reading = asyncio.create_task(serve_frames(frames, server.protocol, stop))
    # An editor that ends the daemon with SIGTERM gets the same clean end as `exit`.
    on_sigterm(server.exited)
    exited = asyncio.create_task(server.exited.wait())
    with contextlib.suppress(BrokenPipeError, ConnectionError):
        await asyncio.wait({reading, exited}, return_when=asyncio.FIRST_COMPLETED)
    await end_connection(server)
    server.reading_blocked = not reading.done()
    stop.set()
    reading.cancel()
    exited.cancel()
    if isinstance(server.protocol.writer, OutgoingWriter):
        server.protocol.writer.close()
    return server.exit_code


async def _stdout_writer(server: AgentServer) -> OutgoingWriter | StdoutWriter:
    """A writer that never blocks the loop; a plain one for a file or a terminal."""
    out = sys.stdout.buffer
    if not can_write_without_blocking(out):
        return StdoutWriter(out)
    # stdout closing, or a client that left too much unread, ends the daemon as EOF does.
    transport = await stdout_transport(out, server.exited.set)
    return OutgoingWriter(transport, unread_limit(), server.exited.set)
