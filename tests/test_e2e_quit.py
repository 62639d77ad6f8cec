"""The editor quits mid-turn: however it leaves (EOF, `exit`, `shutdown` then EOF, SIGTERM), every
running turn is aborted and its end written to the transcript before the process ends, and
the editor, still reading, gets the turn's `turn_completed`. The socket daemons (TCP, the
warm `run`'s Unix socket) end the same way on SIGTERM, for every connection."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from test_e2e_wire import RawPipe
from wire_client import Daemon, WireClient, tcp_client, tcp_daemon

HANGING = [{"text": "Working on it", "hang": True}]


async def start_hanging_turn(tmp_path: Path) -> tuple[RawPipe, Path, str]:
    pipe = await RawPipe.start({"AGENTLS_HOME": str(tmp_path / "home")})
    pipe.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
    await pipe.response_to(1)
    pipe.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    params = {"cwd": str(tmp_path), "provider": "scripted", "script": HANGING}
    pipe.send({"jsonrpc": "2.0", "id": 2, "method": "agent/newSession", "params": params})
    session = (await pipe.response_to(2))["result"]["sessionId"]
    submit = {"sessionId": session, "text": "go"}
    pipe.send({"jsonrpc": "2.0", "id": 3, "method": "agent/submitMessage", "params": submit})
    turn = (await pipe.response_to(3))["result"]["turnId"]
    while True:
        message = await pipe.receive()
        if message.get("method") == "agent/event" and message["params"]["type"] == "text_delta":
            break
    transcript = tmp_path / "home" / "sessions" / f"{session}.jsonl"
    return pipe, transcript, turn


def turn_ends(transcript: Path) -> list[tuple[str, str]]:
    records = [json.loads(line) for line in transcript.read_text().splitlines()]
    return [(r["turnId"], r["stopReason"]) for r in records if r["type"] == "turn"]


async def leave(pipe: RawPipe, how: str) -> list[dict[str, Any]]:
    """Leave as `how` says; every message read from then on (to the end of stdout)."""
    assert pipe.process.stdin is not None
    read: list[dict[str, Any]] = []
    if how == "SIGTERM":
        pipe.process.terminate()
    if how in ("shutdown then EOF", "shutdown and exit"):
        pipe.send({"jsonrpc": "2.0", "id": 9, "method": "shutdown"})
        if how == "shutdown and exit":
            while not read or read[-1].get("id") != 9:
                read.append(await pipe.receive())
    if how in ("exit", "shutdown and exit"):
        pipe.send({"jsonrpc": "2.0", "method": "exit"})
    if how in ("EOF", "shutdown then EOF"):
        pipe.process.stdin.close()
    read += await rest_of(pipe)
    await asyncio.wait_for(pipe.process.wait(), 20)
    return read


@pytest.mark.parametrize(
    "how", ["EOF", "exit", "shutdown then EOF", "shutdown and exit", "SIGTERM"]
)
async def test_a_turn_running_when_the_editor_leaves_is_recorded_as_aborted(
    tmp_path: Path, how: str, long_run: bool
) -> None:
    for attempt in range(10 if long_run else 2):
        home = tmp_path / str(attempt)
        home.mkdir()
        pipe, transcript, turn = await start_hanging_turn(home)
        read = await leave(pipe, how)
        assert turn_ends(transcript) == [(turn, "aborted")], how
        expected = 1 if how == "exit" else 0
        assert pipe.process.returncode == expected
        assert turns_completed(read) == [(turn, "aborted")], how


async def rest_of(pipe: RawPipe) -> list[dict[str, Any]]:
    """Every message the daemon wrote that the test had not read yet (to the end)."""
    assert pipe.process.stdout is not None
    data = await pipe.process.stdout.read()
    messages = []
    while data:
        header, _, data = data.partition(b"\r\n\r\n")
        fields = dict(line.lower().split(b":", 1) for line in header.split(b"\r\n"))
        length = int(fields[b"content-length"])
        messages.append(json.loads(data[:length]))
        data = data[length:]
    return messages


def turns_completed(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    events = [m["params"] for m in messages if m.get("method") == "agent/event"]
    return [(e["turnId"], e["stopReason"]) for e in events if e["type"] == "turn_completed"]


async def socket_daemon(
    transport: str, tmp_path: Path
) -> tuple[Callable[[], Awaitable[int]], WireClient, WireClient]:
    """The daemon over `transport` ("tcp" or "unix"), how to SIGTERM it (its exit code),
    and two connections to it."""
    env = {"AGENTLS_HOME": str(tmp_path / "home")}
    if transport == "tcp":
        tcp, options = await tcp_daemon(env)
        clients = [await tcp_client(tcp.port), await tcp_client(tcp.port)]
        stop = tcp.stop
    else:
        path = tmp_path / "sock" / "agentls.sock"
        daemon = await Daemon.spawn(["--socket", str(path), "--idle-timeout", "120"], env)
        await daemon.stderr_line("listening on")
        options = {}
        clients = []
        for _ in range(2):
            reader, writer = await asyncio.open_unix_connection(str(path))
            clients.append(WireClient(reader, writer))
        stop = daemon.end
    for client in clients:
        await client.initialize(options)
    return stop, clients[0], clients[1]


@pytest.mark.parametrize("transport", ["tcp", "unix"])
async def test_sigterm_ends_a_socket_daemon_with_every_turn_reported(
    tmp_path: Path, transport: str
) -> None:
    stop, first, second = await socket_daemon(transport, tmp_path)
    params = {"cwd": str(tmp_path), "provider": "scripted", "script": HANGING}
    own = (await first.request("agent/newSession", params))["sessionId"]
    shared = (await second.request("agent/newSession", params))["sessionId"]
    await first.request("agent/resumeSession", {"sessionId": shared})
    turns = {}
    for client, session in ((first, own), (second, shared)):
        submitted = await client.request(
            "agent/submitMessage", {"sessionId": session, "text": "go"}
        )
        turns[session] = submitted["turnId"]
        await client.wait_for(lambda c=client, s=session: bool(c.of_type(s, "text_delta")))

    assert await stop() == 0
    for client in (first, second):
        await asyncio.wait_for(client.closed.wait(), 20)
    seen = {
        "first": {s: first.of_type(s, "turn_completed") for s in (own, shared)},
        "second": {shared: second.of_type(shared, "turn_completed")},
    }
    for sessions in seen.values():
        for session, ends in sessions.items():
            assert [(e["turnId"], e["stopReason"]) for e in ends] == [(turns[session], "aborted")]
    home = tmp_path / "home" / "sessions"
    for session, turn in turns.items():
        assert turn_ends(home / f"{session}.jsonl") == [(turn, "aborted")]
