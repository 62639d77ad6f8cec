"""Live sessions are bounded: a daemon that opened and closed 200 sessions holds no more
file descriptors than before; a cap on live sessions is a clear error; idle sessions close."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from wire_client import Daemon, Message, WireClient

SCRIPT = [{"text": "done"}]


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        line = next(line for line in status if line.startswith("VmRSS:"))
    return int(line.split()[1])


async def cycle(client: WireClient, workspace: Path, turn: bool) -> None:
    """One session opened (a turn run in it when `turn`), then closed."""
    params = {"cwd": str(workspace), "provider": "scripted", "script": SCRIPT}
    session = (await client.request("agent/newSession", params))["sessionId"]
    if turn:
        submitted = {"sessionId": session, "text": "go"}
        await client.request("agent/submitMessage", submitted)
        await client.wait_for(lambda: bool(client.of_type(session, "turn_completed")))
    await client.request("agent/closeSession", {"sessionId": session})


async def test_two_hundred_sessions_opened_and_closed_leave_no_descriptors(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    daemon = await Daemon.spawn(["--stdio"], {"AGENTLS_HOME": str(tmp_path / "home")}, True)
    client = daemon.stdio_client()
    try:
        await client.initialize()
        pid = daemon.process.pid
        for n in range(10):  # what the first sessions load once (SDKs, caches) is not a leak
            await cycle(client, workspace, n % 2 == 0)
        fds, rss = open_fds(pid), rss_kb(pid)
        for n in range(200):
            await cycle(client, workspace, n % 10 == 0)
        assert open_fds(pid) <= fds + fds // 10, os.listdir(f"/proc/{pid}/fd")
        # A generous leak check: what 200 sessions would hold if nothing were freed.
        assert rss_kb(pid) < rss + 100_000
        listed = await client.request("agent/listSessions", {"limit": 500})
        assert len(listed["sessions"]) == 210
    finally:
        await client.close()
        await daemon.end()


async def started(tmp_path: Path, options: dict[str, object]) -> tuple[Daemon, WireClient, Path]:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    daemon = await Daemon.spawn(["--stdio"], {"AGENTLS_HOME": str(tmp_path / "home")}, True)
    client = daemon.stdio_client()
    await client.initialize(options)
    return daemon, client, workspace


async def new_session(client: WireClient, workspace: Path, script: list[Message]) -> Message:
    params = {"cwd": str(workspace), "provider": "scripted", "script": script}
    response = await client.start_request("agent/newSession", params)
    return response


async def test_a_cap_on_live_sessions_is_a_clear_error(tmp_path: Path) -> None:
    daemon, client, workspace = await started(tmp_path, {"maxLiveSessions": 2})
    try:
        ids = [(await new_session(client, workspace, SCRIPT))["result"]["sessionId"] for _ in "ab"]
        refused = await new_session(client, workspace, SCRIPT)
        assert refused["error"]["code"] == 1008
        assert "maxLiveSessions is 2" in refused["error"]["message"]
        assert "agent/closeSession" in refused["error"]["message"]
        await client.request("agent/closeSession", {"sessionId": ids[0]})
        third = await new_session(client, workspace, SCRIPT)
        assert "result" in third
        # Resuming a closed session makes it live again: the cap holds there too.
        resumed = await client.start_request("agent/resumeSession", {"sessionId": ids[0]})
        assert resumed["error"]["code"] == 1008
        # A live one is only attached again.
        again = await client.start_request("agent/resumeSession", {"sessionId": ids[1]})
        assert "result" in again
    finally:
        await client.close()
        await daemon.end()


async def test_an_idle_session_is_closed_but_never_one_whose_turn_waits(tmp_path: Path) -> None:
    # 2 s: the waiting session must get its submit in before it could count as idle.
    daemon, client, workspace = await started(tmp_path, {"sessionIdleTimeout": 2})
    asks = [{"tool_calls": [{"id": "b1", "name": "Bash", "input": {"command": "true"}}]}]
    try:
        idle = (await new_session(client, workspace, SCRIPT))["result"]["sessionId"]
        waiting = (await new_session(client, workspace, [*asks, {"text": "ran"}]))["result"]
        waiting_id = waiting["sessionId"]
        await client.request("agent/submitMessage", {"sessionId": waiting_id, "text": "run"})
        await client.wait_for(lambda: bool(client.of_type(waiting_id, "permission_request")))
        await asyncio.sleep(6)
        gone = await client.start_request("agent/listTasks", {"sessionId": idle})
        assert gone["error"]["code"] == 1001
        request = client.of_type(waiting_id, "permission_request")[0]
        answer = {"sessionId": waiting_id, "requestId": request["requestId"]}
        await client.request("agent/respondPermission", {**answer, "optionId": "allow_once"})
        await client.wait_for(lambda: bool(client.of_type(waiting_id, "turn_completed")))
        assert client.of_type(waiting_id, "turn_completed")[0]["stopReason"] == "end_turn"
        resumed = await client.request("agent/resumeSession", {"sessionId": idle})
        assert resumed["sessionId"] == idle
    finally:
        await client.close()
        await daemon.end()
