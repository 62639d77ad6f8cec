"""`agentls acp`: the ACP agent on stdin/stdout, newline-delimited JSON-RPC.

The protocol owns the real stdout: its descriptor is kept for the channel and fd 1 is
pointed at stderr, so a stray print (ours, a library's, a child's) cannot corrupt it.
A line that is not JSON, or JSON that is not a JSON-RPC message, is answered with
-32700 / -32600, params of the wrong types -32602 (agentls.acp.envelope checks each
message before the SDK sees it), and the connection goes on. stdin
closing and SIGTERM end it the same way: every turn aborted and recorded, then exit 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import stat
import sys
from typing import Any

from acp import run_agent

from agentls.acp.agent import AcpAgent
from agentls.acp.cancelling import CancellableRequests
from agentls.acp.deleting import Deleter, LocalRequests
from agentls.acp.envelope import check

log = logging.getLogger(__name__)
# One message may carry images: read lines of up to 50 MB.
LINE_LIMIT = 50 * 1024 * 1024
CLOSE_TIMEOUT_SECONDS = 5.0


def serve_acp() -> int:
    problem = _not_a_stream(sys.stdin.fileno(), "stdin") or _not_a_stream(
        sys.stdout.fileno(), "stdout"
    )
    if problem is not None:
        sys.stderr.write(
            f"agentls acp: {problem}. It speaks ACP over pipes: an editor (Zed, acpx, "
            "a Neovim ACP plugin) starts it and connects its stdin and stdout.\n"
        )
        return 2
    out = os.dup(sys.stdout.fileno())
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    asyncio.run(_serve(sys.stdin.fileno(), out))
    return 0


def _not_a_stream(fd: int, name: str) -> str | None:
    """Why `fd` cannot carry the protocol (asyncio reads and writes only pipes, sockets
    and terminals: not a regular file, not /dev/null), or None."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError as exc:
        return f"{name} is not open ({exc.strerror})"
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd):
        return None
    kind = "a file" if stat.S_ISREG(mode) else "a device that is not a terminal"
    return f"{name} is {kind}"


async def _serve(in_fd: int, out_fd: int) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(in_fd, "rb", buffering=0)
    )
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(out_fd, "wb", buffering=0)
    )
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    agent = AcpAgent()
    channel = NdjsonChannel(reader, writer, agent.requests, agent)
    serving = asyncio.create_task(run_agent(agent, channel, use_unstable_protocol=True))
    # Editors often end their agent with SIGTERM: it ends like a closed stdin, so turns
    # are aborted, their ends written, and commands and background shells killed.
    terminated = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, terminated.set)
    waiting = asyncio.create_task(terminated.wait())
    try:
        await asyncio.wait({serving, waiting}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiting.cancel()
        serving.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await serving
        try:
            await asyncio.wait_for(agent.close(), CLOSE_TIMEOUT_SECONDS)
        except TimeoutError:
            log.error("turns still running after %g s at exit", CLOSE_TIMEOUT_SECONDS)


class NdjsonChannel:
    """The SDK's message transport over a byte stream, answering malformed lines."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        requests: CancellableRequests,
        agent: Deleter,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._requests = requests
        self._lock = asyncio.Lock()
        # session/delete, which the SDK does not route (see agentls.acp.deleting).
        self._local = LocalRequests(agent, self.send)

    async def send(self, message: dict[str, Any]) -> None:
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        try:
            data = text.encode() + b"\n"
        except UnicodeEncodeError:
            # A lone surrogate (echoed from a client's own string) has no UTF-8: escaped.
            data = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        async with self._lock:
            self._writer.write(data)
            await self._writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._line()
            if line is None:
                return None
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError as exc:
                await self._error(None, -32700, f"Parse error: the line is not JSON ({exc})")
                continue
            if isinstance(message, dict) and message.get("method") == "$/cancel_request":
                # A notification, never answered; the SDK would drop it (no `$/` routes).
                params = message.get("params")
                if "id" not in message and isinstance(params, dict):
                    self._requests.cancel(params.get("requestId"))
                continue
            refusal = check(message)
            if refusal is None:
                # The SDK starts the request's handler task now: it inherits the id.
                if message.get("method") == "session/prompt" and "id" in message:
                    self._requests.arrived(message["id"])
                if self._local.take(message):
                    continue
                return dict(message)
            log.warning("message refused (%d): %s", refusal.code, refusal.message)
            if refusal.answer:
                await self._error(refusal.answer_id, refusal.code, refusal.message, refusal.data)

    async def close(self) -> None:
        self._writer.close()

    async def _line(self) -> bytes | None:
        """The next line (None at EOF); a line over the limit is answered and skipped."""
        try:
            line = await self._reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            return exc.partial or None
        except asyncio.LimitOverrunError as exc:
            await self._skip_line(exc.consumed)
            await self._error(None, -32600, f"Invalid Request: a line over {LINE_LIMIT} bytes")
            return b""
        return line

    async def _skip_line(self, consumed: int) -> None:
        while True:
            await self._reader.readexactly(consumed)
            try:
                await self._reader.readuntil(b"\n")
                return
            except asyncio.LimitOverrunError as exc:
                consumed = exc.consumed
            except asyncio.IncompleteReadError:
                return

    async def _error(self, request_id: Any, code: int, message: str, data: Any = None) -> None:
        if not isinstance(request_id, str | int) or isinstance(request_id, bool):
            request_id = None
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        await self.send({"jsonrpc": "2.0", "id": request_id, "error": error})
