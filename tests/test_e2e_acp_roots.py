"""`additionalDirectories` over ACP through the Python SDK's client: the
`sessionCapabilities.additionalDirectories` capability as the SDK parses it, the roots a
session's file tools may reach after session/new, session/load, session/resume and
session/fork (the list on each is the complete one, an omitted list none), for a session
open in the agent and for one rebuilt from its transcript, and a relative entry refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp import RequestError

from acp_client import EditorClient, acp_agent, scripted
from test_e2e_acp import text, workspace

NOTE = "a note kept outside the workspace"


def outside(tmp_path: Path) -> Path:
    """A folder beside the workspace, with a file in it."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "note.txt").write_text(NOTE + "\n", encoding="utf-8")
    return folder


def reads(folder: Path, count: int) -> list[dict[str, Any]]:
    """`count` turns, each a Read of the outside note (call ids r0, r1, …), then a word."""
    script: list[dict[str, Any]] = []
    for index in range(count):
        call = {"id": f"r{index}", "name": "Read", "input": {"file_path": str(folder / "note.txt")}}
        script += [{"tool_calls": [call]}, {"text": "Read."}]
    return script


async def read_outcome(client: EditorClient, conn: Any, session_id: str, call_id: str) -> str:
    """One prompt whose turn reads the outside note: `read` when the Read got its text,
    else `refused`."""
    answer = await conn.prompt(session_id=session_id, prompt=text("read the note"))
    assert answer.stop_reason == "end_turn"
    # The last: a session/load replayed the earlier turns' calls.
    ended = [
        u
        for u in client.of(session_id, "tool_call_update")
        if u["toolCallId"] == call_id and u.get("status") in ("completed", "failed")
    ][-1]
    said = str(ended.get("content"))
    if ended["status"] == "completed" and NOTE in said:
        return "read"
    assert ended["status"] == "failed" and "outside the workspace" in said, ended
    return "refused"


async def test_each_lifecycle_request_sets_the_sessions_roots(tmp_path: Path) -> None:
    ws, folder = workspace(tmp_path), outside(tmp_path)
    client = EditorClient()
    async with acp_agent(client) as (conn, init):
        capabilities = init.agent_capabilities.session_capabilities
        assert capabilities is not None and capabilities.additional_directories is not None
        meta = scripted(tmp_path, reads(folder, 4))
        session = await conn.new_session(
            cwd=str(ws), mcp_servers=[], additional_directories=[str(folder)], **meta
        )
        sid = session.session_id
        assert await read_outcome(client, conn, sid, "r0") == "read"
        # Loaded again without the list: no root of the client's is active any more.
        await conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[])
        assert await read_outcome(client, conn, sid, "r1") == "refused"
        await conn.resume_session(cwd=str(ws), session_id=sid, additional_directories=[str(folder)])
        assert await read_outcome(client, conn, sid, "r2") == "read"
        # A fork has the list its request names (here none), whatever its source had.
        fork = await conn.fork_session(cwd=str(ws), session_id=sid, additional_directories=[])
        assert await read_outcome(client, conn, fork.session_id, "r0") == "refused"
        with pytest.raises(RequestError) as relative:
            await conn.load_session(
                cwd=str(ws), session_id=sid, mcp_servers=[], additional_directories=["outside"]
            )
        assert relative.value.code == -32602
        assert relative.value.data == [
            {"field": "additionalDirectories.0", "message": "must be an absolute path"}
        ]


async def test_a_saved_session_takes_the_roots_its_load_names(tmp_path: Path) -> None:
    ws, folder = workspace(tmp_path), outside(tmp_path)
    client = EditorClient()
    async with acp_agent(client) as (conn, _init):
        meta = scripted(tmp_path, reads(folder, 1))
        session = await conn.new_session(
            cwd=str(ws), mcp_servers=[], additional_directories=[str(folder)], **meta
        )
        sid = session.session_id
        assert await read_outcome(client, conn, sid, "r0") == "read"
    # A new agent: the session is rebuilt from its transcript, with the roots asked for.
    for directories, outcome in (([str(folder)], "read"), (None, "refused")):
        later = EditorClient()
        async with acp_agent(later) as (conn, _init):
            await conn.load_session(
                cwd=str(ws),
                session_id=sid,
                mcp_servers=[],
                additional_directories=directories,
                **scripted(tmp_path, reads(folder, 1)),
            )
            assert await read_outcome(later, conn, sid, "r0") == outcome
