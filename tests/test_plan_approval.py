"""Plan approval through the real daemon: in plan mode the model presents its plan with
ExitPlanMode, the client answers the permission_request that carries it, and an approved
plan switches the mode and the same turn carries it out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_client import AgentClient, read_requests

PLAN = "# Add a greeting\n\n1. Write `hello.txt`.\n2. Check it."


def _present(call_id: str = "p1") -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": "ExitPlanMode", "input": {"plan": PLAN}}]}


async def _answer_plan(
    client: AgentClient, sid: str, option: str, message: str = "", call_id: str = "p1"
) -> Any:
    request = await client.events.wait_for(
        lambda e: e["type"] == "permission_request" and e["toolCallId"] == call_id
    )
    assert request["plan"] == PLAN and request["input"] == {"plan": PLAN}
    params = {"sessionId": sid, "requestId": request["requestId"], "optionId": option}
    if message:
        params["message"] = message
    await client.request("agent/respondPermission", params)
    return request


async def test_an_approved_plan_switches_the_mode_and_the_turn_carries_it_out(
    client: AgentClient, tmp_path: Path
) -> None:
    write = {"id": "w1", "name": "Write", "input": {"file_path": "hello.txt", "content": "hi\n"}}
    script = [_present(), {"tool_calls": [write]}, {"text": "Done."}]
    sid, log = await client.scripted_session(tmp_path, script, permissionMode="plan")
    submitted = await client.request("agent/submitMessage", {"sessionId": sid, "text": "greet"})
    request = await _answer_plan(client, sid, "plan_approve_accept_edits")
    done = await client.events.turn_completed(submitted["turnId"])
    assert done["stopReason"] == "end_turn"
    assert [o["optionId"] for o in request["options"]] == [
        "plan_approve",
        "plan_approve_accept_edits",
        "plan_keep_planning",
        "plan_reject",
    ]
    events = client.events.of_turn(submitted["turnId"])
    changed = [e for e in events if e["type"] == "permission_mode_changed"]
    assert [e["permissionMode"] for e in changed] == ["acceptEdits"]
    # acceptEdits: the Write of the plan's first step runs without another question.
    asked = [e for e in events if e["type"] == "permission_request"]
    assert len(asked) == 1
    assert (tmp_path / "ws" / "hello.txt").read_text() == "hi\n"
    requests = read_requests(log)
    assert "ExitPlanMode" in requests[0]["tools"]
    result = requests[1]["messages"][-1]["content"][0]
    assert "approved your plan" in result["content"] and "acceptEdits" in result["content"]
    # The plan stays in the transcript: a resumed session shows it.
    resumed = await client.request("agent/resumeSession", {"sessionId": sid})
    assert resumed["permissionMode"] == "acceptEdits"
    blocks = [b for m in resumed["messages"] for b in m["content"]]
    assert any(b.get("name") == "ExitPlanMode" and b["input"]["plan"] == PLAN for b in blocks)


async def test_keep_planning_gives_the_feedback_and_reject_tells_the_model_to_stop(
    client: AgentClient, tmp_path: Path
) -> None:
    script = [_present("p1"), _present("p2"), {"text": "Understood."}]
    sid, log = await client.scripted_session(tmp_path, script, permissionMode="plan")
    submitted = await client.request("agent/submitMessage", {"sessionId": sid, "text": "plan"})
    await _answer_plan(client, sid, "plan_keep_planning", "Also update the README.")
    resolved = await client.events.wait_for(
        lambda e: e["type"] == "permission_resolved" and e.get("optionId") == "plan_keep_planning"
    )
    assert resolved["outcome"] == "selected"
    await _answer_plan(client, sid, "plan_reject", call_id="p2")
    done = await client.events.turn_completed(submitted["turnId"])
    assert done["stopReason"] == "end_turn"
    events = client.events.of_turn(submitted["turnId"])
    assert not [e for e in events if e["type"] == "permission_mode_changed"]
    requests = read_requests(log)
    feedback = requests[1]["messages"][-1]["content"][0]["content"]
    assert "keep planning" in feedback and "Also update the README." in feedback
    rejected = requests[2]["messages"][-1]["content"][0]["content"]
    assert "rejected the plan" in rejected and "Do not carry it out" in rejected


async def test_exit_plan_mode_is_offered_only_from_plan_mode_on_and_refused_outside_it(
    client: AgentClient, tmp_path: Path
) -> None:
    script = [{"text": "Hello."}, _present(), {"text": "Not in plan mode."}]
    sid, log = await client.scripted_session(tmp_path, script)
    await client.run_turn(sid, "hi")
    await client.request("agent/setPermissionMode", {"sessionId": sid, "permissionMode": "plan"})
    changed = await client.events.wait_for(lambda e: e["type"] == "permission_mode_changed")
    assert changed["permissionMode"] == "plan" and "turnId" not in changed
    await client.request("agent/setPermissionMode", {"sessionId": sid, "permissionMode": "default"})
    turn_id, done = await client.run_turn(sid, "present it anyway")
    assert done["stopReason"] == "end_turn"
    requests = read_requests(log)
    # Never in plan mode yet: not offered (the first request's tools are unchanged).
    assert "ExitPlanMode" not in requests[0]["tools"]
    # Once the session was in plan mode, offered for good, and refused outside plan mode.
    assert "ExitPlanMode" in requests[1]["tools"]
    failed = [
        e
        for e in client.events.of_turn(turn_id)
        if e["type"] == "tool_call_update" and e["status"] == "failed"
    ]
    assert "not in plan mode" in failed[0]["content"]
    assert not client.events.of_type("permission_request")
