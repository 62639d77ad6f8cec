"""The hub: which connections see which sessions, and sessions nobody sees are closed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import anthropic
import pytest

from agentls.events import SessionEvent, TextDeltaEvent
from agentls.lsp.hub import Hub
from agentls.lsp.server import build_server
from agentls.providers.http_clients import connection_key
from agentls.wire import event_json


async def _closed(hub: Hub, session_id: str) -> bool:
    handlers = await hub.handlers()
    for _ in range(200):
        if session_id not in handlers.manager.sessions:
            return True
        await asyncio.sleep(0.05)
    return False


async def test_a_session_opened_for_a_connection_already_gone_is_closed(tmp_path: Path) -> None:
    hub = Hub()
    window, other = build_server(hub, shared=True), build_server(hub, shared=True)
    handlers = await hub.handlers()
    overrides: dict[str, Any] = {"provider": "scripted", "script": []}
    session = await handlers.manager.create(tmp_path, overrides)
    # The window went away while its agent/newSession was still being answered.
    await hub.detach(window)
    hub.attach(session.id, window)
    assert session.id not in hub.attached
    assert await _closed(hub, session.id)
    # A live connection keeps what it opens; the gone one joining it changes nothing.
    kept = await handlers.manager.create(tmp_path, overrides)
    hub.attach(kept.id, other)
    hub.attach(kept.id, window)
    assert hub.attached[kept.id] == [other]
    await asyncio.sleep(0.1)
    assert kept.id in handlers.manager.sessions
    await hub.close_all()


class Window:
    """A connection of a socket daemon that keeps the events it is sent."""

    shared = True

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def send_event(self, payload: dict[str, Any]) -> None:
        self.events.append(payload)

    def send_event_json(self, params: str, _envelope: Any) -> None:
        self.events.append(json.loads(params))


async def test_a_window_taking_a_detached_session_back_stops_its_clock(tmp_path: Path) -> None:
    hub = Hub()
    handlers = await hub.handlers()
    write = {"id": "w1", "name": "Write", "input": {"file_path": "a.txt", "content": "a"}}
    overrides = {"provider": "scripted", "script": [{"tool_calls": [write]}]}
    session = await handlers.manager.create(tmp_path, {**overrides, "detachedTurnTimeout": 0.2})
    first, second = Window(), Window()
    hub.attach(session.id, first)
    session.submit("write it")
    for _ in range(200):
        if any(e["type"] == "permission_request" for e in first.events):
            break
        await asyncio.sleep(0.05)
    await hub.detach(first)
    assert hub.detached() == [session.id]
    hub.attach(session.id, second)
    assert hub.detached() == []
    await asyncio.sleep(0.5)
    # Well past its timeout, the turn still waits for its answer.
    assert session.id in handlers.manager.sessions and session.busy

    await hub.detach(second)
    assert await _closed(hub, session.id)
    assert hub.detached() == []
    # The manager forgets the session first, then waits for its aborted turn to settle.
    for _ in range(200):
        if not session.busy:
            break
        await asyncio.sleep(0.05)
    assert not session.busy and session.last_stop == "aborted"


async def test_the_daemons_end_closes_the_http_clients_its_sessions_shared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-hub")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    hub = Hub()
    handlers = await hub.handlers()
    for _ in range(2):
        session = await handlers.manager.create(tmp_path, {"provider": "anthropic"})
        hub.attach(session.id, Window())
    shared = handlers.manager.http_clients
    key = connection_key("anthropic", None, "sk-test-hub")
    client = shared.get(key, anthropic.DefaultAsyncHttpxClient)
    assert client is not None and len(shared) == 1
    await hub.close_all()
    assert client.is_closed and len(shared) == 0


class _Window:
    """A connection that keeps the `agent/event` params it is sent."""

    shared = True

    def __init__(self) -> None:
        self.sent: list[str] = []

    def send_event(self, payload: dict[str, Any]) -> None:
        self.sent.append(json.dumps(payload))

    def send_event_json(self, params: str, envelope: Any) -> None:
        self.sent.append(params)


def test_the_event_sink_writes_an_event_once_for_its_windows_and_not_for_none() -> None:
    hub = Hub()
    written: list[SessionEvent] = []

    def encode(envelope: SessionEvent) -> str:
        written.append(envelope)
        return event_json(envelope)

    sink = hub.event_sink(encode)
    first = SessionEvent("sess_1", 1, "turn_1", TextDeltaEvent("msg_1", "a"))
    sink(first)  # nobody sees the session: nothing is written
    assert written == []
    windows = [_Window(), _Window()]
    for window in windows:
        hub.attach("sess_1", window)
    second = SessionEvent("sess_1", 2, "turn_1", TextDeltaEvent("msg_1", "b"))
    sink(second)
    assert written == [second]
    expected = event_json(second)
    assert [window.sent for window in windows] == [[expected], [expected]]
    assert json.loads(expected)["text"] == "b"
