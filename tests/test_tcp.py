"""Several windows, one daemon: TCP connections each with their own state, sharing sessions.

A real daemon (`agentls --tcp`, on a free port) and raw JSON-RPC clients over sockets: a session
opened in one window and attached from another streams to both, a permission request goes
to both and the first answer wins, and a window that goes away leaves the daemon serving.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from tcp_daemon import TcpDaemon, start_tcp_daemon

Message = dict[str, Any]
WRITE = {"id": "w1", "name": "Write", "input": {"file_path": "new.txt", "content": "hi\n"}}
SCRIPT = [{"tool_calls": [WRITE]}, {"text": "written"}, {"text": "second turn"}]


class Window:
    """A minimal editor: LSP framing over a socket, responses awaited, notifications kept."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader, self._writer = reader, writer
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Message]] = {}
        self.events: list[Message] = []
        self._changed = asyncio.Event()
        self._task = asyncio.create_task(self._read())

    @classmethod
    async def open(cls, daemon: TcpDaemon) -> Window:
        reader, writer = await asyncio.open_connection(daemon.host, daemon.port)
        window = cls(reader, writer)
        initialized = await window.request("initialize", daemon.initialize_params())
        assert "result" in initialized, initialized
        window.notify("initialized", {})
        return window

    def _send(self, message: Message) -> None:
        body = json.dumps(message).encode()
        self._writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def request(self, method: str, params: Message) -> Message:
        self._next_id += 1
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._pending[self._next_id] = future
        self._send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return await asyncio.wait_for(future, 20)

    def notify(self, method: str, params: Message) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def event(self, predicate: Callable[[Message], bool]) -> Message:
        async def find() -> Message:
            while True:
                found = next((e for e in self.events if predicate(e)), None)
                if found is not None:
                    return found
                self._changed.clear()
                await self._changed.wait()

        return await asyncio.wait_for(find(), 20)

    async def _read(self) -> None:
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while True:
                header = await self._reader.readuntil(b"\r\n\r\n")
                length = int(header.split(b"Content-Length: ")[1].split(b"\r\n")[0])
                message = json.loads(await self._reader.readexactly(length))
                if "id" in message and "method" not in message:
                    self._pending.pop(message["id"]).set_result(message)
                elif message.get("method") == "agent/event":
                    self.events.append(message["params"])
                    self._changed.set()

    async def close(self) -> None:
        self._writer.close()
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError, ConnectionError):
            await self._task


@pytest.fixture
async def daemon(tmp_path: Path) -> AsyncIterator[TcpDaemon]:
    started = await start_tcp_daemon(env={"AGENTLS_HOME": str(tmp_path / "home")})
    yield started
    await started.stop()


def kind(name: str) -> Callable[[Message], bool]:
    return lambda event: event["type"] == name


async def test_a_session_attached_from_two_windows_streams_to_both_and_outlives_one(
    daemon: TcpDaemon, tmp_path: Path
) -> None:
    first, second = await Window.open(daemon), await Window.open(daemon)
    created = await first.request(
        "agent/newSession", {"cwd": str(tmp_path), "provider": "scripted", "script": SCRIPT}
    )
    session = created["result"]["sessionId"]
    resumed = await second.request("agent/resumeSession", {"sessionId": session})
    assert resumed["result"]["sessionId"] == session

    await first.request("agent/submitMessage", {"sessionId": session, "text": "write it"})
    asked = [await w.event(kind("permission_request")) for w in (first, second)]
    assert asked[0]["requestId"] == asked[1]["requestId"]
    answer = {"sessionId": session, "requestId": asked[0]["requestId"], "optionId": "allow_once"}
    assert "result" in await second.request("agent/respondPermission", answer)
    late = await first.request("agent/respondPermission", answer)
    assert late["error"]["code"] == 1003
    for window in (first, second):
        resolved = await window.event(kind("permission_resolved"))
        assert resolved["optionId"] == "allow_once"
        ended = await window.event(kind("turn_completed"))
        assert ended["stopReason"] == "end_turn"
    assert (tmp_path / "new.txt").read_text() == "hi\n"
    # The same events with the same seq (the commands announced when the first window
    # created the session came before the second was attached).
    shared = [
        [e["seq"] for e in w.events if e["type"] != "available_commands"] for w in (first, second)
    ]
    assert shared[0] == shared[1]

    await first.close()
    await second.request("agent/submitMessage", {"sessionId": session, "text": "again"})
    second_turn = await second.event(
        lambda e: e["type"] == "turn_completed" and e["turnId"] != ended["turnId"]
    )
    assert second_turn["stopReason"] == "end_turn"

    third = await Window.open(daemon)
    listed = await third.request("agent/listSessions", {})
    assert session in [s["sessionId"] for s in listed["result"]["sessions"]]
    await second.close()
    await third.close()


async def test_each_window_keeps_its_own_editor_state(daemon: TcpDaemon, tmp_path: Path) -> None:
    path = tmp_path / "shared.py"
    path.write_text("on disk\n")
    log = tmp_path / "requests.jsonl"
    windows = [await Window.open(daemon), await Window.open(daemon)]
    for window, text in zip(windows, ("first window\n", "second window\n"), strict=True):
        document = {"uri": path.as_uri(), "languageId": "python", "version": 1, "text": text}
        window.notify("textDocument/didOpen", {"textDocument": document})
        window.notify("agent/didChangeEditorState", {"activeUri": path.as_uri()})
    read = {"id": "r1", "name": "Read", "input": {"file_path": "shared.py"}}
    params = {
        "cwd": str(tmp_path),
        "provider": "scripted",
        "script": [{"tool_calls": [read]}, {"text": "ok"}],
        "requestLog": str(log),
    }
    session = (await windows[1].request("agent/newSession", params))["result"]["sessionId"]
    await windows[1].request("agent/submitMessage", {"sessionId": session, "text": "read"})
    done = await windows[1].event(kind("turn_completed"))
    assert done["stopReason"] == "end_turn"
    assert not windows[0].events
    result = next(
        e for e in windows[1].events if e["type"] == "tool_call_update" and e.get("content")
    )
    assert "second window" in result["content"]
    for window in windows:
        await window.close()
