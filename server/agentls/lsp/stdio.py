"""The daemon on stdio, as an editor starts it, ending cleanly however the editor leaves.

Editors rarely say goodbye in order: Neovim sends `shutdown` and often quits before
`exit`, so the daemon just sees stdin close, and some end it with SIGTERM. Whichever comes
first, EOF, `exit` or SIGTERM, every running turn is aborted and its end written to its
transcript, and its commands and background shells killed, before the process ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Awaitable

from pygls.io_ import StdoutWriter

from agentls.lsp.gate import gated_frames
from agentls.lsp.jsonrpc import serve_frames
from agentls.lsp.server import AgentServer, build_server

log = logging.getLogger(__name__)
# How long ending the turns may take before the process goes anyway.
CLOSE_TIMEOUT_SECONDS = 5.0


def serve_stdio() -> int:
    """Serve the editor on stdin/stdout; the exit code LSP asks for (1: exit before shutdown)."""
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
    server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
    stdin = sys.stdin.fileno()
    loop = asyncio.get_running_loop()

    def read_some() -> Awaitable[bytes]:
        # Whatever has arrived, up to 64 KiB: a thread blocks on the pipe, not the loop.
        return loop.run_in_executor(server.thread_pool, os.read, stdin, 65536)

    frames = gated_frames(server, read_some, token=None)
    reading = asyncio.create_task(serve_frames(frames, server.protocol, stop))
    # An editor that ends the daemon with SIGTERM gets the same clean end as `exit`.
    loop.add_signal_handler(signal.SIGTERM, server.exited.set)
    exited = asyncio.create_task(server.exited.wait())
    with contextlib.suppress(BrokenPipeError, ConnectionError):
        await asyncio.wait({reading, exited}, return_when=asyncio.FIRST_COMPLETED)
    try:
        await asyncio.wait_for(server.hub.detach(server), CLOSE_TIMEOUT_SECONDS)
    except TimeoutError:
        log.error("turns still running after %g s at exit", CLOSE_TIMEOUT_SECONDS)
    server.reading_blocked = not reading.done()
    stop.set()
    reading.cancel()
    exited.cancel()
    return server.exit_code
