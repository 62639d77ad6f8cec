"""`agentls acp` end to end, the parts ACP clients lack or got late: steering and queueing
through `/steer` and `/queue`, session/resume from the transcript's tail, the served
surface as the initialize answer and the SDK's router expose it."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp import schema as acp

from acp_client import EditorClient, acp_agent, agent_text, requests_log, scripted


def text(value: str) -> list[Any]:
    return [acp.TextContentBlock(type="text", text=value)]


def _write(call_id: str, name: str) -> dict[str, Any]:
    """A new file's Write: asked about in the default mode."""
    return {"id": call_id, "name": "Write", "input": {"file_path": name, "content": "x\n"}}


async def test_steer_and_queue_are_advertised_commands(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    client = EditorClient()
    async with acp_agent(client) as (conn, _init):
        session = await conn.new_session(
            cwd=str(ws), mcp_servers=[], **scripted(tmp_path, [{"text": "Hi."}])
        )
        sid = session.session_id
        update = await client.wait_for(lambda: client.of(sid, "available_commands_update"))
    names = {c["name"]: c for c in update[-1]["availableCommands"]}
    assert names["steer"]["input"]["hint"] == "<message>"
    assert names["queue"]["input"]["hint"] == "<message>"
    assert "compact" in names  # the session's own commands are still there


async def test_steer_joins_the_running_turn(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    # Two model calls in all: a steered message that made a turn of its own would need
    # a third step, and the script would run out.
    script = [
        {"text": "Checking.", "tool_calls": [_write("w1", "checked.txt")]},
        {"text": "Done, with the steer."},
    ]
    client = EditorClient()
    async with acp_agent(client) as (conn, _init):
        session = await conn.new_session(cwd=str(ws), mcp_servers=[], **scripted(tmp_path, script))
        sid = session.session_id
        first = asyncio.create_task(conn.prompt(session_id=sid, prompt=text("check it")))
        pending = await client.next_permission()
        steer = asyncio.create_task(
            conn.prompt(session_id=sid, prompt=text("/steer also mind the tests"))
        )
        # The steer is taken before the call is allowed: its prompt waits for the turn.
        await asyncio.sleep(0.5)
        assert not steer.done()
        pending.set_result({"outcome": "selected", "optionId": "allow_once"})
        answers = await asyncio.wait_for(asyncio.gather(first, steer), 30)
    assert [a.stop_reason for a in answers] == ["end_turn", "end_turn"]
    calls = requests_log(tmp_path)
    assert len(calls) == 2
    # The second model call read the steering text, without the command word.
    second = json.dumps(calls[1])
    assert "also mind the tests" in second and "/steer" not in second
    assert agent_text(client, sid).endswith("Done, with the steer.")


async def test_queue_waits_behind_the_running_turn(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    script = [
        {"tool_calls": [_write("w1", "one.txt")]},
        {"text": "First done."},
        {"text": "Second done."},
    ]
    client = EditorClient()
    async with acp_agent(client) as (conn, _init):
        session = await conn.new_session(cwd=str(ws), mcp_servers=[], **scripted(tmp_path, script))
        sid = session.session_id
        first = asyncio.create_task(conn.prompt(session_id=sid, prompt=text("one")))
        pending = await client.next_permission()
        queued = asyncio.create_task(conn.prompt(session_id=sid, prompt=text("/queue two")))
        pending.set_result({"outcome": "selected", "optionId": "allow_once"})
        answers = await asyncio.wait_for(asyncio.gather(first, queued), 30)
    assert [a.stop_reason for a in answers] == ["end_turn", "end_turn"]
    calls = requests_log(tmp_path)
    assert len(calls) == 3
    # The queued message is a user message of its own turn, the command word gone.
    last_user = [m for m in calls[2]["messages"] if m["role"] == "user"][-1]
    assert "two" in json.dumps(last_user) and "/queue" not in json.dumps(calls[2])


async def test_a_delivery_in_meta_must_be_known(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    client = EditorClient()
    async with acp_agent(client) as (conn, _init):
        session = await conn.new_session(
            cwd=str(ws), mcp_servers=[], **scripted(tmp_path, [{"text": "Hi."}])
        )
        with pytest.raises(RequestError) as refused:
            await conn.prompt(
                session_id=session.session_id,
                prompt=text("hello"),
                **{"agentls": {"delivery": "sideways"}},
            )
    assert refused.value.code == -32602
    assert refused.value.data["field"] == "_meta.agentls.delivery"


async def test_cancel_request_stops_the_prompts_turn(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    script = [{"text": "This answer never finishes", "hang": True}, {"text": "Next."}]
    client = EditorClient()
    async with acp_agent(client) as (conn, _init):
        session = await conn.new_session(cwd=str(ws), mcp_servers=[], **scripted(tmp_path, script))
        sid = session.session_id
        turn = asyncio.create_task(conn.prompt(session_id=sid, prompt=text("go")))
        await client.wait_for(lambda: client.of(sid, "agent_message_chunk"))
        sent = [
            m for d, m in client.wire if d == "outgoing" and m.get("method") == "session/prompt"
        ]
        # The SDK's client side has no request cancellation: the line goes on its pipe.
        params = {"requestId": sent[-1]["id"]}
        cancel = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": params}
        client.process.stdin.write(json.dumps(cancel).encode() + b"\n")
        with pytest.raises(RequestError) as cancelled:
            await asyncio.wait_for(turn, 20)
        assert cancelled.value.code == -32800
        # The session goes on; a cancel of a finished request is ignored.
        client.process.stdin.write(json.dumps(cancel).encode() + b"\n")
        assert (await conn.prompt(session_id=sid, prompt=text("again"))).stop_reason == "end_turn"
    assert agent_text(client, sid).endswith("Next.")
    assert len(requests_log(tmp_path)) == 2


async def test_a_newer_client_is_told_version_1_and_delete_is_served() -> None:
    """What ACP.md's table says of v2 and session/delete, as the wire shows it."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "agentls",
        "acp",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 2}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/delete", "params": {"sessionId": "s"}},
    ]
    for request in requests:
        process.stdin.write(json.dumps(request).encode() + b"\n")
    await process.stdin.drain()
    answers = [json.loads(await asyncio.wait_for(process.stdout.readline(), 30)) for _ in range(2)]
    process.stdin.close()
    await asyncio.wait_for(process.wait(), 20)
    assert answers[0]["result"]["protocolVersion"] == 1
    capabilities = answers[0]["result"]["agentCapabilities"]["sessionCapabilities"]
    assert set(capabilities) == {
        "list",
        "resume",
        "close",
        "fork",
        "delete",
        "additionalDirectories",
    }
    # Served (see test_e2e_acp_delete.py): a session that is not there is deleted
    # silently, as ACP says.
    assert answers[1]["result"] == {}


async def test_message_chunks_carry_their_messages_ids(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    client = EditorClient()
    async with acp_agent(client) as (conn, _init):
        session = await conn.new_session(
            cwd=str(ws), mcp_servers=[], **scripted(tmp_path, [{"text": "An answer."}])
        )
        sid = session.session_id
        await conn.prompt(session_id=sid, prompt=text("a question"))
        live = {u["messageId"] for u in client.of(sid, "agent_message_chunk")}
        await conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[])
        replayed = client.updates_before_response("session/load")
    # One answer, one id, the same in the live stream and in the replay of the history.
    assert len(live) == 1 and None not in live
    users = [u for u in replayed if u["sessionUpdate"] == "user_message_chunk"]
    answers = [u for u in replayed if u["sessionUpdate"] == "agent_message_chunk"]
    assert {u["messageId"] for u in answers} == live
    assert users and all(u["messageId"] for u in users)
    assert users[0]["messageId"] not in live
