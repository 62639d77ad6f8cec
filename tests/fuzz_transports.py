"""The real daemon on each of its transports, with a raw client that keeps every answer.

stdio (`agentls --stdio`), TCP (`agentls --tcp --port 0`), the warm daemon's private Unix
socket (`agentls --socket PATH`, as agentls.warm starts it) with LSP framing, and
`agentls acp` with newline-delimited JSON. A client sends bytes as they are and records
every response (an object without `method`) and every event.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcp_daemon import start_tcp_daemon

LSP_TRANSPORTS = ("stdio", "tcp", "unix")
# 64 MiB lines and frames: the fuzzer's huge strings come back inside error messages.
LIMIT = 64 * 1024 * 1024


@dataclass
class Client:
    """One connection to a daemon: raw writes, parsed reads."""

    process: asyncio.subprocess.Process
    writer: asyncio.StreamWriter
    reader: asyncio.StreamReader
    ndjson: bool
    responses: list[dict[str, Any]] = field(default_factory=list)
    # The first response to each id: looked up at every arrival, so never a scan of all.
    answers: dict[Any, dict[str, Any]] = field(default_factory=dict)
    notifications: list[dict[str, Any]] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    drain: asyncio.Task[None] | None = None
    # The TCP daemon's token (from its discovery file), presented in `initialize`.
    token: str = "none-asked"

    def start_reading(self) -> None:
        self.task = asyncio.create_task(self._read())

    def send_body(self, body: bytes) -> None:
        if self.ndjson:
            self.writer.write(body + b"\n")
        else:
            self.writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def send(self, message: dict[str, Any]) -> None:
        self.send_body(json.dumps(message).encode())

    async def request(self, method: str, params: Any, msg_id: str) -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        await self.until(lambda: self.answer(msg_id) is not None, 60)
        answer = self.answer(msg_id)
        assert answer is not None
        return answer

    def answer(self, msg_id: Any) -> dict[str, Any] | None:
        return self.answers.get(msg_id)

    async def until(self, check: Callable[[], bool], timeout: float = 60) -> None:
        async def poll() -> None:
            while not check():
                self.arrived.clear()
                await self.arrived.wait()

        await asyncio.wait_for(poll(), timeout)

    async def _read(self) -> None:
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while True:
                if self.ndjson:
                    line = await self.reader.readline()
                    if not line:
                        return
                    message = json.loads(line)
                else:
                    header = await self.reader.readuntil(b"\r\n\r\n")
                    length = int(header.split(b":")[1].split(b"\r\n")[0])
                    message = json.loads(await self.reader.readexactly(length))
                if "method" in message:
                    self.notifications.append(message)
                else:
                    self.responses.append(message)
                    msg_id = message.get("id")
                    if isinstance(msg_id, str | int | None) and not isinstance(msg_id, bool):
                        self.answers.setdefault(msg_id, message)
                self.arrived.set()

    async def close(self) -> None:
        for task in (self.task, self.drain):
            if task is not None:
                task.cancel()
        with contextlib.suppress(Exception):
            self.writer.close()
        if self.process.returncode is None:
            self.process.terminate()
            try:
                await asyncio.wait_for(self.process.wait(), 10)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()


async def start(transport: str, root: Path, env: dict[str, str]) -> Client:
    """The daemon on `transport`, connected (not yet initialized), working in `root`: a
    relative path in fuzzed params (a `requestLog` of "x" or "../../../etc/passwd") is
    resolved there, never in the checkout the tests run from."""
    full_env = {**os.environ, **env}
    agentls = [sys.executable, "-m", "agentls"]
    pipes = {"stdin": asyncio.subprocess.PIPE, "stdout": asyncio.subprocess.PIPE}
    if transport in ("stdio", "acp"):
        args = ["acp"] if transport == "acp" else ["--stdio"]
        process = await asyncio.create_subprocess_exec(
            *agentls, *args, env=full_env, cwd=root, **pipes
        )
        assert process.stdin is not None and process.stdout is not None
        process.stdout._limit = LIMIT  # type: ignore[attr-defined]
        client = Client(process, process.stdin, process.stdout, ndjson=transport == "acp")
    elif transport == "tcp":
        daemon = await start_tcp_daemon(env=env, cwd=root)
        reader, writer = await asyncio.open_connection(daemon.host, daemon.port, limit=LIMIT)
        client = Client(daemon.process, writer, reader, ndjson=False, drain=daemon.draining)
        client.token = daemon.token
    else:
        socket = root / "agentls.sock"
        args = ["--socket", str(socket), "--idle-timeout", "120"]
        process = await asyncio.create_subprocess_exec(
            *agentls, *args, env=full_env, stderr=asyncio.subprocess.PIPE, cwd=root
        )
        assert process.stderr is not None
        line = (await asyncio.wait_for(process.stderr.readline(), 60)).decode()
        assert "listening on" in line, line
        # Keep draining stderr so the daemon's log never blocks it.
        client_drain = asyncio.create_task(_drain(process.stderr))
        reader, writer = await asyncio.open_unix_connection(str(socket), limit=LIMIT)
        client = Client(process, writer, reader, ndjson=False, drain=client_drain)
    client.start_reading()
    return client


async def _drain(stream: asyncio.StreamReader) -> None:
    while await stream.read(65536):
        pass


async def lsp_handshake(client: Client, root: Path) -> None:
    """initialize (with the TCP daemon's token; stdio and the socket ask none) and initialized."""
    params = {
        "processId": None,
        "rootUri": root.as_uri(),
        "capabilities": {},
        "initializationOptions": {"authToken": client.token},
    }
    answer = await client.request("initialize", params, "init")
    assert "result" in answer, answer
    client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
