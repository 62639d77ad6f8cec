"""The message shortcuts through the real daemon: `!command` runs a shell command in a
local turn (no model call) and the next message tells the model."""

from __future__ import annotations

from pathlib import Path

from agent_client import AgentClient, read_requests


def _user_context(request: dict[str, object]) -> str:
    messages = request["messages"]
    assert isinstance(messages, list)
    return "".join(block.get("text", "") for block in messages[-1]["content"])


async def test_a_bang_command_runs_through_the_gate_without_the_model_and_the_next_message_tells_it(
    client: AgentClient, tmp_path: Path
) -> None:
    sid, log = await client.scripted_session(tmp_path, [{"text": "I see the file."}])
    submitted = await client.request(
        "agent/submitMessage", {"sessionId": sid, "text": "!echo made > made.txt && echo done"}
    )
    request = await client.answer_permission(sid, "allow_once")
    done = await client.events.turn_completed(submitted["turnId"])
    assert done["stopReason"] == "end_turn" and done["turns"] == 0
    assert request["input"] == {"command": "echo made > made.txt && echo done"}
    events = client.events.of_turn(submitted["turnId"])
    call = next(e for e in events if e["type"] == "tool_call")
    assert call["name"] == "Bash" and call["kind"] == "execute"
    finished = [e for e in events if e["type"] == "tool_call_update" and e["status"] == "completed"]
    assert finished and "done" in finished[0]["content"]
    output = next(e for e in events if e["type"] == "command_output")
    assert output["command"] == "!" and "done" in output["text"]
    assert (tmp_path / "ws" / "made.txt").read_text() == "made\n"
    assert read_requests(log) == []
    await client.run_turn(sid, "what did I do?")
    context = _user_context(read_requests(log)[0])
    assert "<userAction>The user ran a shell command themselves: echo made" in context
    assert "done" in context


async def test_a_bang_command_is_refused_in_plan_mode_like_bash(
    client: AgentClient, tmp_path: Path
) -> None:
    sid, _log = await client.scripted_session(tmp_path, [], permissionMode="plan")
    turn_id, done = await client.run_turn(sid, "!touch nope.txt")
    assert done["stopReason"] == "end_turn"
    declined = [
        e
        for e in client.events.of_turn(turn_id)
        if e["type"] == "tool_call_update" and e["status"] == "declined"
    ]
    assert "plan mode" in declined[0]["content"]
    assert not (tmp_path / "ws" / "nope.txt").exists()
