"""AgentSession: the turn queue, steering, interrupts, abort and the transcript."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from agentls.errors import InvalidParams, UnknownPermissionRequest, UnknownSession
from agentls.permissions.asking import PermissionAnswer
from agentls.session.manager import SessionManager
from agentls.wire import json_sink


class Sink:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.waiters: dict[str, asyncio.Event] = {}

    def __call__(self, event: dict[str, Any]) -> None:
        self.events.append(event)
        if event["type"] == "turn_completed":
            self.waiters.setdefault(event["turnId"], asyncio.Event()).set()

    async def done(self, turn_id: str) -> dict[str, Any]:
        await asyncio.wait_for(self.waiters.setdefault(turn_id, asyncio.Event()).wait(), 10)
        return next(
            e for e in self.events if e["type"] == "turn_completed" and e["turnId"] == turn_id
        )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


async def make_session(tmp_path: Path, home: Path, script: list[dict[str, Any]], **over: Any):
    sink = Sink()
    manager = SessionManager(json_sink(sink), env={"AGENTLS_HOME": str(home)})
    session = await manager.create(tmp_path, {"provider": "scripted", "script": script, **over})
    return manager, session, sink


async def test_queued_turns_run_one_after_another(tmp_path: Path, home: Path) -> None:
    _m, session, sink = await make_session(
        tmp_path, home, [{"text": "one", "delay": 0.01, "chunk": 1}, {"text": "two"}]
    )
    first, queued_first = session.submit("a")
    second, queued_second = session.submit("b")
    assert (queued_first, queued_second) == (False, True)
    await sink.done(second)
    order = [(e["type"], e["turnId"]) for e in sink.events if e["type"].startswith("turn_")]
    assert order == [
        ("turn_started", first),
        ("turn_completed", first),
        ("turn_started", second),
        ("turn_completed", second),
    ]
    seqs = [e["seq"] for e in sink.events]
    assert seqs == list(range(1, len(seqs) + 1))


async def test_steering_reaches_the_model_before_its_next_call(tmp_path: Path, home: Path) -> None:
    log = tmp_path / "requests.jsonl"
    _m, session, sink = await make_session(
        tmp_path,
        home,
        [
            {
                "text": "working",
                "delay": 0.05,
                "tool_calls": [{"name": "Glob", "input": {"pattern": "*"}}],
            },
            {"text": "done"},
        ],
        requestLog=str(log),
    )
    turn, _ = session.submit("start")
    steered_turn, queued = session.submit("use the tests folder", delivery="steer")
    assert steered_turn == turn and queued is False
    await sink.done(turn)
    second = json.loads(log.read_text().splitlines()[1])
    last = second["messages"][-1]["content"]
    assert last[0]["type"] == "tool_result" and last[-1]["text"] == "use the tests folder"


async def test_interrupt_aborts_the_running_turn_then_runs(tmp_path: Path, home: Path) -> None:
    _m, session, sink = await make_session(
        tmp_path, home, [{"text": "long", "hang": True}, {"text": "new answer"}]
    )
    first, _ = session.submit("slow")
    await asyncio.sleep(0.05)
    second, queued = session.submit("do this instead", delivery="interrupt")
    assert queued is True
    assert (await sink.done(first))["stopReason"] == "aborted"
    assert (await sink.done(second))["stopReason"] == "end_turn"


async def test_abort_drops_queued_turns_with_one_turn_completed_each(
    tmp_path: Path, home: Path
) -> None:
    _m, session, sink = await make_session(tmp_path, home, [{"text": "x", "hang": True}])
    running, _ = session.submit("a")
    queued, _ = session.submit("b")
    await asyncio.sleep(0.05)
    assert session.abort() is True
    assert (await sink.done(running))["stopReason"] == "aborted"
    assert (await sink.done(queued))["stopReason"] == "aborted"
    completions = [e for e in sink.events if e["type"] == "turn_completed"]
    assert len(completions) == 2
    assert session.abort() is False


async def test_transcript_holds_every_complete_message(tmp_path: Path, home: Path) -> None:
    _m, session, sink = await make_session(
        tmp_path,
        home,
        [{"tool_calls": [{"id": "g", "name": "Glob", "input": {"pattern": "*"}}]}, {"text": "ok"}],
    )
    turn, _ = session.submit("go")
    await sink.done(turn)
    lines = [json.loads(line) for line in session.transcript.path.read_text().splitlines()]
    assert lines[0]["type"] == "session"
    roles = [r["message"]["role"] for r in lines if r["type"] == "message"]
    assert roles == ["user", "assistant", "user", "assistant"]
    assert lines[-1]["type"] == "turn" and lines[-1]["stopReason"] == "end_turn"
    assert session.transcript.path.is_relative_to(home)


async def test_permission_answers_are_checked(tmp_path: Path, home: Path) -> None:
    manager, session, sink = await make_session(
        tmp_path,
        home,
        [
            {"tool_calls": [{"name": "Write", "input": {"file_path": "n.txt", "content": "x"}}]},
            {"text": "ok"},
        ],
    )
    turn, _ = session.submit("write")
    for _ in range(100):
        asks = [e for e in sink.events if e["type"] == "permission_request"]
        if asks:
            break
        await asyncio.sleep(0.01)
    request_id = asks[0]["requestId"]
    with pytest.raises(InvalidParams):
        session.answers.respond_permission(request_id, PermissionAnswer("maybe"))
    session.answers.respond_permission(request_id, PermissionAnswer("allow_once"))
    with pytest.raises(UnknownPermissionRequest):
        session.answers.respond_permission(request_id, PermissionAnswer("allow_once"))
    assert (await sink.done(turn))["stopReason"] == "end_turn"
    assert (tmp_path / "n.txt").read_text() == "x"
    with pytest.raises(UnknownSession):
        manager.get("sess_missing")


async def test_set_model_and_mode_apply_to_the_next_turn(tmp_path: Path, home: Path) -> None:
    log = tmp_path / "requests.jsonl"
    manager, session, sink = await make_session(
        tmp_path, home, [{"text": "a"}], requestLog=str(log)
    )
    await manager.set_model(session.id, "scripted-2", None)
    session.set_permission_mode("plan")
    turn, _ = session.submit("hi")
    await sink.done(turn)
    assert json.loads(log.read_text().splitlines()[0])["model"] == "scripted-2"
    assert session.gate.mode == "plan"


async def test_an_interrupted_turn_takes_its_steering_with_it(tmp_path: Path, home: Path) -> None:
    log = tmp_path / "requests.jsonl"
    _m, session, sink = await make_session(
        tmp_path, home, [{"text": "long", "hang": True}, {"text": "new"}], requestLog=str(log)
    )
    first, _ = session.submit("slow")
    await asyncio.sleep(0.05)
    session.submit("also this", delivery="steer")
    second, _ = session.submit("instead", delivery="interrupt")
    assert (await sink.done(first))["stopReason"] == "aborted"
    assert (await sink.done(second))["stopReason"] == "end_turn"
    started = [e["turnId"] for e in sink.events if e["type"] == "turn_started"]
    assert started == [first, second]
    last = json.loads(log.read_text().splitlines()[-1])["messages"][-1]["content"][-1]["text"]
    assert last == "instead"


async def test_a_session_reads_and_edits_through_the_window_it_was_last_attached_to(
    tmp_path: Path, home: Path
) -> None:
    from agentls.workspace.link import EditorLink
    from agentls.workspace.view import OpenDocument

    path = tmp_path / "a.py"
    path.write_text("on disk\n", encoding="utf-8")
    first = EditorLink({path: OpenDocument(path, "first window\n", 3)})
    second = EditorLink({path: OpenDocument(path, "second window\n", 9)})
    manager = SessionManager(json_sink(Sink()), env={"AGENTLS_HOME": str(home)})
    session = await manager.create(tmp_path, {"provider": "scripted", "script": []}, first)
    assert session.workspace.read_text(path) == "first window\n"
    manager.attach(session.id, second)
    assert session.workspace.read_text(path) == "second window\n"
    again, _display = await manager.resume(session.id, None, first)
    assert again is session
    assert session.workspace.read_text(path) == "first window\n"


async def test_two_resumes_of_a_closed_session_start_it_once(tmp_path: Path, home: Path) -> None:
    manager, session, _sink = await make_session(tmp_path, home, [{"text": "ok"}])
    await manager.close(session.id)
    (first, _), (second, _) = await asyncio.gather(
        manager.resume(session.id), manager.resume(session.id)
    )
    assert first is second is manager.sessions[session.id]
    await manager.close_all()


async def test_a_resume_sent_with_a_delete_never_brings_the_session_back(
    tmp_path: Path, home: Path
) -> None:
    # Fuzzing found it: the resume reopened the transcript the delete had just removed,
    # and the next resume met an empty file.
    manager, session, _sink = await make_session(tmp_path, home, [{"text": "ok"}])
    deleted, resumed = await asyncio.gather(
        manager.delete(session.id), manager.resume(session.id), return_exceptions=True
    )
    assert deleted == ()
    assert isinstance(resumed, (UnknownSession, tuple))
    if isinstance(resumed, tuple):  # the resume went first: the delete closed it after
        assert session.id not in manager.sessions
    assert not list((home / "sessions").glob(f"{session.id}*"))
    with pytest.raises(UnknownSession):
        await manager.resume(session.id)
    await manager.close_all()
