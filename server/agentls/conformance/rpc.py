"""A raw JSON-RPC client over a server's stdin and stdout or a TCP connection (LSP framing),
standard library only: what the conformance suite talks through, so it trusts no LSP
library."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from typing import IO, Any

Message = dict[str, Any]
# What a TCP server prints on stderr once it listens: where its host, port and token are.
DISCOVERY_LINE = "agentls: discovery file "
# Server -> client requests are answered by these, by method; unknown ones get -32601.
ServerRequestHandler = Callable[[Any], Any]


class RpcError(Exception):
    def __init__(self, error: Message) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.code = error.get("code")
        self.data = error.get("data")


class Server:
    """One server process, over its stdin and stdout, or over TCP when `tcp` is set (the
    command then listens and prints its discovery file's path, as the wire contract says,
    and the kit presents the token from that file); messages are read on a thread and
    queued."""

    def __init__(
        self, command: list[str], env: dict[str, str], cwd: str, tcp: bool = False
    ) -> None:
        pipe = subprocess.PIPE if not tcp else subprocess.DEVNULL
        stderr = subprocess.PIPE if tcp else subprocess.DEVNULL
        self.process = subprocess.Popen(
            command, stdin=pipe, stdout=pipe, stderr=stderr, env=env, cwd=cwd
        )
        self._writer: IO[bytes]
        self._reader: IO[bytes]
        # The token `initialize` presents (TCP), from the server's discovery file.
        self.token: str | None = None
        if not tcp:
            assert self.process.stdin is not None and self.process.stdout is not None
            self._writer, self._reader = self.process.stdin, self.process.stdout
        else:
            found = self._discover()
            self.token = found["token"]
            connection = socket.create_connection((found["host"], found["port"]), timeout=None)
            self._writer, self._reader = connection.makefile("wb"), connection.makefile("rb")
        self._incoming: queue.Queue[Message | None] = queue.Queue()
        self._next_id = 0
        self._lock = threading.Lock()
        self.handlers: dict[str, ServerRequestHandler] = {}
        self.notifications: list[Message] = []
        self.responses: dict[Any, Message] = {}
        # Set once the server closed the connection (or exited): nothing more will come.
        self.ended = False
        threading.Thread(target=self._read, daemon=True).start()

    # --- the wire ----------------------------------------------------------------------

    def _discover(self, timeout: float = 30) -> Message:
        """The discovery file's content, once the server printed its path on stderr."""
        stderr = self.process.stderr
        assert stderr is not None
        found: queue.Queue[str | None] = queue.Queue()

        def watch() -> None:
            # Reads stderr to the end, so a chatty server never blocks on a full pipe.
            for line in stderr:
                text = line.decode("utf-8", "replace").rstrip("\n")
                if text.startswith(DISCOVERY_LINE):
                    found.put(text.removeprefix(DISCOVERY_LINE))
            found.put(None)

        threading.Thread(target=watch, daemon=True).start()
        try:
            path = found.get(timeout=timeout)
        except queue.Empty:
            path = None
        if path is None:
            raise ConnectionError(f"the server printed no '{DISCOVERY_LINE}PATH' line")
        with open(path, encoding="utf-8") as file:
            content: Message = json.load(file)
        return content

    def send_raw(self, body: bytes, length: int | None = None) -> None:
        header = b"Content-Length: %d\r\n\r\n" % (len(body) if length is None else length)
        self.send_bytes(header + body)

    def send_bytes(self, data: bytes) -> None:
        """Bytes as they are, framed or not."""
        with self._lock:
            self._writer.write(data)
            self._writer.flush()

    def send(self, message: Message) -> None:
        self.send_raw(json.dumps({"jsonrpc": "2.0", **message}, ensure_ascii=False).encode())

    def _read(self) -> None:
        # A connection that goes down (e.g. closed by close()) ends like EOF.
        with contextlib.suppress(OSError, ValueError):
            self._read_frames(self._reader)
        self._incoming.put(None)

    def _read_frames(self, stream: IO[bytes]) -> None:
        while True:
            length = -1
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii", "replace").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            body = stream.read(length)
            try:
                self._incoming.put(json.loads(body))
            except ValueError:
                continue

    # --- requests ------------------------------------------------------------------------

    def request_async(self, method: str, params: Any) -> int:
        with self._lock:
            self._next_id += 1
            msg_id = self._next_id
        self.send({"id": msg_id, "method": method, "params": params})
        return msg_id

    def request(self, method: str, params: Any, timeout: float = 20) -> Any:
        msg_id = self.request_async(method, params)
        response = self.wait_response(msg_id, timeout)
        if "error" in response:
            raise RpcError(response["error"])
        return response.get("result")

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def wait_response(self, msg_id: Any, timeout: float = 20) -> Message:
        self.pump_until(
            lambda: msg_id in self.responses, timeout, f"the answer to request {msg_id}"
        )
        return self.responses.pop(msg_id)

    # --- reading -------------------------------------------------------------------------

    def pump_until(self, done: Callable[[], bool], timeout: float, what: str) -> None:
        """Handle incoming messages until `done()`; TimeoutError naming `what`."""
        deadline = time.monotonic() + timeout
        while not done():
            left = deadline - time.monotonic()
            if self.ended:
                raise ConnectionError(f"the server exited while waiting for {what}")
            if left <= 0:
                raise TimeoutError(f"timed out waiting for {what}")
            try:
                message = self._incoming.get(timeout=min(left, 0.1))
            except queue.Empty:
                continue
            if message is None:
                self.ended = True
                raise ConnectionError(f"the server exited while waiting for {what}")
            self._dispatch(message)

    def _dispatch(self, message: Message) -> None:
        method = message.get("method")
        if method is None:
            self.responses[message.get("id")] = message
        elif "id" in message:
            handler = self.handlers.get(method)
            if handler is None:
                self.send({"id": message["id"], "error": {"code": -32601, "message": method}})
            else:
                self.send({"id": message["id"], "result": handler(message.get("params"))})
        else:
            self.notifications.append(message)

    def events(self, session_id: str | None = None) -> list[Message]:
        return [
            n["params"]
            for n in self.notifications
            if n["method"] == "agent/event"
            and (session_id is None or n["params"].get("sessionId") == session_id)
        ]

    def wait_event(
        self, predicate: Callable[[Message], bool], what: str, timeout: float = 20
    ) -> Message:
        found: list[Message] = []

        def seen() -> bool:
            found[:] = [e for e in self.events() if predicate(e)]
            return bool(found)

        self.pump_until(seen, timeout, what)
        return found[0]

    def close(self) -> int:
        try:
            self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
        except (RpcError, TimeoutError, ConnectionError, OSError):
            pass
        if self.process.stdin is None:
            # A TCP server outlives its connections by design: it is stopped here.
            self._writer.close()
            self.process.terminate()
        try:
            return self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


def environment(home: str) -> dict[str, str]:
    """The caller's environment without provider credentials, with its own AGENTLS_HOME."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "OPENAI_", "AZURE_")) and k != "AGENTLS_PROVIDER"
    }
    env["AGENTLS_HOME"] = home
    return env
