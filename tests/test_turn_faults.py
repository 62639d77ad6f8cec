"""Every accepted turn ends: a fault injected into any stage of a turn still gives exactly one
`turn_completed`, a paired history, and a session whose next turn works."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from agentls.pairing import pairing_problems
from agentls.providers.base import ModelRequest, StreamEvent
from agentls.session import turn_start
from agentls.session.manager import SessionManager
from agentls.session.session import AgentSession
from agentls.session.store import Transcript, load_transcript
from agentls.wire import json_sink

SCRIPT = [{"text": "first"}, {"text": "second"}, {"text": "third"}]
TOOL_SCRIPT = [
    {"text": "Looking.", "tool_calls": [{"id": "g1", "name": "Glob", "input": {"pattern": "*"}}]},
    {"text": "done"},
    {"text": "again"},
    {"text": "and again"},
]


class Sink:
    """Collects events; `fail_on` makes delivery of one event type raise, as a broken pipe."""

    def __init__(self, fail_on: str | None = None) -> None:
        self.events: list[dict[str, Any]] = []
        self.fail_on = fail_on
        self.ended: dict[str, asyncio.Event] = {}

    def __call__(self, event: dict[str, Any]) -> None:
        self.events.append(event)
        if event["type"] == "turn_completed":
            self.ended.setdefault(event["turnId"], asyncio.Event()).set()
        if event["type"] == self.fail_on:
            raise BrokenPipeError("the client went away")

    async def completed(self, turn_id: str) -> dict[str, Any]:
        await asyncio.wait_for(self.ended.setdefault(turn_id, asyncio.Event()).wait(), 10)
        await asyncio.sleep(0.05)  # anything a broken turn might still send arrives now
        ends = [e for e in self.events if e["type"] == "turn_completed" and e["turnId"] == turn_id]
        assert len(ends) == 1, ends
        return ends[0]


async def open_session(
    tmp_path: Path, script: list[dict[str, Any]], sink: Sink | None = None
) -> tuple[AgentSession, Sink]:
    sink = sink or Sink()
    manager = SessionManager(json_sink(sink), env={"AGENTLS_HOME": str(tmp_path / "home")})
    session = await manager.create(tmp_path, {"provider": "scripted", "script": script})
    return session, sink


async def assert_still_usable(session: AgentSession, sink: Sink) -> None:
    assert pairing_problems(session.history) == []
    turn, _ = session.submit("are you still there?")
    end = await sink.completed(turn)
    assert end["stopReason"] == "end_turn", end


def internal_error(end: dict[str, Any]) -> None:
    assert end["stopReason"] == "error", end
    assert end["error"]["code"] == "internal_error", end


def raise_once(original: Callable[..., Any], when: Callable[..., bool]) -> Callable[..., Any]:
    fired = False

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nonlocal fired
        if not fired and when(*args, **kwargs):
            fired = True
            raise RuntimeError("injected fault")
        return original(*args, **kwargs)

    return wrapper


async def test_a_fault_while_building_the_user_context_ends_the_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session, sink = await open_session(tmp_path, SCRIPT)
    monkeypatch.setattr(
        turn_start, "user_context", raise_once(turn_start.user_context, lambda *a, **k: 1)
    )
    turn, _ = session.submit("hello")
    internal_error(await sink.completed(turn))
    await assert_still_usable(session, sink)


async def test_a_fault_writing_the_user_message_ends_the_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session, sink = await open_session(tmp_path, SCRIPT)
    record = raise_once(Transcript.record_message, lambda _self, m, _t: m.role == "user")
    monkeypatch.setattr(Transcript, "record_message", record)
    turn, _ = session.submit("hello")
    internal_error(await sink.completed(turn))
    await assert_still_usable(session, sink)


async def test_a_provider_that_raises_an_unexpected_exception_ends_the_turn(
    tmp_path: Path,
) -> None:
    session, sink = await open_session(tmp_path, SCRIPT)
    real = session.provider

    class Exploding:
        name = "scripted"

        async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
            raise KeyError("not a ProviderError")
            yield  # pragma: no cover - makes this an async generator

    session.provider = Exploding()
    turn, _ = session.submit("hello")
    internal_error(await sink.completed(turn))
    session.provider = real
    await assert_still_usable(session, sink)


async def test_a_fault_journaling_the_assistant_message_ends_the_turn_paired(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session, sink = await open_session(tmp_path, TOOL_SCRIPT)
    record = raise_once(Transcript.record_message, lambda _self, m, _t: bool(m.tool_uses()))
    monkeypatch.setattr(Transcript, "record_message", record)
    turn, _ = session.submit("look around")
    end = await sink.completed(turn)
    assert end["stopReason"] in ("error", "end_turn"), end
    await assert_still_usable(session, sink)


async def test_a_client_that_cannot_take_events_still_gets_its_turn_ended(
    tmp_path: Path,
) -> None:
    session, sink = await open_session(tmp_path, TOOL_SCRIPT, Sink(fail_on="text_delta"))
    turn, _ = session.submit("look around")
    end = await sink.completed(turn)
    assert end["stopReason"] == "end_turn"
    await assert_still_usable(session, sink)


async def test_a_fault_recording_the_turn_end_still_sends_one_turn_completed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session, sink = await open_session(tmp_path, SCRIPT)
    touch = raise_once(Transcript.touch, lambda _self, **k: bool(k.get("turn_done")))
    monkeypatch.setattr(Transcript, "touch", touch)
    turn, _ = session.submit("hello")
    internal_error(await sink.completed(turn))
    await assert_still_usable(session, sink)


async def test_a_fault_in_a_compaction_ends_the_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentls.loop import run

    session, sink = await open_session(tmp_path, SCRIPT)

    async def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("injected fault")

    monkeypatch.setattr(run, "prepare_context", broken, raising=True)
    turn, _ = session.submit("hello")
    internal_error(await sink.completed(turn))
    monkeypatch.undo()
    await assert_still_usable(session, sink)


async def test_lone_surrogates_in_text_and_data_give_a_normal_turn(tmp_path: Path) -> None:
    session, sink = await open_session(tmp_path, SCRIPT)
    turn, _ = session.submit("odd \ud800 text", data={"k\udfff": ["\ud83d"]}, intent="\udc80")
    end = await sink.completed(turn)
    assert end["stopReason"] == "end_turn"
    user = next(m for m in session.history if m.role == "user")
    json.dumps([b.text for b in user.content if hasattr(b, "text")]).encode("utf-8")
    assert "odd \ufffd text" in user.text()
    loaded = load_transcript(session.transcript.path)
    assert loaded.state.structured_data == {"k\ufffd": ["\ufffd"]}
    await assert_still_usable(session, sink)


async def test_data_that_is_not_json_ends_the_turn_with_an_internal_error(tmp_path: Path) -> None:
    session, sink = await open_session(tmp_path, SCRIPT)
    turn, _ = session.submit("hello", data={"when": object()})
    internal_error(await sink.completed(turn))
    await assert_still_usable(session, sink)


async def test_a_broken_turn_is_recorded_as_ended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session, sink = await open_session(tmp_path, SCRIPT)
    monkeypatch.setattr(
        turn_start, "user_context", raise_once(turn_start.user_context, lambda *a, **k: 1)
    )
    turn, _ = session.submit("hello")
    await sink.completed(turn)
    lines = session.transcript.path.read_text(encoding="utf-8").splitlines()
    ends = [json.loads(line) for line in lines if '"type": "turn"' in line]
    assert [(e["turnId"], e["stopReason"], e.get("errorCode")) for e in ends] == [
        (turn, "error", "internal_error")
    ]
