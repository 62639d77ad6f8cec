"""Editors attach to the warm daemon: `agentls --stdio` relays to the per-user daemon on its
private socket (started when none answers), and each relay is its own editor connection.

Every daemon here lives in the test's own runtime folder and AGENTLS_HOME, and is stopped
at teardown. conftest sets AGENTLS_NO_DAEMON=1 for the whole run; these tests unset it.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentls import daemon_socket
from agentls.warm_stop import daemon_pid, stop_daemons
from wire_client import Daemon, WireClient

READ_SHARED = [
    {"tool_calls": [{"name": "Read", "input": {"file_path": "shared.txt"}}]},
    {"text": "Read it."},
]


class Setup:
    """One test's environment for relays: a private runtime folder, home and workspace."""

    def __init__(self, root: Path, runtime: Path) -> None:
        self.workspace = root / "ws"
        self.workspace.mkdir()
        (self.workspace / "shared.txt").write_text("on disk\n", encoding="utf-8")
        script = root / "script.jsonl"
        script.write_text("".join(json.dumps(e) + "\n" for e in READ_SHARED), encoding="utf-8")
        self.env = {
            "AGENTLS_NO_DAEMON": "0",
            "AGENTLS_HOME": str(root / "home"),
            "AGENTLS_PROVIDER": "scripted",
            "AGENTLS_SCRIPT": str(script),
            "AGENTLS_DAEMON_IDLE": "120",
            "XDG_RUNTIME_DIR": str(runtime),
        }

    def full_env(self) -> dict[str, str]:
        return {**os.environ, **self.env}

    @property
    def socket(self) -> str:
        return daemon_socket.socket_path(self.full_env())

    async def relay(self, *args: str, cwd: Path | None = None) -> Daemon:
        """`agentls --stdio` (or `args`) as an editor spawns it."""
        return await Daemon.spawn(list(args) or ["--stdio"], self.env, stdio=True, cwd=cwd)


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Setup]:
    # Short: a Unix socket's path has at most 107 bytes, and tmp_path can be long.
    runtime = Path(tempfile.mkdtemp(prefix="ar-"))
    # socket_path names the folder from this process's environment, as the relay does.
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    made = Setup(tmp_path, runtime)
    try:
        yield made
    finally:
        stop_daemon(made.socket)
        shutil.rmtree(runtime, ignore_errors=True)


def stop_daemon(path: str) -> None:
    """SIGTERM the daemon on `path`, SIGKILL it if it lingers."""
    pid = daemon_pid(path)
    if pid is None:
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)


@pytest.fixture
async def editors(setup: Setup) -> AsyncIterator[list[tuple[Daemon, WireClient]]]:
    """Relays the test opens (appended to this list), ended at teardown."""
    opened: list[tuple[Daemon, WireClient]] = []
    yield opened
    for relay, client in opened:
        await client.close()
        await relay.exit_code(10)


async def editor(
    setup: Setup, opened: list[tuple[Daemon, WireClient]], root: Path | None
) -> tuple[Daemon, WireClient]:
    relay = await setup.relay(cwd=setup.workspace)
    client = relay.stdio_client()
    opened.append((relay, client))
    params: dict[str, Any] = {"processId": None, "capabilities": {}}
    if root is not None:
        params["rootUri"] = root.as_uri()
    await client.request("initialize", params, 60)
    client.notify("initialized", {})
    return relay, client


async def read_turn(
    client: WireClient, root: Path, buffer_text: str
) -> tuple[str, list[dict[str, Any]]]:
    """A session that reads `root`/shared.txt (open in this editor with `buffer_text`);
    its cwd and its events up to turn_completed."""
    uri = (root / "shared.txt").as_uri()
    document = {"uri": uri, "languageId": "text", "version": 1, "text": buffer_text}
    client.notify("textDocument/didOpen", {"textDocument": document})
    session = (await client.request("agent/newSession", {}))["sessionId"]
    await client.request("agent/submitMessage", {"sessionId": session, "text": "read it"})
    await client.wait_for(lambda: bool(client.of_type(session, "turn_completed")))
    listed = await client.request("agent/listSessions", {})
    cwd = next(s["cwd"] for s in listed["sessions"] if s["sessionId"] == session)
    return cwd, client.events[session]


async def test_an_editor_is_served_by_the_daemon_through_the_relay(
    setup: Setup, editors: list[tuple[Daemon, WireClient]]
) -> None:
    relay, client = await editor(setup, editors, setup.workspace)
    daemon = daemon_pid(setup.socket)
    assert daemon is not None and daemon != relay.process.pid
    cwd, events = await read_turn(client, setup.workspace, "unsaved in the editor\n")
    assert os.path.realpath(cwd) == os.path.realpath(setup.workspace)
    kinds = [e["type"] for e in events]
    assert kinds.count("turn_completed") == 1
    assert events[-1]["stopReason"] == "end_turn"
    done = [e for e in events if e["type"] == "tool_call_update" and e["status"] == "completed"]
    # The daemon read the editor's buffer, not the disk.
    assert "unsaved in the editor" in json.dumps(done)
    assert "on disk" not in json.dumps(done)


async def test_two_relays_share_one_daemon_and_keep_their_own_editor_state(
    setup: Setup, editors: list[tuple[Daemon, WireClient]]
) -> None:
    other = setup.workspace.parent / "other"
    other.mkdir()
    (other / "shared.txt").write_text("other disk\n", encoding="utf-8")
    first_relay, first = await editor(setup, editors, setup.workspace)
    daemon = daemon_pid(setup.socket)
    second_relay, second = await editor(setup, editors, other)
    assert daemon_pid(setup.socket) == daemon
    assert first_relay.process.pid != second_relay.process.pid
    (first_cwd, first_events), (second_cwd, second_events) = await asyncio.gather(
        read_turn(first, setup.workspace, "first window's buffer\n"),
        read_turn(second, other, "second window's buffer\n"),
    )
    assert os.path.realpath(first_cwd) == os.path.realpath(setup.workspace)
    assert os.path.realpath(second_cwd) == os.path.realpath(other)
    first_read = json.dumps([e for e in first_events if e["type"] == "tool_call_update"])
    second_read = json.dumps([e for e in second_events if e["type"] == "tool_call_update"])
    assert "first window's buffer" in first_read and "second window" not in first_read
    assert "second window's buffer" in second_read and "first window" not in second_read


async def test_shutdown_and_exit_end_one_relay_and_leave_the_daemon_and_the_other(
    setup: Setup, editors: list[tuple[Daemon, WireClient]]
) -> None:
    leaving_relay, leaving = await editor(setup, editors, setup.workspace)
    daemon = daemon_pid(setup.socket)
    staying_relay, staying = await editor(setup, editors, setup.workspace)
    await leaving.request("shutdown", None)
    leaving.notify("exit", {})
    assert await leaving_relay.exit_code(10) == 0
    # `exit` without `shutdown`: the LSP exit code 1, and still only that connection.
    abrupt_relay, abrupt = await editor(setup, editors, setup.workspace)
    abrupt.notify("exit", {})
    assert await abrupt_relay.exit_code(10) == 1
    # An editor killing its relay closes that connection alone too.
    killed_relay, _killed = await editor(setup, editors, setup.workspace)
    killed_relay.process.kill()
    await killed_relay.exit_code(10)
    assert daemon_pid(setup.socket) == daemon
    session = await staying.request("agent/newSession", {"cwd": str(setup.workspace)})
    assert session["sessionId"].startswith("sess")
    assert staying_relay.process.returncode is None


async def test_a_relay_ends_with_0_when_the_editor_closes_stdin(
    setup: Setup, editors: list[tuple[Daemon, WireClient]]
) -> None:
    relay, _client = await editor(setup, editors, setup.workspace)
    daemon = daemon_pid(setup.socket)
    assert relay.process.stdin is not None
    relay.process.stdin.close()
    assert await relay.exit_code(10) == 0
    assert daemon_pid(setup.socket) == daemon


async def test_the_daemon_closing_the_connection_ends_the_relay_with_1(
    setup: Setup, editors: list[tuple[Daemon, WireClient]]
) -> None:
    relay, _client = await editor(setup, editors, setup.workspace)
    stop_daemon(setup.socket)
    assert await relay.exit_code(15) == 1
    assert any("the daemon closed the connection" in line for line in relay.stderr)


async def test_an_initialize_without_a_workspace_takes_the_editors_cwd_not_the_daemons(
    setup: Setup, editors: list[tuple[Daemon, WireClient]]
) -> None:
    _relay, client = await editor(setup, editors, None)
    session = (await client.request("agent/newSession", {}))["sessionId"]
    listed = await client.request("agent/listSessions", {})
    cwd = next(s["cwd"] for s in listed["sessions"] if s["sessionId"] == session)
    assert os.path.realpath(cwd) == os.path.realpath(setup.workspace)


async def test_a_stale_socket_of_a_dead_daemon_is_replaced(
    setup: Setup, editors: list[tuple[Daemon, WireClient]]
) -> None:
    # What a SIGKILLed daemon leaves: the socket file, with nobody listening on it.
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(setup.socket)
    stale.close()
    assert os.path.exists(setup.socket) and daemon_pid(setup.socket) is None
    relay, client = await editor(setup, editors, setup.workspace)
    assert daemon_pid(setup.socket) not in (None, relay.process.pid)
    session = await client.request("agent/newSession", {"cwd": str(setup.workspace)})
    assert session["sessionId"].startswith("sess")


async def test_a_cold_daemon_answers_initialize_before_its_server_is_loaded(
    setup: Setup, editors: list[tuple[Daemon, WireClient]]
) -> None:
    _relay, client = await editor(setup, editors, setup.workspace)
    # The server prints this once it is loaded and has taken the connections over.
    log = Path(daemon_socket.log_path(setup.socket))
    assert "listening on" not in log.read_text(encoding="utf-8")
    # Taken over with its initialize done: its requests are served, not refused -32002.
    session = await client.request("agent/newSession", {"cwd": str(setup.workspace)})
    assert session["sessionId"].startswith("sess")
    assert "listening on" in log.read_text(encoding="utf-8")
    # The server's own answer to that initialize was not sent a second time.
    await client.request("agent/listSessions", {})
    assert client.stray == []


async def test_a_daemon_that_leaves_before_answering_is_replaced_and_sent_it_all_again(
    setup: Setup, editors: list[tuple[Daemon, WireClient]]
) -> None:
    # A daemon exiting (idle, or `agentls stop`) just as a relay connects: it takes the
    # connection and the editor's first messages, answers nothing, and is gone.
    leaving = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    leaving.bind(setup.socket)
    leaving.listen()
    leaving.setblocking(False)
    loop = asyncio.get_running_loop()
    taken: list[bytes] = []

    async def take_one_and_go() -> None:
        connection, _ = await loop.sock_accept(leaving)
        taken.append(await loop.sock_recv(connection, 65536))
        os.unlink(setup.socket)
        leaving.close()
        connection.close()

    going = asyncio.create_task(take_one_and_go())
    relay, client = await editor(setup, editors, None)
    await going
    assert b"agent/clientContext" in taken[0]
    assert daemon_pid(setup.socket) not in (None, relay.process.pid)
    # The new daemon got the clientContext too: the editor's cwd is the workspace.
    session = (await client.request("agent/newSession", {}))["sessionId"]
    listed = await client.request("agent/listSessions", {})
    cwd = next(s["cwd"] for s in listed["sessions"] if s["sessionId"] == session)
    assert os.path.realpath(cwd) == os.path.realpath(setup.workspace)


@pytest.mark.parametrize("how", ["--no-daemon", "AGENTLS_NO_DAEMON=1"])
async def test_no_daemon_serves_the_editor_in_its_own_process(setup: Setup, how: str) -> None:
    if how == "--no-daemon":
        server = await setup.relay("--stdio", "--no-daemon")
    else:
        setup.env["AGENTLS_NO_DAEMON"] = "1"
        server = await setup.relay("--stdio")
    client = server.stdio_client()
    await client.request("initialize", {"processId": None, "capabilities": {}}, 60)
    client.notify("initialized", {})
    assert not os.path.exists(setup.socket)
    await client.request("shutdown", None)
    client.notify("exit", {})
    assert await server.exit_code(30) == 0


async def test_a_daemon_that_cannot_start_falls_back_to_this_process(setup: Setup) -> None:
    # Its lock cannot be made (a folder is in the way): the daemon exits at once.
    os.makedirs(setup.socket + ".lock")
    server = await setup.relay("--stdio", cwd=setup.workspace)
    client = server.stdio_client()
    result = await client.request("initialize", {"processId": None, "capabilities": {}}, 60)
    assert result["serverInfo"]["name"] == "agentls"
    client.notify("initialized", {})
    session = await client.request("agent/newSession", {"cwd": str(setup.workspace)})
    assert session["sessionId"].startswith("sess")
    said = [line for line in server.stderr if line.startswith("agentls: no daemon")]
    assert len(said) == 1 and "exited with code 1" in said[0], server.stderr
    await client.request("shutdown", None)
    client.notify("exit", {})
    assert await server.exit_code(30) == 0


def test_another_version_interpreter_or_path_gets_another_daemon(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = setup.full_env()
    path = daemon_socket.socket_path(env)
    assert daemon_socket.socket_path({**env, "PATH": "/elsewhere/bin"}) != path
    monkeypatch.setattr(daemon_socket.sys, "executable", "/other/python3")
    assert daemon_socket.socket_path(env) != path
    monkeypatch.undo()
    monkeypatch.setenv("XDG_RUNTIME_DIR", setup.env["XDG_RUNTIME_DIR"])
    monkeypatch.setattr(daemon_socket, "__version__", "0.0.0-other")
    assert daemon_socket.socket_path(env) != path


def test_the_relay_passes_the_conformance_kit(setup: Setup) -> None:
    # The wire through the relay is the daemon's: framing, the gate, events, positions.
    env = {k: v for k, v in setup.full_env().items() if k != "AGENTLS_SCRIPT"}
    relay = f"{sys.executable} -m agentls --stdio"
    try:
        for only in ("a turn:", "before the handshake", "HTTP input", "in utf-16", "sessions:"):
            done = subprocess.run(
                [sys.executable, "-m", "agentls.conformance", "--cmd", relay, "--only", only],
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
                env=env,
            )
            assert done.returncode == 0, done.stdout + done.stderr
            assert "1 of 1 check passed" in done.stdout, done.stdout
    finally:
        # The kit gives each check its own settings, hence a daemon of its own (stopped
        # here: stop_daemons looks in the test's runtime folder, from XDG_RUNTIME_DIR).
        stop_daemons()


CLIENTS = [
    {},
    {"general": {"positionEncodings": ["utf-8", "utf-16"]}},
    {"general": {"positionEncodings": ["utf-32"]}},
    {"general": {"positionEncodings": ["utf-7"]}},
    {"workspace": {"workspaceFolders": True, "applyEdit": True}},
    {"textDocument": {"synchronization": {"willSave": True, "willSaveWaitUntil": True}}},
    {
        "textDocument": {"synchronization": {"willSave": False}},
        "notebookDocument": {"synchronization": {}},
    },
    {"window": {"workDoneProgress": True}, "general": {"positionEncodings": []}},
]


@pytest.mark.parametrize("capabilities", CLIENTS)
def test_the_early_initialize_answer_is_the_servers(capabilities: dict[str, Any]) -> None:
    # A cold daemon answers `initialize` before pygls is loaded: it must say what the
    # server says to the same client.
    from lsprotocol import types as lsp

    from agentls.lsp.converter import json_converter
    from agentls.lsp.early import initialize_response
    from agentls.lsp.server import build_server

    params = {"processId": 7, "rootUri": None, "capabilities": capabilities}
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    steps = build_server().protocol.lsp_initialize(
        json_converter().structure(params, lsp.InitializeParams)
    )
    with pytest.raises(StopIteration) as done:
        while True:
            next(steps)
    expected = json.loads(json.dumps(json_converter().unstructure(done.value.value)))
    assert initialize_response(request)["result"] == expected


def test_only_a_plain_first_initialize_is_answered_early() -> None:
    from agentls.lsp.early import first_initialize
    from agentls.relay import client_context_frame

    def frame(message: object) -> bytes:
        body = json.dumps(message).encode()
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    plain = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
    assert first_initialize(frame(plain)) == plain
    assert first_initialize(client_context_frame("/w") + frame(plain)) == plain
    assert first_initialize(frame(plain)[:-1]) is None  # not complete yet
    for odd in (
        {**plain, "id": True},
        {**plain, "params": {"capabilities": []}},
        {**plain, "params": {"capabilities": {}, "processId": "7"}},
        {"jsonrpc": "2.0", "id": 1, "method": "agent/newSession", "params": {}},
    ):
        assert first_initialize(frame(odd)) is None
    # A request before it: the server answers everything (-32002 first).
    before = {"jsonrpc": "2.0", "id": 0, "method": "agent/listSessions", "params": {}}
    assert first_initialize(frame(before) + frame(plain)) is None
