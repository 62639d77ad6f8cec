"""ACP `session/delete` end to end: `agentls acp` as a subprocess, the SDK's client side
playing the editor. The SDK's client has no delete call, so the request is written on
the agent's stdin and its answer read from the wire the client observes."""

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
        assert gone.value.code == 1001

        again = await delete(client, "del-2", sid)
        assert again["error"]["code"] == 1001
        hostile = await delete(client, "del-3", "../sess_x")
        assert hostile["error"]["code"] == -32602
        assert hostile["error"]["data"] == {"field": "sessionId"}
