"""15 reattach: a window that reloads mid-turn and resumes the running session.

Through a real `agentls --tcp` daemon: a window starts a turn that streams about 1,000 text
deltas and then waits on a permission request, and goes away; a new window connects,
resumes the session with the `lastSeq` of the turn's start, and gets the turn's events
again. Timed: the resumeSession answer, and answer → the permission request it can answer
(the last event sent again), with the number of events resent. Also the cost the held
events add to every event a session sends (EventOut.emit with and without the buffer).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from agentls.events import SessionEvent, TextDeltaEvent
from agentls.redact import Masker
from agentls.session.events_out import EventOut, RecentEvents
from harness import TESTS_DIR, Row, timing_rows

sys.path.insert(0, TESTS_DIR)

from tcp_daemon import TcpDaemon, start_tcp_daemon
from wire_client import WireClient, tcp_client

SECTION = "15 reattach after a window reload"
WRITE = {"id": "w1", "name": "Write", "input": {"file_path": "new.txt", "content": "hi\n"}}
SCRIPT = [{"text": "ab" * 1000, "chunk": 2, "tool_calls": [WRITE]}]


async def _window(daemon: TcpDaemon) -> WireClient:
    client = await tcp_client(daemon.port)
    await client.initialize({"authToken": daemon.token})
    return client


async def _one(daemon: TcpDaemon, root: Path) -> tuple[float, float, int]:
    first = await _window(daemon)
    params = {"cwd": str(root), "provider": "scripted", "script": SCRIPT}
    session = (await first.request("agent/newSession", params))["sessionId"]
    await first.request("agent/submitMessage", {"sessionId": session, "text": "go"})
    await first.wait_for(lambda: bool(first.of_type(session, "permission_request")))
    since = first.of_type(session, "turn_started")[0]["seq"]
    await first.close()

    second = await _window(daemon)
    start = time.perf_counter()
    resume = {"sessionId": session, "lastSeq": since}
    resumed = await second.request("agent/resumeSession", resume)
    answered = time.perf_counter()
    await second.wait_for(lambda: bool(second.of_type(session, "permission_request")))
    replayed = time.perf_counter()
    count = sum(1 for e in second.events[session] if e["seq"] <= resumed["lastSeq"])
    await second.request("agent/abort", {"sessionId": session})
    await second.close()
    return answered - start, replayed - answered, count


async def _through_daemon(runs: int) -> list[Row]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        daemon = await start_tcp_daemon(env={"AGENTLS_HOME": str(root / "home")})
        try:
            await _one(daemon, root)  # the first session pays for the core's imports
            samples = [await _one(daemon, root) for _ in range(runs)]
        finally:
            await daemon.stop()
    count = samples[-1][2]
    return [
        *timing_rows(SECTION, "agent/resumeSession of a running session", [s[0] for s in samples]),
        *timing_rows(
            SECTION,
            "answer → the waiting permission_request resent",
            [s[1] for s in samples],
            f"{count} events resent",
        ),
    ]


class _Unheld(RecentEvents):
    def add(self, envelope: SessionEvent) -> None:
        pass


def _emit_cost(recent: RecentEvents, events: int) -> float:
    """Seconds per EventOut.emit of a text delta with `recent` holding the events."""
    sent: list[Any] = []
    out = EventOut("sess_bench", sent.append, Masker())
    out.recent = recent
    delta = TextDeltaEvent("msg_1", "ab")
    start = time.perf_counter()
    for _ in range(events):
        out.emit(delta, "turn_1")
    return (time.perf_counter() - start) / events


def _emit_rows(quick: bool) -> list[Row]:
    events = 50_000 if quick else 200_000
    held = min(_emit_cost(RecentEvents(), events) for _ in range(3))
    unheld = min(_emit_cost(_Unheld(), events) for _ in range(3))
    note = f"without the buffer {unheld * 1e6:.2f} µs; ×{held / unheld:.2f}"
    return [Row(SECTION, "EventOut.emit per event, events held", held * 1e6, "µs", note)]


def run(quick: bool) -> list[Row]:
    return asyncio.run(_through_daemon(3 if quick else 7)) + _emit_rows(quick)
