"""Turns outlive the window: a real `agentls --tcp` daemon, and windows that go away mid-turn.

The window that comes back lists the session as running, resumes it with the last `seq` it
saw and gets every later event exactly once (the missed ones again, then the live ones),
answers the permission request that waited, and sees the turn's one `turn_completed`. A
turn nobody comes back for is aborted after `detachedTurnTimeout` and recorded; a session
with no turn to run still closes with its last window.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agentls.events import SessionEvent, TextDeltaEvent
from agentls.redact import Masker
from agentls.session.events_out import EventOut, RecentEvents
from tcp_daemon import TcpDaemon, start_tcp_daemon
from wire_client import Daemon, WireClient, tcp_client

Message = dict[str, Any]
WRITE = {"id": "w1", "name": "Write", "input": {"file_path": "new.txt", "content": "hi\n"}}
# Streamed slowly, so that most of it goes out while no window is attached.
SLOW_TEXT = {"text": "Writing the file now. " * 12, "chunk": 6, "delay": 0.02}


@pytest.fixture
async def daemon(tmp_path: Path) -> AsyncIterator[TcpDaemon]:
    started = await start_tcp_daemon(env={"AGENTLS_HOME": str(tmp_path / "home")})
    yield started
    await started.stop()


async def window(daemon: TcpDaemon, **options: Any) -> WireClient:
    client = await tcp_client(daemon.port)
    await client.initialize({"authToken": daemon.token, **options})
    return client


async def start_turn(client: WireClient, cwd: Path, script: list[Message]) -> tuple[str, str]:
    params = {"cwd": str(cwd), "provider": "scripted", "script": script}
    session = (await client.request("agent/newSession", params))["sessionId"]
    submitted = await client.request("agent/submitMessage", {"sessionId": session, "text": "go"})
    return session, submitted["turnId"]


async def listed(client: WireClient, session: str) -> Message:
    sessions = (await client.request("agent/listSessions", {}))["sessions"]
    entry: Message = next(s for s in sessions if s["sessionId"] == session)
    return entry


async def closed(client: WireClient, session: str) -> bool:
    """Whether the daemon has closed the session (a request about it answers 1001)."""
    for _ in range(300):
        response = await client.start_request("agent/listTasks", {"sessionId": session})
        if response.get("error", {}).get("code") == 1001:
            return True
        await asyncio.sleep(0.1)
    return False


def turn_records(home: Path, session: str) -> list[Message]:
    lines = (home / "sessions" / f"{session}.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r["type"] == "turn"]


def streamed_text(events: list[Message], message_id: str) -> str:
    deltas = (e for e in events if e["type"] == "text_delta" and e["messageId"] == message_id)
    return "".join(e["text"] for e in deltas)


def test_recent_events_hold_the_running_turn_and_the_newest_past_their_bound() -> None:
    sent: list[SessionEvent] = []
    out = EventOut("sess_1", sent.append, Masker())
    out.recent = RecentEvents(limit=5)
    out.emit(TextDeltaEvent("m0", "before"), "turn_0")
    out.recent.turn_began()
    for n in range(3):
        out.emit(TextDeltaEvent("m1", str(n)), "turn_1")
    # A client that saw the turn start gets the rest; one that saw it all, nothing.
    assert [e.seq for e in out.recent.since(2)] == [3, 4]
    assert out.recent.since(4) == []
    # Events before the running turn began are not held: a replay starts at the turn.
    assert [e.seq for e in out.recent.since(0)] == [2, 3, 4]
    for n in range(4):
        out.emit(TextDeltaEvent("m1", str(n)), "turn_1")
    # Past the bound only the newest are held; the replay's first seq shows the gap.
    assert [e.seq for e in out.recent.since(1)] == [4, 5, 6, 7, 8]
    assert out.seq == 8 and [e.seq for e in sent] == list(range(1, 9))


async def test_a_window_that_comes_back_sees_every_event_once_and_answers_the_request(
    daemon: TcpDaemon, tmp_path: Path
) -> None:
    first = await window(daemon)
    script = [{**SLOW_TEXT, "tool_calls": [WRITE]}, {"text": "written"}]
    session, turn = await start_turn(first, tmp_path, script)
    await first.wait_for(lambda: bool(first.of_type(session, "text_delta")))
    seen = list(first.events[session])
    last_seq = seen[-1]["seq"]
    await first.close()

    # A window that comes and goes again watches the turn reach its permission request.
    watcher = await window(daemon)
    await watcher.request("agent/resumeSession", {"sessionId": session, "lastSeq": last_seq})
    await watcher.wait_for(lambda: bool(watcher.of_type(session, "permission_request")))
    await watcher.close()

    second = await window(daemon)
    entry = await listed(second, session)
    assert entry["running"] is True and entry["runningTurnId"] == turn
    resumed = await second.request(
        "agent/resumeSession", {"sessionId": session, "lastSeq": last_seq}
    )
    assert resumed["runningTurnId"] == turn
    # The request that waits was sent before this answer: it comes again, for this window.
    assert resumed["lastSeq"] >= watcher.of_type(session, "permission_request")[0]["seq"]
    await second.wait_for(lambda: bool(second.of_type(session, "permission_request")))
    asked = second.of_type(session, "permission_request")[0]
    answer = {"sessionId": session, "requestId": asked["requestId"], "optionId": "allow_once"}
    await second.request("agent/respondPermission", answer)
    await second.wait_for(lambda: bool(second.of_type(session, "turn_completed")))
    await asyncio.sleep(0.3)

    got = second.events[session]
    # Each seq after the one the first window saw exactly once, in order, no gap.
    assert [e["seq"] for e in got] == list(range(last_seq + 1, got[-1]["seq"] + 1))
    ended = [e for e in got if e["type"] == "turn_completed"]
    assert [(e["turnId"], e["stopReason"]) for e in ended] == [(turn, "end_turn")]
    reply = next(e for e in got if e["type"] == "message_completed" and e["role"] == "assistant")
    text = "".join(b["text"] for b in reply["content"] if b["type"] == "text")
    # What the first window read and what the second got make up the reply, once.
    assert streamed_text(seen + got, reply["messageId"]) == text
    # What was sent again is what the watching window got live, seq for seq.
    watched = {e["seq"]: e for e in watcher.events[session]}
    assert all(watched[e["seq"]] == e for e in got if e["seq"] in watched)
    assert (tmp_path / "new.txt").read_text() == "hi\n"
    assert "running" not in await listed(second, session)
    await second.close()


async def test_a_turn_nobody_comes_back_for_is_aborted_and_recorded(
    daemon: TcpDaemon, tmp_path: Path
) -> None:
    # Long enough for the second window to connect and list it while it still runs.
    first = await window(daemon, detachedTurnTimeout=3)
    session, turn = await start_turn(first, tmp_path, [{"tool_calls": [WRITE]}])
    await first.wait_for(lambda: bool(first.of_type(session, "permission_request")))
    await first.close()

    second = await window(daemon)
    assert (await listed(second, session))["runningTurnId"] == turn
    assert await closed(second, session)
    records = turn_records(tmp_path / "home", session)
    assert [(r["turnId"], r["stopReason"]) for r in records] == [(turn, "aborted")]
    assert "running" not in await listed(second, session)
    # Closed, it is rebuilt from a valid transcript: the refused call has its result.
    resumed = await second.request("agent/resumeSession", {"sessionId": session, "lastSeq": 9})
    assert "runningTurnId" not in resumed and resumed["lastSeq"] == 0
    results = [b for m in resumed["messages"] for b in m["content"] if b["type"] == "tool_result"]
    assert [b["toolUseId"] for b in results] == ["w1"]
    assert not (tmp_path / "new.txt").exists()
    await second.close()


async def test_a_detached_turn_that_ends_closes_its_session(
    daemon: TcpDaemon, tmp_path: Path
) -> None:
    first = await window(daemon)
    session, turn = await start_turn(first, tmp_path, [SLOW_TEXT])
    await first.wait_for(lambda: bool(first.of_type(session, "text_delta")))
    await first.close()

    second = await window(daemon)
    assert await closed(second, session)
    records = turn_records(tmp_path / "home", session)
    assert [(r["turnId"], r["stopReason"]) for r in records] == [(turn, "end_turn")]
    await second.close()


async def test_a_session_without_a_running_turn_closes_with_its_last_window(
    daemon: TcpDaemon, tmp_path: Path
) -> None:
    first = await window(daemon)
    session, _turn = await start_turn(first, tmp_path, [{"text": "done"}])
    await first.wait_for(lambda: bool(first.of_type(session, "turn_completed")))
    await first.close()

    second = await window(daemon)
    assert await closed(second, session)
    await second.close()


async def test_a_client_whose_turns_end_with_it_sees_them_aborted_when_it_goes(
    daemon: TcpDaemon, tmp_path: Path
) -> None:
    # `agentls run` connects so: Ctrl-C, and its turn is over, however it left.
    first = await window(daemon, detachedTurnTimeout=0)
    session, turn = await start_turn(first, tmp_path, [{"tool_calls": [WRITE]}])
    await first.wait_for(lambda: bool(first.of_type(session, "permission_request")))
    await first.close()

    second = await window(daemon)
    assert await closed(second, session)
    records = turn_records(tmp_path / "home", session)
    assert [(r["turnId"], r["stopReason"]) for r in records] == [(turn, "aborted")]
    await second.close()


RACING_TEXT = {"text": "one two three four " * 20, "chunk": 5, "delay": 0.01}


async def drop_and_come_back(daemon: TcpDaemon, cwd: Path, draw: random.Random) -> None:
    """A window leaves after a random number of events, another resumes with its lastSeq a
    random while later: every later event once, the reply whole, one turn_completed."""
    first = await window(daemon)
    script = [{**RACING_TEXT, "tool_calls": [WRITE]}, {"text": "written"}]
    session, turn = await start_turn(first, cwd, script)
    wanted = draw.randint(1, 40)
    await first.wait_for(lambda: len(first.events.get(session, [])) >= wanted)
    seen = list(first.events[session])
    await first.close()
    await asyncio.sleep(draw.uniform(0, 0.3))

    second = await window(daemon)
    resume = {"sessionId": session, "lastSeq": seen[-1]["seq"]}
    assert (await second.request("agent/resumeSession", resume))["runningTurnId"] == turn
    await second.wait_for(lambda: bool(second.of_type(session, "permission_request")))
    asked = second.of_type(session, "permission_request")[0]
    answer = {"sessionId": session, "requestId": asked["requestId"], "optionId": "reject_once"}
    await second.request("agent/respondPermission", answer)
    await second.wait_for(lambda: bool(second.of_type(session, "turn_completed")))
    got = second.events[session]
    assert [e["seq"] for e in got] == list(range(seen[-1]["seq"] + 1, got[-1]["seq"] + 1))
    reply = next(e for e in got if e["type"] == "message_completed" and e["role"] == "assistant")
    text = "".join(b["text"] for b in reply["content"] if b["type"] == "text")
    assert streamed_text(seen + got, reply["messageId"]) == text
    assert len(second.of_type(session, "turn_completed")) == 1
    await second.close()


async def test_a_window_reconnecting_at_any_moment_sees_every_event_once(
    daemon: TcpDaemon, tmp_path: Path, long_run: bool
) -> None:
    # Seeded in the normal run; under --long, many more drops at fresh random moments.
    draw = random.Random(None if long_run else 28)
    for _ in range(25 if long_run else 3):
        await drop_and_come_back(daemon, tmp_path, draw)


async def test_a_daemon_stopping_ends_and_records_a_detached_turn(
    daemon: TcpDaemon, tmp_path: Path
) -> None:
    first = await window(daemon)
    session, turn = await start_turn(first, tmp_path, [{"tool_calls": [WRITE]}])
    await first.wait_for(lambda: bool(first.of_type(session, "permission_request")))
    await first.close()
    second = await window(daemon)
    assert (await listed(second, session))["runningTurnId"] == turn
    await second.close()

    assert await daemon.stop() == 0
    records = turn_records(tmp_path / "home", session)
    assert [(r["turnId"], r["stopReason"]) for r in records] == [(turn, "aborted")]


async def test_a_socket_daemon_idle_for_want_of_windows_waits_for_its_detached_turn(
    tmp_path: Path,
) -> None:
    # The warm daemon exits when no connection comes for --idle-timeout seconds; a turn
    # running with no window must not be cut short by that (its detachedTurnTimeout rules).
    path = tmp_path / "sock" / "agentls.sock"
    env = {"AGENTLS_HOME": str(tmp_path / "home")}
    daemon = await Daemon.spawn(["--socket", str(path), "--idle-timeout", "1"], env)
    try:
        await daemon.stderr_line("listening on")
        reader, writer = await asyncio.open_unix_connection(str(path))
        first = WireClient(reader, writer)
        await first.initialize({})
        session, turn = await start_turn(first, tmp_path, [{"tool_calls": [WRITE]}])
        await first.wait_for(lambda: bool(first.of_type(session, "permission_request")))
        await first.close()
        await asyncio.sleep(3)  # three idle timeouts with only the detached session
        assert daemon.process.returncode is None
        reader, writer = await asyncio.open_unix_connection(str(path))
        second = WireClient(reader, writer)
        await second.initialize({})
        resumed = await second.request("agent/resumeSession", {"sessionId": session, "lastSeq": 0})
        assert resumed["runningTurnId"] == turn
        await second.wait_for(lambda: bool(second.of_type(session, "permission_request")))
        request = second.of_type(session, "permission_request")[0]
        answer = {"sessionId": session, "requestId": request["requestId"]}
        await second.request("agent/respondPermission", {**answer, "optionId": "allow_once"})
        await second.wait_for(lambda: bool(second.of_type(session, "turn_completed")))
        assert (tmp_path / "new.txt").read_text() == "hi\n"
        await second.close()
        # With nothing left running, it idles out as before.
        assert await daemon.exit_code(timeout=30) == 0
    finally:
        await daemon.end()
