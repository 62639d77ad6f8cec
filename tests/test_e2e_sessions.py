"""Sessions that last: listing, resume after a clean close, and resume after SIGKILL."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from agent_client import read_requests, running_daemon, write_script
from agentls.pairing import INTERRUPTED


def paired(request: dict) -> bool:
    messages = request["messages"]
    for i, message in enumerate(messages):
        calls = {b["id"] for b in message["content"] if b["type"] == "tool_use"}
        if calls:
            nxt = messages[i + 1]["content"] if i + 1 < len(messages) else []
            got = [b["tool_use_id"] for b in nxt if b["type"] == "tool_result"]
            if sorted(got) != sorted(calls):
                return False
    return True


async def test_sessions_are_listed_newest_first_with_titles_and_pages(tmp_path: Path) -> None:
    async with running_daemon(tmp_path) as client:
        ids = []
        for text in ("first task\nmore", "second task", "third task"):
            session = await client.new_session(
                tmp_path, provider="scripted", script=[{"text": "ok"}]
            )
            await client.run_turn(session["sessionId"], text)
            ids.append(session["sessionId"])
        page = await client.request("agent/listSessions", {"cwd": str(tmp_path), "limit": 2})
        assert [s["sessionId"] for s in page["sessions"]] == [ids[2], ids[1]]
        assert page["sessions"][0]["title"] == "third task"
        assert page["sessions"][0]["turns"] == 1
        assert page["sessions"][0]["cwd"] == str(tmp_path.resolve())
        rest = await client.request(
            "agent/listSessions", {"cwd": str(tmp_path), "limit": 2, "cursor": page["nextCursor"]}
        )
        assert [s["sessionId"] for s in rest["sessions"]] == [ids[0]]
        assert rest["sessions"][0]["title"] == "first task"
        assert "nextCursor" not in rest
        other = await client.request("agent/listSessions", {"cwd": str(tmp_path / "elsewhere")})
        assert other["sessions"] == []


async def test_resume_after_a_clean_close_continues_the_conversation(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    log = tmp_path / "requests.jsonl"
    first = [
        {"tool_calls": [{"id": "r1", "name": "Read", "input": {"file_path": "a.txt"}}]},
        {"text": "It says alpha."},
    ]
    async with running_daemon(tmp_path) as client:
        session = await client.new_session(tmp_path, provider="scripted", script=first)
        sid = session["sessionId"]
        await client.run_turn(sid, "what is in a.txt?", data={"rows": [1, 2]}, intent="inspect")
        await client.request("agent/closeSession", {"sessionId": sid})
    async with running_daemon(tmp_path) as client:
        resumed = await client.request(
            "agent/resumeSession",
            {"sessionId": sid, "script": [{"text": "Still alpha."}], "requestLog": str(log)},
        )
        assert resumed["sessionId"] == sid
        roles = [m["role"] for m in resumed["messages"]]
        assert roles == ["user", "assistant", "user", "assistant"]
        assert resumed["messages"][1]["content"][0]["name"] == "Read"
        _turn, done = await client.run_turn(sid, "and now?")
        assert done["stopReason"] == "end_turn"
    request = read_requests(log)[0]
    assert paired(request)
    assert [m["role"] for m in request["messages"]] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert "alpha" in request["messages"][2]["content"][0]["content"]


async def test_resume_after_sigkill_mid_turn_repairs_the_history(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    script = write_script(
        tmp_path / "script.jsonl",
        [
            {
                "text": "Starting.",
                "tool_calls": [{"id": "slow", "name": "Bash", "input": {"command": "sleep 30"}}],
            },
        ],
    )
    async with running_daemon(tmp_path) as client:
        session = await client.new_session(
            tmp_path, provider="scripted", script=str(script), permissionMode="bypassPermissions"
        )
        sid = session["sessionId"]
        await client.request("agent/submitMessage", {"sessionId": sid, "text": "run it"})
        await client.events.wait_for(
            lambda e: e["type"] == "tool_call_update" and e["status"] == "in_progress"
        )
        process = client._server
        assert process is not None
        os.kill(process.pid, signal.SIGKILL)
        await asyncio.wait_for(process.wait(), 10)
        client.capabilities = None  # the daemon is gone: nothing to shut down
    async with running_daemon(tmp_path) as client:
        resumed = await client.request(
            "agent/resumeSession",
            {"sessionId": sid, "script": [{"text": "Recovered."}], "requestLog": str(log)},
        )
        contents = [b for m in resumed["messages"] for b in m["content"]]
        assert {
            "type": "tool_use",
            "id": "slow",
            "name": "Bash",
            "input": {"command": "sleep 30"},
        } in contents
        results = [b for b in contents if b["type"] == "tool_result"]
        assert results[-1]["toolUseId"] == "slow" and results[-1]["content"] == INTERRUPTED
        _turn, done = await client.run_turn(sid, "continue")
        assert done["stopReason"] == "end_turn"
    request = read_requests(log)[0]
    assert paired(request)
    assert request["messages"][1]["content"][0] == {"type": "text", "text": "Starting."}


async def test_resume_of_an_unknown_session_is_1001(tmp_path: Path) -> None:
    async with running_daemon(tmp_path) as client:
        for bad in ("sess_doesnotexist", "../../etc/passwd"):
            with pytest.raises(JsonRpcException) as error:
                await client.request("agent/resumeSession", {"sessionId": bad})
            assert error.value.code == 1001


async def test_session_state_survives_a_crash_and_is_recapped(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    first = [
        {
            "tool_calls": [
                {"id": "w", "name": "Write", "input": {"file_path": "out.txt", "content": "1"}}
            ]
        },
        {"tool_calls": [{"id": "ask", "name": "AskUser", "input": {"question": "Ship it?"}}]},
    ]
    second = [
        {"tool_calls": [{"id": "q", "name": "QueryData", "input": {"expression": "rows[1]"}}]},
        {"text": "Row two is b."},
    ]
    async with running_daemon(tmp_path) as client:
        session = await client.new_session(
            tmp_path, provider="scripted", script=first, permissionMode="bypassPermissions"
        )
        sid = session["sessionId"]
        await client.request(
            "agent/submitMessage",
            {"sessionId": sid, "text": "go", "data": {"rows": ["a", "b"]}, "intent": "ship"},
        )
        await client.events.wait_for(lambda e: e["type"] == "ask_user")
        process = client._server
        assert process is not None
        os.kill(process.pid, signal.SIGKILL)
        await asyncio.wait_for(process.wait(), 10)
        client.capabilities = None
    async with running_daemon(tmp_path) as client:
        await client.request(
            "agent/resumeSession", {"sessionId": sid, "script": second, "requestLog": str(log)}
        )
        _turn, done = await client.run_turn(sid, "well?")
        assert done["stopReason"] == "end_turn"
    requests = read_requests(log)
    assert paired(requests[0])
    # The interrupted turn's results and this turn's message go as one user message.
    context = "".join(b.get("text", "") for b in requests[0]["messages"][-1]["content"])
    assert "<completedSteps>" in context and "Write out.txt" in context
    assert "<unansweredQuestions>" in context and "Ship it?" in context
    result = requests[1]["messages"][-1]["content"][0]
    assert result["tool_use_id"] == "q" and '"b"' in result["content"]
