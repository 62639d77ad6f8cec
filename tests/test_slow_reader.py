"""An editor that stops reading the daemon's stdout holds up only its own output.

The daemon must go on meanwhile (other sessions' turns run and are recorded, SIGTERM is
handled), lose nothing the editor reads later, and drop a reader that never comes back
once it left `AGENTLS_UNREAD_LIMIT_MB` unread, rather than grow without bound.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from wire_client import Daemon, Message, WireClient

# About 2 MB of events: far more than a pipe and the client's stream buffer hold.
FLOOD_TEXT = "".join(
    f"line {n:05d} of the flood, streamed to nobody reading\n" for n in range(20_000)
)
WORKER = [
    {"tool_calls": [{"id": "b1", "name": "Bash", "input": {"command": "echo step"}}]},
    {"text": "done"},
]


def flood(hang: bool = False) -> list[dict[str, Any]]:
    return [{"text": FLOOD_TEXT, "chunk": 100, "hang": hang}]


def turn_ends(home: Path, session: str) -> list[tuple[str, str]]:
    """The turns the session's transcript records as ended: (turnId, stopReason)."""
    path = home / "sessions" / f"{session}.jsonl"
    if not path.exists():
        return []
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [(r["turnId"], r["stopReason"]) for r in records if r["type"] == "turn"]


async def until(predicate: Any, timeout: float) -> bool:
    """Poll `predicate()` (a file on disk, not the wire) until it holds or time runs out."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def open_session(client: WireClient, cwd: Path, script: list[dict[str, Any]]) -> str:
    params = {
        "cwd": str(cwd),
        "provider": "scripted",
        "script": script,
        "permissionMode": "bypassPermissions",
    }
    session: str = (await client.request("agent/newSession", params))["sessionId"]
    return session


async def start(tmp_path: Path, env: dict[str, str] | None = None) -> tuple[Daemon, WireClient]:
    home = tmp_path / "home"
    daemon = await Daemon.spawn(["--stdio"], {"AGENTLS_HOME": str(home), **(env or {})}, True)
    client = daemon.stdio_client()
    await client.initialize()
    return daemon, client


def text_of(events: list[Message]) -> str:
    return "".join(e["text"] for e in events if e["type"] == "text_delta")


def assert_whole(events: list[Message]) -> None:
    """Every event of the session, in order, and exactly one turn_completed per turn."""
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    ends = [e for e in events if e["type"] == "turn_completed"]
    assert len(ends) == len({e["turnId"] for e in ends})


async def test_a_client_that_stops_reading_holds_up_only_its_own_output(
    tmp_path: Path, long_run: bool
) -> None:
    pause = 10.0 if long_run else 2.0
    daemon, client = await start(tmp_path)
    home = tmp_path / "home"
    flooded = await open_session(client, tmp_path, flood())
    worker = await open_session(client, tmp_path, WORKER)
    await client.request("agent/submitMessage", {"sessionId": flooded, "text": "flood"})
    client.stop_reading()
    stopped = time.monotonic()
    answer = client.start_request("agent/submitMessage", {"sessionId": worker, "text": "go"})
    # The worker's whole turn (a model call, Bash, another call) runs and is recorded
    # while the flood's output waits for the client.
    assert await until(lambda: turn_ends(home, worker), pause + 20), "the daemon froze"
    await daemon.stderr_line("the client is not reading")
    await asyncio.sleep(max(0.0, pause - (time.monotonic() - stopped)))
    assert turn_ends(home, worker)[0][1] == "end_turn"

    client.resume_reading()
    await asyncio.wait_for(answer, 30)
    await client.wait_for(
        lambda: all(client.of_type(s, "turn_completed") for s in (flooded, worker))
    )
    assert text_of(client.events[flooded]) == FLOOD_TEXT
    for session in (flooded, worker):
        assert_whole(client.events[session])
    updates = client.of_type(worker, "tool_call_update")
    assert any(u["status"] == "completed" and "step" in u.get("content", "") for u in updates)
    await client.request("shutdown", None)
    client.notify("exit", {})
    assert await daemon.exit_code() == 0


async def test_sigterm_is_handled_while_the_client_is_not_reading(
    tmp_path: Path, long_run: bool
) -> None:
    pause = 10.0 if long_run else 1.0
    daemon, client = await start(tmp_path)
    home = tmp_path / "home"
    session = await open_session(client, tmp_path, flood(hang=True))
    turn = (await client.request("agent/submitMessage", {"sessionId": session, "text": "go"}))[
        "turnId"
    ]
    client.stop_reading()
    await asyncio.sleep(pause)  # the flood fills the pipe within milliseconds
    daemon.process.terminate()
    # Ended and recorded while nobody reads; then the client gets the rest, and the end.
    assert await until(lambda: turn_ends(home, session), 20), "SIGTERM was not handled"
    assert turn_ends(home, session) == [(turn, "aborted")]
    client.resume_reading()
    await asyncio.wait_for(client.closed.wait(), 30)
    events = client.events[session]
    assert text_of(events) == FLOOD_TEXT
    assert_whole(events)
    assert [(e["turnId"], e["stopReason"]) for e in client.of_type(session, "turn_completed")] == [
        (turn, "aborted")
    ]
    assert await daemon.exit_code() == 0


async def test_a_reader_that_never_comes_back_is_dropped_at_the_limit(tmp_path: Path) -> None:
    daemon, client = await start(tmp_path, {"AGENTLS_UNREAD_LIMIT_MB": "0.5"})
    home = tmp_path / "home"
    session = await open_session(client, tmp_path, flood(hang=True))
    turn = (await client.request("agent/submitMessage", {"sessionId": session, "text": "go"}))[
        "turnId"
    ]
    client.stop_reading()
    # The daemon ends by itself, as on EOF: the turn aborted and recorded, exit 0.
    assert await until(lambda: daemon.process.returncode is not None, 60)
    assert turn_ends(home, session) == [(turn, "aborted")]
    line = await daemon.stderr_line("left")
    assert "unread" in line and "closing its connection" in line
    client.resume_reading()  # only to let the pipe reach its end
    assert await daemon.exit_code() == 0
