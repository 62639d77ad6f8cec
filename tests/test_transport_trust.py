"""Who may drive the daemon: the real daemon over stdio and TCP, against what a web page,
another local process or a client without the token can send.

A browser's `fetch` to 127.0.0.1 (an HTTP request: request line, Host, Origin, … headers)
is refused before its body is read, so frames smuggled inside the body never run; over
TCP `initialize` must carry the token from the user-only discovery file; before a valid
`initialize` every request is answered -32002 and nothing else happens, on every
transport.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import stat
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tcp_daemon import DISCOVERY, LISTENING, TcpDaemon, start_tcp_daemon

Message = dict[str, Any]
HEADERS = [
    b"Host: 127.0.0.1:2087",
    b"Origin: https://evil.example",
    b"User-Agent: Mozilla/5.0",
    b"Sec-Fetch-Mode: no-cors",
    b"Upgrade: websocket",
]
REQUEST_LINES = [b"GET / HTTP/1.1", b"POST /rpc HTTP/1.0", b"OPTIONS * HTTP/1.1", b"PRI * HTTP/2.0"]


def frame(message: Message) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def request(msg_id: Any, method: str, params: Message | None = None) -> Message:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params or {}}


def notification(method: str, params: Message | None = None) -> Message:
    return {"jsonrpc": "2.0", "method": method, "params": params or {}}


def initialize(msg_id: Any = 1, token: str | None = None) -> Message:
    options = {} if token is None else {"initializationOptions": {"authToken": token}}
    return request(msg_id, "initialize", {"processId": None, "capabilities": {}, **options})


def new_session(msg_id: Any, cwd: Path, marker: Path) -> Message:
    """An `agent/newSession` whose MCP server is a command: it creates `marker` if run."""
    server = {"name": "m", "command": "sh", "args": ["-c", f"touch {marker}"]}
    params = {"cwd": str(cwd), "provider": "scripted", "script": [{"text": "hi"}]}
    return request(msg_id, "agent/newSession", {**params, "mcpServers": [server]})


def smuggling_post(port: int, frames: bytes) -> bytes:
    """What `fetch(url, {method: "POST", mode: "no-cors", body})` sends: one junk byte
    (answered -32700) and then LSP frames inside a text/plain body."""
    body = b"x" + frames
    head = [
        b"POST / HTTP/1.1",
        b"Host: 127.0.0.1:%d" % port,
        b"Connection: keep-alive",
        b"Content-Length: %d" % len(body),
        b"User-Agent: Mozilla/5.0 (X11; Linux x86_64)",
        b"Content-Type: text/plain;charset=UTF-8",
        b"Accept: */*",
        b"Origin: https://evil.example",
        b"Sec-Fetch-Site: cross-site",
        b"Sec-Fetch-Mode: no-cors",
        b"Sec-Fetch-Dest: empty",
    ]
    return b"\r\n".join(head) + b"\r\n\r\n" + body


def content_length(head: bytes) -> int:
    lines = head.decode().lower().splitlines()
    return next(int(line.split(":")[1]) for line in lines if line.startswith("content-length"))


def messages(data: bytes) -> list[Message]:
    """The frames in what a daemon sent."""
    found = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        length = content_length(head)
        found.append(json.loads(rest[:length]))
        data = rest[length:]
    return found


# Seconds before a daemon that should have answered or closed fails the test (generous: the
# machine may be busy; nothing is timed).
PATIENCE = 60


async def read_to_end(reader: asyncio.StreamReader) -> bytes:
    """Everything until the peer closes (a daemon that does not close fails the test)."""
    return await asyncio.wait_for(reader.read(), PATIENCE)


async def stdio_daemon(home: Path) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "agentls",
        "--stdio",
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "AGENTLS_HOME": str(home)},
    )


async def stdio_exchange(home: Path, data: bytes) -> tuple[bytes, int, bytes]:
    """Send `data` to a fresh stdio daemon (stdin kept open): its stdout, exit code, stderr,
    once it exits by itself."""
    process = await stdio_daemon(home)
    assert process.stdin is not None and process.stdout is not None
    assert process.stderr is not None
    process.stdin.write(data)
    await process.stdin.drain()
    try:
        out = await asyncio.wait_for(process.stdout.read(), PATIENCE)
        code = await asyncio.wait_for(process.wait(), PATIENCE)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    return out, code, await process.stderr.read()


class Client:
    """A raw TCP client: responses by id, notifications kept."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.events: list[Message] = []
        self.answers: dict[Any, Message] = {}

    @classmethod
    async def connect(cls, daemon: TcpDaemon) -> Client:
        return cls(*await asyncio.open_connection(daemon.host, daemon.port))

    def send(self, *frames: Message) -> None:
        self.writer.write(b"".join(frame(f) for f in frames))

    async def _next(self) -> Message:
        head = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), PATIENCE)
        body = await self.reader.readexactly(content_length(head))
        message: Message = json.loads(body)
        if message.get("method") == "agent/event":
            self.events.append(message["params"])
        elif "method" not in message:
            self.answers[message.get("id")] = message
        return message

    async def response(self, msg_id: Any) -> Message:
        while msg_id not in self.answers:
            await self._next()
        return self.answers.pop(msg_id)

    async def event(self, kind: str) -> Message:
        while True:
            found = [e for e in self.events if e["type"] == kind]
            if found:
                return found[0]
            await self._next()

    async def call(self, msg_id: Any, method: str, params: Message | None = None) -> Message:
        self.send(request(msg_id, method, params))
        return await self.response(msg_id)

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError):
            await self.writer.wait_closed()


@pytest.fixture
async def daemon(tmp_path: Path) -> AsyncIterator[TcpDaemon]:
    env = {"AGENTLS_HOME": str(tmp_path / "home"), "XDG_RUNTIME_DIR": str(tmp_path / "run")}
    started = await start_tcp_daemon(env=env)
    yield started
    await started.stop()


async def authorized(daemon: TcpDaemon) -> Client:
    client = await Client.connect(daemon)
    answer = await client.call(1, "initialize", daemon.initialize_params())
    assert "result" in answer, answer
    client.send(notification("initialized"))
    return client


# --- browser-shaped input -------------------------------------------------------------


async def test_a_browser_post_smuggling_frames_is_refused_over_tcp(
    daemon: TcpDaemon, tmp_path: Path
) -> None:
    # Even frames that carry the right token are never read from inside an HTTP request.
    for token in (None, daemon.token):
        marker = tmp_path / f"MARKER-{token is None}"
        inside = frame(initialize(1, token)) + frame(notification("initialized"))
        inside += frame(new_session(2, tmp_path, marker))
        reader, writer = await asyncio.open_connection(daemon.host, daemon.port)
        writer.write(smuggling_post(daemon.port, inside))
        assert await read_to_end(reader) == b"", "answered instead of closed"
        writer.close()
    # The daemon still serves, and nothing of the smuggled requests ran.
    client = await authorized(daemon)
    assert (await client.call(5, "agent/listSessions"))["result"]["sessions"] == []
    await client.close()
    assert await daemon.stop() == 0  # SIGTERM ends the TCP daemon cleanly
    assert not list(tmp_path.glob("MARKER-*"))


async def test_a_browser_post_smuggling_frames_is_refused_over_stdio(tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    inside = frame(initialize()) + frame(notification("initialized"))
    inside += frame(new_session(2, tmp_path, marker))
    out, code, _ = await stdio_exchange(tmp_path / "home", smuggling_post(2087, inside))
    assert (out, code) == (b"", 0)
    assert not marker.exists()
    # The same frames, sent as frames, do start the command: the payload is real.
    process = await stdio_daemon(tmp_path / "home")
    assert process.stdin is not None
    process.stdin.write(inside)
    for _ in range(400):
        if marker.exists():
            break
        await asyncio.sleep(0.05)
    process.kill()
    await process.wait()
    assert marker.exists()


async def test_http_headers_and_request_lines_close_the_connection_over_tcp(
    daemon: TcpDaemon,
) -> None:
    heads = [b"Content-Length: %d\r\n" + h for h in HEADERS]
    heads += [line + b"\r\nContent-Length: %d" for line in REQUEST_LINES]
    body = json.dumps(initialize(1, daemon.token)).encode()
    for head in heads:
        reader, writer = await asyncio.open_connection(daemon.host, daemon.port)
        writer.write(head % len(body) + b"\r\n\r\n" + body)
        assert await read_to_end(reader) == b"", head
        writer.close()
    # A header after a good message closes the connection too, mid-stream.
    client = await authorized(daemon)
    client.writer.write(b"Content-Length: 2\r\nOrigin: null\r\n\r\n{}")
    assert await read_to_end(client.reader) == b""
    await client.close()


async def test_http_headers_and_request_lines_end_the_stdio_daemon(tmp_path: Path) -> None:
    heads = [b"Content-Length: %d\r\n" + h for h in HEADERS]
    heads += [line + b"\r\nContent-Length: %d" for line in REQUEST_LINES]
    body = json.dumps(initialize()).encode()
    # Three daemons at a time: the machine may be small.
    slots = asyncio.Semaphore(3)

    async def exchange(head: bytes) -> tuple[bytes, int, bytes]:
        async with slots:
            return await stdio_exchange(tmp_path / "home", head % len(body) + b"\r\n\r\n" + body)

    results = await asyncio.gather(*(exchange(head) for head in heads))
    for head, (out, code, stderr) in zip(heads, results, strict=True):
        assert (out, code) == (b"", 0), head
        assert stderr.count(b"connection refused") == 1, stderr


# --- the token ------------------------------------------------------------------------


async def test_initialize_without_the_token_is_refused_and_the_connection_closed(
    daemon: TcpDaemon, tmp_path: Path
) -> None:
    wrong = "0" * 64
    for token in (None, wrong, "", daemon.token[:-1], 12345):
        marker = tmp_path / "MARKER"
        params = {"processId": None, "capabilities": {}, "initializationOptions": {}}
        if token is not None:
            params["initializationOptions"] = {"authToken": token, "model": "x"}
        reader, writer = await asyncio.open_connection(daemon.host, daemon.port)
        # The refused initialize and what follows it, in one write: nothing after it runs.
        writer.write(
            frame(request(1, "initialize", params))
            + frame(notification("initialized"))
            + frame(new_session(2, tmp_path, marker))
        )
        answers = messages(await read_to_end(reader))
        assert [a["id"] for a in answers] == [1], answers
        assert answers[0]["error"]["code"] == 1007
        assert "authToken" in answers[0]["error"]["message"]
        writer.close()
    client = await authorized(daemon)
    assert (await client.call(5, "agent/listSessions"))["result"]["sessions"] == []
    await client.close()
    await daemon.stop()
    assert not marker.exists()


async def test_the_token_never_reaches_the_logs(tmp_path: Path) -> None:
    env = {
        "AGENTLS_HOME": str(tmp_path / "home"),
        "XDG_RUNTIME_DIR": str(tmp_path / "run"),
        "AGENTLS_LOG_LEVEL": "DEBUG",
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agentls", "--tcp", stderr=subprocess.PIPE, env={**os.environ, **env}
    )
    assert process.stderr is not None
    line = b""
    while not line.startswith(DISCOVERY.encode()):
        line = await asyncio.wait_for(process.stderr.readline(), PATIENCE)
    path = Path(line.decode().removeprefix(DISCOVERY).strip())
    token = json.loads(path.read_text())["token"]
    reader, writer = await asyncio.open_connection(
        "127.0.0.1", json.loads(path.read_text())["port"]
    )
    client = Client(reader, writer)
    params = {
        "processId": None,
        "capabilities": {},
        "initializationOptions": {"authToken": token},
    }
    assert "result" in await client.call(1, "initialize", params)
    client.send(notification("initialized"))
    assert "result" in await client.call(2, "agent/listSessions")
    # A second initialize with the token, on the initialized connection: still not logged.
    assert "result" in await client.call(3, "initialize", params)
    await client.close()
    process.terminate()
    stderr = await asyncio.wait_for(process.stderr.read(), PATIENCE)
    await process.wait()
    assert b"Language server initialized" in stderr  # pygls logged the params
    assert token.encode() not in stderr


# --- before initialize ----------------------------------------------------------------

BEFORE = ["agent/newSession", "agent/listSessions", "agent/resumeSession", "no/such", "shutdown"]


def before_initialize(tmp_path: Path, marker: Path) -> bytes:
    """Requests (and notifications) sent before initialize; the first is a newSession."""
    sent = frame(new_session("new", tmp_path, marker))
    sent += frame(notification("initialized"))
    sent += frame(notification("$/cancelRequest", {"id": "new"}))
    sent += frame(notification("agent/didChangeEditorState", {}))
    sent += frame({"jsonrpc": "2.0", "id": 77, "result": None})
    for number, method in enumerate(BEFORE[1:]):
        sent += frame(request(number, method, {"sessionId": "sess_1"}))
    return sent


async def test_requests_before_initialize_are_answered_32002_over_stdio(tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    process = await stdio_daemon(tmp_path / "home")
    assert process.stdin is not None and process.stdout is not None
    client = Client(process.stdout, process.stdin)
    client.writer.write(before_initialize(tmp_path, marker))
    codes = [(await client.response(i))["error"]["code"] for i in range(len(BEFORE) - 1)]
    assert codes == [-32002] * (len(BEFORE) - 1)
    assert (await client.response("new"))["error"]["code"] == -32002
    assert "result" in await client.call("init", "initialize", initialize()["params"])
    assert "result" in await client.call("after", "agent/listSessions")
    assert "result" in await client.call("down", "shutdown")
    client.send(notification("exit"))
    assert await asyncio.wait_for(process.wait(), PATIENCE) == 0
    assert not marker.exists()


async def test_requests_before_initialize_are_answered_32002_over_tcp(
    daemon: TcpDaemon, tmp_path: Path
) -> None:
    marker = tmp_path / "MARKER"
    client = await Client.connect(daemon)
    client.writer.write(before_initialize(tmp_path, marker))
    codes = [(await client.response(i))["error"]["code"] for i in range(len(BEFORE) - 1)]
    assert codes == [-32002] * (len(BEFORE) - 1)
    assert (await client.response("new"))["error"]["code"] == -32002
    assert "result" in await client.call("init", "initialize", daemon.initialize_params())
    assert "result" in await client.call("after", "agent/listSessions")
    await client.close()
    await daemon.stop()
    assert not marker.exists()


async def test_only_an_authorized_connection_attaches_to_another_ones_session(
    daemon: TcpDaemon, tmp_path: Path
) -> None:
    owner = await authorized(daemon)
    script = [{"text": "first"}, {"text": "second"}]
    params = {"cwd": str(tmp_path), "provider": "scripted", "script": script}
    session = (await owner.call(2, "agent/newSession", params))["result"]["sessionId"]

    stranger = await Client.connect(daemon)
    for number, method in enumerate(("agent/resumeSession", "agent/submitMessage")):
        answer = await stranger.call(number, method, {"sessionId": session, "text": "hi"})
        assert answer["error"]["code"] == -32002
    stranger.send(
        initialize(9, "f" * 64), request(10, "agent/resumeSession", {"sessionId": session})
    )
    answers = messages(await read_to_end(stranger.reader))
    assert [(a["id"], a["error"]["code"]) for a in answers] == [(9, 1007)]

    # A second window with the token attaches: the multi-window feature.
    window = await authorized(daemon)
    resumed = await window.call(3, "agent/resumeSession", {"sessionId": session})
    assert resumed["result"]["sessionId"] == session
    turn = await window.call(4, "agent/submitMessage", {"sessionId": session, "text": "go"})
    assert "result" in turn
    assert (await owner.event("turn_completed"))["stopReason"] == "end_turn"
    assert stranger.events == []
    for client in (owner, window, stranger):
        await client.close()


# --- the discovery file and the command line ------------------------------------------


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
async def test_the_discovery_file_is_private_and_removed_at_exit(
    tmp_path: Path, stop: signal.Signals
) -> None:
    run = tmp_path / "run"
    daemon = await start_tcp_daemon(env={"XDG_RUNTIME_DIR": str(run)})
    folder = run / f"agentls-{os.getuid()}"
    assert daemon.discovery == folder / f"tcp-{daemon.process.pid}.json"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(daemon.discovery.stat().st_mode) == 0o600
    content = json.loads(daemon.discovery.read_text())
    assert set(content) == {"host", "port", "pid", "token"}
    assert content["host"] == "127.0.0.1" and content["pid"] == daemon.process.pid
    assert daemon.port > 0 and daemon.port != 2087
    assert len(content["token"]) == 64 and int(content["token"], 16) >= 0
    assert [p.name for p in folder.iterdir()] == [daemon.discovery.name]  # no temp file left
    # A window still connected does not keep the daemon (or its file) alive.
    client = await authorized(daemon)
    daemon.process.send_signal(stop)
    await asyncio.wait_for(daemon.process.wait(), PATIENCE)
    assert not daemon.discovery.exists()
    await client.close()


def test_a_runtime_folder_others_may_enter_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "run" / f"agentls-{os.getuid()}"
    folder.mkdir(parents=True)
    folder.chmod(0o755)
    done = agentls("--tcp", env={"XDG_RUNTIME_DIR": str(tmp_path / "run")})
    assert done.returncode == 2 and "not private" in done.stderr, done.stderr
    assert list(folder.iterdir()) == []


def agentls(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentls", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
        check=False,
    )


def test_a_host_other_machines_reach_needs_allow_remote(tmp_path: Path) -> None:
    env = {"XDG_RUNTIME_DIR": str(tmp_path / "run")}
    for host in ("0.0.0.0", "::", ""):
        done = agentls("--tcp", "--host", host, env=env)
        assert done.returncode == 2, done.stderr
        assert "--allow-remote" in done.stderr
        assert LISTENING not in done.stderr
    assert not list((tmp_path / "run").glob("*/tcp-*.json"))


async def test_allow_remote_serves_and_still_asks_for_the_token(tmp_path: Path) -> None:
    env = {"XDG_RUNTIME_DIR": str(tmp_path / "run")}
    daemon = await start_tcp_daemon("--host", "0.0.0.0", "--allow-remote", env=env)
    assert daemon.host == "0.0.0.0"
    reader, writer = await asyncio.open_connection("127.0.0.1", daemon.port)
    writer.write(frame(initialize()))
    assert messages(await read_to_end(reader))[0]["error"]["code"] == 1007
    writer.close()
    await daemon.stop()


async def test_a_token_file_gives_the_token(tmp_path: Path) -> None:
    env = {"XDG_RUNTIME_DIR": str(tmp_path / "run")}
    token_file = tmp_path / "token"
    token = "my-own-token-0123456789-abcdefghijklmnop"
    token_file.write_text(token + "\n")
    token_file.chmod(0o600)
    daemon = await start_tcp_daemon("--token-file", str(token_file), env=env)
    assert daemon.token == token
    client = await authorized(daemon)
    await client.close()
    await daemon.stop()

    token_file.chmod(0o644)
    done = agentls("--tcp", "--token-file", str(token_file), env=env)
    assert done.returncode == 2 and "chmod 600" in done.stderr
    token_file.write_text("short\n")
    token_file.chmod(0o600)
    done = agentls("--tcp", "--token-file", str(token_file), env=env)
    assert done.returncode == 2 and "at least 32" in done.stderr
    # The command line takes no token: `ps` would show it.
    assert agentls("--tcp", "--token", token, env=env).returncode == 2
