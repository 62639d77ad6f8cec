"""A minimal editor over any byte stream (the daemon's stdio pipes or a socket).

It frames JSON-RPC as LSP does, awaits responses, keeps every `agent/event` by session in
arrival order with the time it was read, answers the daemon's own requests with an empty
result, and can stop reading for a while, as a busy or frozen editor does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tcp_daemon import TcpDaemon, start_tcp_daemon

Message = dict[str, Any]
INIT_TIMEOUT = 60.0


class WireClient:
    """One connection: requests, notifications, events by session, and a pausable reader."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader, self._writer = reader, writer
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Message]] = {}
        self.events: dict[str, list[Message]] = {}
        # When each event was read (time.monotonic), in the same order as `events`.
        self.read_at: dict[str, list[float]] = {}
        self._changed = asyncio.Event()
        self._reading = asyncio.Event()
        self._reading.set()
        self.closed = asyncio.Event()
        # Responses to no request awaiting one (a request answered twice, say).
        self.stray: list[Message] = []
        self._task = asyncio.create_task(self._read())

    async def initialize(self, options: Message | None = None) -> Message:
        """The LSP handshake, with `initializationOptions` when given."""
        params: Message = {"processId": None, "capabilities": {}}
        if options:
            params["initializationOptions"] = options
        result = await self.request("initialize", params, INIT_TIMEOUT)
        self.notify("initialized", {})
        return result

    def send(self, message: Message) -> None:
        body = json.dumps(message).encode()
        self._writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def start_request(self, method: str, params: Message | None) -> asyncio.Future[Message]:
        """Send a request now; its response (or error) is the future's result."""
        self._next_id += 1
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._pending[self._next_id] = future
        self.send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return future

    async def request(self, method: str, params: Message | None, timeout: float = 30) -> Message:
        """The result of a request; AssertionError with the error when it failed."""
        response = await asyncio.wait_for(self.start_request(method, params), timeout)
        assert "result" in response, f"{method}: {response}"
        result: Message = response["result"]
        return result

    def notify(self, method: str, params: Message) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def stop_reading(self) -> None:
        """Read nothing more until `resume_reading` (the daemon's writes back up)."""
        self._reading.clear()

    def resume_reading(self) -> None:
        self._reading.set()

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 60) -> None:
        """Until `predicate()` holds after some message was read."""

        async def until() -> None:
            while not predicate():
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(until(), timeout)

    def of_type(self, session: str, kind: str) -> list[Message]:
        return [e for e in self.events.get(session, []) if e["type"] == kind]

    async def _read(self) -> None:
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while True:
                await self._reading.wait()
                header = await self._reader.readuntil(b"\r\n\r\n")
                length = int(header.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                self._receive(json.loads(await self._reader.readexactly(length)))
        self.closed.set()
        self._changed.set()

    def _receive(self, message: Message) -> None:
        if "method" not in message:
            future = self._pending.pop(message["id"], None)
            if future is not None and not future.done():
                future.set_result(message)
            else:
                self.stray.append(message)
        elif message["method"] == "agent/event":
            event = message["params"]
            self.events.setdefault(event["sessionId"], []).append(event)
            self.read_at.setdefault(event["sessionId"], []).append(time.monotonic())
        elif "id" in message:
            # A request of the daemon's own (none is expected with these capabilities).
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        self._changed.set()

    async def close(self) -> None:
        """Close the stream and stop reading (the daemon sees the connection end)."""
        self._writer.close()
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError, ConnectionError):
            await self._task


class Daemon:
    """A real `agentls` process whose stderr is read as it comes (a full pipe would stall it)."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.stderr: list[str] = []
        self._line = asyncio.Event()
        self._draining = asyncio.create_task(self._drain())

    @classmethod
    async def spawn(
        cls, args: list[str], env: dict[str, str], stdio: bool = False, cwd: Path | None = None
    ) -> Daemon:
        pipe = asyncio.subprocess.PIPE
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "agentls",
            *args,
            stdin=pipe if stdio else asyncio.subprocess.DEVNULL,
            stdout=pipe if stdio else asyncio.subprocess.DEVNULL,
            stderr=pipe,
            env={**os.environ, **env},
            cwd=cwd,
        )
        return cls(process)

    async def _drain(self) -> None:
        assert self.process.stderr is not None
        while line := await self.process.stderr.readline():
            self.stderr.append(line.decode(errors="replace").rstrip("\n"))
            self._line.set()

    async def stderr_line(self, needle: str, timeout: float = 60) -> str:
        """The first stderr line containing `needle` (waiting for it)."""

        async def find() -> str:
            while True:
                found = next((line for line in self.stderr if needle in line), None)
                if found is not None:
                    return found
                self._line.clear()
                await self._line.wait()

        return await asyncio.wait_for(find(), timeout)

    def stdio_client(self) -> WireClient:
        assert self.process.stdout is not None and self.process.stdin is not None
        return WireClient(self.process.stdout, self.process.stdin)

    async def end(self, timeout: float = 30) -> int:
        """SIGTERM, then its exit code."""
        if self.process.returncode is None:
            self.process.terminate()
        return await self.exit_code(timeout)

    async def exit_code(self, timeout: float = 30) -> int:
        """The exit code of a daemon that is ending by itself (killed if it does not).

        Never signalled here: signalling a process that has just exited reaps it behind
        asyncio's back, which then reports 255."""
        deadline = time.monotonic() + timeout
        while self.process.returncode is None and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        if self.process.returncode is None:
            self.process.kill()
            await self.process.wait()
        await self._draining
        assert self.process.returncode is not None
        return self.process.returncode


async def tcp_daemon(env: dict[str, str]) -> tuple[TcpDaemon, Message]:
    """`agentls --tcp` on a free port, and the initializationOptions that carry its token."""
    daemon = await start_tcp_daemon("--port", "0", env=env)
    return daemon, {"authToken": daemon.token}


async def tcp_client(port: int) -> WireClient:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    return WireClient(reader, writer)
