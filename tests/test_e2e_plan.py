"""TodoWrite over stdio: the plan reaches the client as `plan` events, is kept in the
session's state (resume returns it), is restated after a summary, and can be turned off."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_client import AgentClient, read_requests


def todo(call_id: str, *items: tuple[str, str]) -> dict[str, Any]:
    todos = [{"content": content, "status": status} for content, status in items]
    return {"tool_calls": [{"id": call_id, "name": "TodoWrite", "input": {"todos": todos}}]}


PLAN = [
    todo("t1", ("Read the config", "in_progress"), ("Fix the port", "pending")),
    todo("t2", ("Read the config", "completed"), ("Fix the port", "in_progress")),
    {"text": "Done."},
]


async def test_each_todo_write_sends_the_whole_plan(client: AgentClient, tmp_path: Path) -> None:
    session, log = await client.scripted_session(tmp_path, PLAN)
    turn, done = await client.run_turn(session, "fix the port")
    assert done["stopReason"] == "end_turn"
    events = client.events.of_turn(turn)
    plans = [e["entries"] for e in events if e["type"] == "plan"]
    assert plans == [
        [
            {"content": "Read the config", "status": "in_progress", "priority": "medium"},
            {"content": "Fix the port", "status": "pending", "priority": "medium"},
        ],
        [
            {"content": "Read the config", "status": "completed", "priority": "medium"},
            {"content": "Fix the port", "status": "in_progress", "priority": "medium"},
        ],
    ]
    # The plan event follows its call's completion; TodoWrite never asks for permission.
    kinds = [(e["type"], e.get("toolCallId"), e.get("status")) for e in events]
    done_at = kinds.index(("tool_call_update", "t1", "completed"))
    assert kinds[done_at + 1][0] == "plan"
    assert not [e for e in events if e["type"] == "permission_request"]
    second = read_requests(log)[2]["messages"][-1]["content"][0]
    assert second["content"] == "The plan now reads:\n[x] Read the config\n[~] Fix the port"

    await client.request("agent/closeSession", {"sessionId": session})
    resumed = await client.request("agent/resumeSession", {"sessionId": session})
    assert [e["status"] for e in resumed["plan"]] == ["completed", "in_progress"]


async def test_a_summary_restates_the_plan(client: AgentClient, tmp_path: Path) -> None:
    script = [
        todo("t1", ("Read the config", "completed"), ("Fix the port", "pending")),
        {"text": "Planned."},
        {"text": "Noted."},
        {"text": "<summary>We planned the port fix.</summary>"},
        {"text": "Going on."},
    ]
    session, log = await client.scripted_session(tmp_path, script)
    await client.run_turn(session, "plan it")
    await client.run_turn(session, "ok")
    await client.request("agent/compact", {"sessionId": session})
    await client.run_turn(session, "go on")
    first = read_requests(log)[-1]["messages"][0]["content"][0]["text"]
    assert "<summary>\nWe planned the port fix.\n</summary>" in first
    assert (
        "<plan>\nYour plan (TodoWrite) as it stands:\n[x] Read the config\n[ ] Fix the port"
        in first
    )


async def test_todo_write_is_on_by_default_and_can_be_turned_off(
    client: AgentClient, tmp_path: Path
) -> None:
    default = await client.new_session(tmp_path / "ws", provider="scripted", script=[])
    assert default["tools"][-2:] == ["TodoWrite", "Task"]
    settings = tmp_path / "ws" / ".agentls"
    settings.mkdir()
    (settings / "settings.json").write_text('{"todoWrite": false}', encoding="utf-8")
    off = await client.new_session(tmp_path / "ws", provider="scripted", script=[])
    assert "TodoWrite" not in off["tools"]
