"""ACP `session/delete` end to end: `agentls acp` as a subprocess, the SDK's client side
playing the editor: a saved session, one deleted under its running prompt, and one whose
isolated agent left a locked worktree (`_meta.agentls.warnings`). The SDK's client (0.12.1)
has no delete call, so the request is written on the agent's stdin and its answer read from
the wire the client observes."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError

from acp_client import EditorClient, acp_agent, scripted
from test_e2e_acp import text, workspace
from test_e2e_worktrees import git, isolated, make_repo, write


async def delete(client: EditorClient, request_id: str, session_id: str) -> dict[str, Any]:
    """session/delete sent raw; its answer as the client's connection received it."""
    request = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "session/delete",
        "params": {"sessionId": session_id},
    }
    assert client.process.stdin is not None
    client.process.stdin.write(json.dumps(request).encode() + b"\n")
    for _ in range(600):
        for way, message in client.wire:
            if way == "incoming" and message.get("id") == request_id and "method" not in message:
                return message
        await asyncio.sleep(0.05)
    raise AssertionError(f"no answer to {request_id}")


def sessions_folder() -> Path:
    return Path(os.environ["AGENTLS_HOME"]) / "sessions"


async def test_session_delete_removes_a_session_for_good(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    client = EditorClient()
    async with acp_agent(client) as (conn, init):
        capabilities = init.agent_capabilities.session_capabilities
        assert capabilities is not None and capabilities.delete is not None
        session = await conn.new_session(
            cwd=str(ws), mcp_servers=[], **scripted(tmp_path, [{"text": "Hello."}])
        )
        sid = session.session_id
        await conn.prompt(session_id=sid, prompt=text("hi"))
        listed = await conn.list_sessions(cwd=str(ws))
        assert [s.session_id for s in listed.sessions] == [sid]

        answer = await delete(client, "del-1", sid)
        assert answer["result"] == {}
        assert not [p for p in sessions_folder().iterdir() if p.name.startswith(sid)]
        assert (await conn.list_sessions(cwd=str(ws))).sessions == []
        with pytest.raises(RequestError) as gone:
            await conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[])
        assert gone.value.code == -32002

        # Deleted already, or never made: ACP says a delete of it succeeds silently.
        again = await delete(client, "del-2", sid)
        assert again["result"] == {}
        never = await delete(client, "del-4", "sess_never_made")
        assert never["result"] == {}
        hostile = await delete(client, "del-3", "../sess_x")
        assert hostile["error"]["code"] == -32602
        assert hostile["error"]["data"] == {"field": "sessionId"}


async def test_session_delete_under_a_running_prompt_ends_it_cancelled(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    client = EditorClient()
    async with acp_agent(client) as (conn, _init):
        script = [{"text": "This answer never finishes", "hang": True}]
        session = await conn.new_session(cwd=str(ws), mcp_servers=[], **scripted(tmp_path, script))
        sid = session.session_id
        running = asyncio.create_task(conn.prompt(session_id=sid, prompt=text("go")))
        await client.wait_for(lambda: client.of(sid, "agent_message_chunk"))

        answer = await delete(client, "del-live", sid)
        assert answer["result"] == {}
        assert (await asyncio.wait_for(running, 30)).stop_reason == "cancelled"
        # No update of the deleted session follows the answer to its delete.
        after = client.wire[[m for _, m in client.wire].index(answer) + 1 :]
        assert [m["params"] for _, m in after if m.get("method") == "session/update"] == []
        assert not [p for p in sessions_folder().iterdir() if p.name.startswith(sid)]
        assert (await conn.list_sessions(cwd=str(ws))).sessions == []
        with pytest.raises(RequestError) as closed:
            await conn.prompt(session_id=sid, prompt=text("more"))
        assert closed.value.code == -32002


async def test_session_delete_names_a_locked_worktree_in_its_warnings(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"app.txt": "one\n"})
    make_repo(ws)
    script = [
        {"tool_calls": [isolated("a", "Write alpha")]},
        {"for": "Write alpha", "tool_calls": [write("wa", "alpha.txt", "alpha\n")]},
        {"for": "Write alpha", "text": "Wrote alpha."},
        {"text": "Done."},
    ]
    client = EditorClient()
    async with acp_agent(client) as (conn, _init):
        meta = scripted(tmp_path, script, permissionMode="acceptEdits")
        session = await conn.new_session(cwd=str(ws), mcp_servers=[], **meta)
        sid = session.session_id
        assert (await conn.prompt(session_id=sid, prompt=text("write alpha"))).stop_reason == (
            "end_turn"
        )
        [tree] = [
            Path(line.removeprefix("worktree "))
            for line in git(ws, "worktree", "list", "--porcelain").splitlines()
            if line.startswith("worktree ") and Path(line[9:]).resolve() != ws.resolve()
        ]
        # A locked worktree: `git worktree remove --force` (one --force) refuses it.
        git(ws, "worktree", "lock", str(tree))

        answer = await delete(client, "del-locked", sid)
        warnings = answer["result"]["_meta"]["agentls"]["warnings"]
        assert len(warnings) == 1 and str(tree) in warnings[0]
        # The session is gone anyway: its files, its listing, its id.
        assert not [p for p in sessions_folder().iterdir() if p.name.startswith(sid)]
        assert (await conn.list_sessions(cwd=str(ws))).sessions == []
        with pytest.raises(RequestError) as gone:
            await conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[])
        assert gone.value.code == -32002
