"""Plan approval over ACP: the plan is a session/request_permission whose tool call shows
the plan and whose options are the plan's; approving switches the mode, and the client's
mode follows (current_mode_update)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from acp import schema as acp

from acp_client import EditorClient, acp_agent, requests_log, scripted

PLAN = "# Plan\n\n1. Write `b.txt`."


def _text(value: str) -> list[Any]:
    return [acp.TextContentBlock(type="text", text=value)]


async def test_an_acp_client_approves_a_plan_and_hears_the_mode_change(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    present = {"id": "p1", "name": "ExitPlanMode", "input": {"plan": PLAN}}
    write = {"id": "w1", "name": "Write", "input": {"file_path": "b.txt", "content": "b\n"}}
    script = [{"tool_calls": [present]}, {"tool_calls": [write]}, {"text": "Done."}]
    client = EditorClient()
    async with acp_agent(client) as (conn, _init):
        meta = scripted(tmp_path, script, permissionMode="plan")
        session = await conn.new_session(cwd=str(ws), mcp_servers=[], **meta)
        sid = session.session_id
        turn = asyncio.create_task(conn.prompt(session_id=sid, prompt=_text("plan it")))
        pending = await client.next_permission()
        request = pending.request  # type: ignore[attr-defined]
        pending.set_result({"optionId": "plan_approve_accept_edits"})
        answer = await asyncio.wait_for(turn, 30)
    assert answer.stop_reason == "end_turn"
    assert [o["optionId"] for o in request["options"]] == [
        "plan_approve",
        "plan_approve_accept_edits",
        "plan_keep_planning",
        "plan_reject",
    ]
    assert request["toolCall"]["content"][0]["content"]["text"] == PLAN
    modes = [u["currentModeId"] for u in client.of(sid, "current_mode_update")]
    assert modes[-1] == "acceptEdits"
    # acceptEdits: the Write ran without a second request.
    assert len(client.permission_requests) == 1
    assert (ws / "b.txt").read_text(encoding="utf-8") == "b\n"
    assert "approved your plan" in str(requests_log(tmp_path)[1]["messages"][-1])
