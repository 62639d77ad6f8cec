"""Sub-agents over stdio: a Task call runs a child loop whose events reach the client
tagged with the agent and the Task call, and whose report is the call's result."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types as lsp

from agent_client import AgentClient, capabilities, daemon_config, read_requests


@pytest_lsp.fixture(config=daemon_config())
async def client(lsp_client: AgentClient, tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "app.py").write_text("port = 8000\n", encoding="utf-8")
    params = lsp.InitializeParams(capabilities=capabilities(True), root_uri=workspace.as_uri())
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


def task(call_id: str, prompt: str, kind: str = "explore") -> dict[str, Any]:
    arguments = {"description": prompt[:20], "prompt": prompt, "subagent_type": kind}
    return {"id": call_id, "name": "Task", "input": arguments}


def calls(*tool_calls: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"tool_calls": list(tool_calls), **extra}


GREP = {"id": "g1", "name": "Grep", "input": {"pattern": "port"}}


async def test_a_task_runs_a_child_loop_and_returns_its_report(
    client: AgentClient, tmp_path: Path
) -> None:
    script = [
        calls(task("t1", "Find where the port is set")),
        {"for": "Find where the port", **calls(GREP)},
        {"for": "Find where the port", "text": "app.py:1 sets port = 8000."},
        {"text": "The port is set in app.py."},
    ]
    session, log = await client.scripted_session(tmp_path, script)
    turn, done = await client.run_turn(session, "where is the port set?")
    assert done["stopReason"] == "end_turn"
    events = client.events.of_turn(turn)
    # One turn_completed, the parent's: the child's own turn events stay inside.
    assert [e["type"] for e in events].count("turn_completed") == 1
    started = next(e for e in events if e["type"] == "subagent_started")
    assert (started["parentToolCallId"], started["subagentType"]) == ("t1", "explore")
    agent = started["agentId"]
    child = [e for e in events if e.get("agentId") == agent]
    assert all(e["parentToolCallId"] == "t1" for e in child)
    assert ("tool_call", "g1") in [(e["type"], e.get("toolCallId")) for e in child]
    finished = next(e for e in events if e["type"] == "subagent_completed")
    assert (finished["stopReason"], finished["toolCalls"], finished["turns"]) == ("end_turn", 1, 2)
    result = [e for e in events if e["type"] == "tool_call_update" and e["toolCallId"] == "t1"][-1]
    assert result["status"] == "completed"
    assert result["content"].startswith("app.py:1 sets port = 8000.")
    assert (
        f"[explore agent {agent}: end_turn after 2 model calls and 1 tool calls"
        in result["content"]
    )
    # The parent's turn counts what the child spent.
    assert done["usage"]["inputTokens"] >= finished["usage"]["inputTokens"] > 0

    requests = read_requests(log)
    parent, first_child = requests[0], requests[1]
    # The child shows the parent's tools and static prompt: one cached prefix for both.
    assert first_child["tools"] == parent["tools"] and "Task" in parent["tools"]
    assert first_child["system_static"] == parent["system_static"]
    assert "You are the explore agent" in first_child["system_dynamic"]
    assert "you may use only: Read, Glob, Grep" in first_child["system_dynamic"]
    assert first_child["messages"][0]["content"] == [
        {"type": "text", "text": "Find where the port is set"}
    ]
    # Its transcript is a side file of the session.
    side = Path(os.environ["AGENTLS_HOME"]) / "sessions" / session / "agents" / f"{agent}.jsonl"
    records = [json.loads(line) for line in side.read_text(encoding="utf-8").splitlines()]
    assert [r["type"] for r in records].count("message") == 4


async def test_read_only_agents_run_at_once(client: AgentClient, tmp_path: Path) -> None:
    slow = {"delay": 0.05, "chunk": 4}
    script = [
        calls(task("a", "Look at alpha"), task("b", "Look at beta")),
        {"for": "Look at alpha", "text": "alpha is fine, nothing to report here", **slow},
        {"for": "Look at beta", "text": "beta is fine, nothing to report here", **slow},
        {"text": "Both fine."},
    ]
    session, _log = await client.scripted_session(tmp_path, script)
    turn, done = await client.run_turn(session, "check both")
    assert done["stopReason"] == "end_turn"
    kinds = [(e["type"], e.get("parentToolCallId")) for e in client.events.of_turn(turn)]
    first_done = min(kinds.index(("subagent_completed", c)) for c in ("a", "b"))
    assert kinds.index(("subagent_started", "a")) < first_done
    assert kinds.index(("subagent_started", "b")) < first_done


async def test_an_agent_can_call_only_its_own_tools(client: AgentClient, tmp_path: Path) -> None:
    edit = {
        "id": "e1",
        "name": "Edit",
        "input": {"file_path": "app.py", "old_string": "8", "new_string": "9"},
    }
    script = [
        calls(task("t1", "Change nothing")),
        {"for": "Change nothing", **calls(edit)},
        {"for": "Change nothing", "text": "I could not edit."},
        {"text": "ok"},
    ]
    session, _log = await client.scripted_session(
        tmp_path, script, permissionMode="bypassPermissions"
    )
    turn, _done = await client.run_turn(session, "go")
    failed = [
        e
        for e in client.events.of_turn(turn)
        if e["type"] == "tool_call_update" and e["toolCallId"] == "e1"
    ]
    assert failed[-1]["status"] == "failed"
    assert "Available tools: Read, Glob, Grep" in failed[-1]["content"]
    assert (tmp_path / "ws" / "app.py").read_text(encoding="utf-8") == "port = 8000\n"


async def test_a_childs_permission_request_names_the_agent(
    client: AgentClient, tmp_path: Path
) -> None:
    write = {"id": "w1", "name": "Write", "input": {"file_path": "notes.txt", "content": "hi\n"}}
    script = [
        calls(task("t1", "Write the notes", "general")),
        {"for": "Write the notes", **calls(write)},
        {"for": "Write the notes", "text": "Written."},
        {"text": "Done."},
    ]
    session, _log = await client.scripted_session(tmp_path, script)

    async def allow() -> dict[str, Any]:
        request = await client.events.wait_for(lambda e: e["type"] == "permission_request")
        await client.request(
            "agent/respondPermission",
            {"sessionId": session, "requestId": request["requestId"], "optionId": "allow_once"},
        )
        return request

    answering = asyncio.create_task(allow())
    turn, done = await client.run_turn(session, "write notes")
    request = await answering
    assert done["stopReason"] == "end_turn"
    assert request["toolCallId"] == "w1" and request["parentToolCallId"] == "t1"
    assert request["agentId"].startswith("agent_")
    # The Task call itself did not ask: the agent's own calls meet the gate.
    asked = [e for e in client.events.of_turn(turn) if e["type"] == "permission_request"]
    assert len(asked) == 1
    assert (tmp_path / "ws" / "notes.txt").read_text(encoding="utf-8") == "hi\n"


async def test_abort_stops_the_children(client: AgentClient, tmp_path: Path) -> None:
    script = [
        calls(task("t1", "Think forever")),
        {"for": "Think forever", "text": "Thinking", "hang": True},
    ]
    session, _log = await client.scripted_session(tmp_path, script)
    submitted = await client.request("agent/submitMessage", {"sessionId": session, "text": "go"})
    await client.events.wait_for(lambda e: e["type"] == "text_delta" and e.get("agentId"))
    await client.request("agent/abort", {"sessionId": session})
    done = await client.events.turn_completed(submitted["turnId"])
    assert done["stopReason"] == "aborted"
    stopped = [
        e for e in client.events.of_turn(submitted["turnId"]) if e["type"] == "subagent_completed"
    ]
    assert [e["stopReason"] for e in stopped] == ["aborted"]


async def test_nesting_stops_at_the_depth_limit(client: AgentClient, tmp_path: Path) -> None:
    settings = tmp_path / "ws" / ".agentls"
    settings.mkdir()
    (settings / "settings.json").write_text('{"subagentDepth": 1}', encoding="utf-8")
    script = [
        calls(task("t1", "Delegate this", "general")),
        {"for": "Delegate this", **calls(task("t2", "Deeper", "general"))},
        {"for": "Delegate this", "text": "Could not delegate."},
        {"text": "ok"},
    ]
    session, log = await client.scripted_session(
        tmp_path, script, permissionMode="bypassPermissions"
    )
    turn, done = await client.run_turn(session, "go")
    assert done["stopReason"] == "end_turn"
    nested = [
        e
        for e in client.events.of_turn(turn)
        if e["type"] == "tool_call_update" and e["toolCallId"] == "t2"
    ]
    assert nested[-1]["status"] == "failed" and "Unknown tool 'Task'" in nested[-1]["content"]
    assert [e["type"] for e in client.events.of_turn(turn)].count("subagent_started") == 1
    assert (
        "you may use only: Read, Write, Edit, Glob, Grep, Bash"
        in read_requests(log)[1]["system_dynamic"]
    )


async def test_a_project_agent_type_is_offered_and_used(
    client: AgentClient, tmp_path: Path
) -> None:
    agents = tmp_path / "ws" / ".agentls" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews code for bugs\ntools: Read, Grep\n---\n"
        "You review code and list bugs with file and line.\n",
        encoding="utf-8",
    )
    script = [
        calls(task("t1", "Review app.py", "reviewer")),
        {"for": "Review app.py", "text": "No bugs."},
        {"text": "Reviewed."},
    ]
    session, log = await client.scripted_session(tmp_path, script)
    _turn, done = await client.run_turn(session, "review")
    assert done["stopReason"] == "end_turn"
    child = read_requests(log)[1]
    assert "You review code and list bugs" in child["system_dynamic"]
    assert "you may use only: Read, Grep" in child["system_dynamic"]
