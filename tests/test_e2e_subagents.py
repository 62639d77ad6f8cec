"""Sub-agents over stdio: a Task call runs a child loop whose events reach the client
tagged with the agent and the Task call, and whose report is the call's result."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from agent_client import AgentClient, read_requests


@pytest.fixture
def workspace_files() -> dict[str, str | bytes]:
    return {"app.py": "port = 8000\n"}


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
        f"[explore agent {agent}: end_turn after 2 model calls and 1 tool call" in result["content"]
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
        "you may use only: Read, Write, Edit, MultiEdit, NotebookEdit, Glob, Grep, Bash"
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
    # No price for the scripted model: no dollars, rather than a guess.
    assert "costUsd" not in done
    assert "costUsd" not in client.events.of_type("subagent_completed")[0]


# --- background agents, resume, fork -----------------------------------------------------------


async def test_a_background_agent_reports_back_to_the_running_turn(
    client: AgentClient, tmp_path: Path
) -> None:
    background = task("t1", "Count the files slowly")
    background["input"]["run_in_background"] = True
    script = [
        calls(background),
        {"for": "Count the files slowly", "text": "There is one file.", "delay": 0.3},
        calls({"id": "r1", "name": "Read", "input": {"file_path": "app.py"}}),
        # About 3 s in six chunks: the turn is still running when the report comes.
        {"text": "Waiting for the count.", "delay": 0.5, "chunk": 4},
        {"text": "One file, port 8000."},
    ]
    session, log = await client.scripted_session(tmp_path, script)
    turn, done = await client.run_turn(session, "count and read")
    assert done["stopReason"] == "end_turn"
    started = [e for e in client.events.of_turn(turn) if e["type"] == "tool_call_update"]
    first = next(e for e in started if e["toolCallId"] == "t1" and e["status"] == "completed")
    assert "in the background" in first["content"]
    # The report reached the model as steering of the running turn.
    said = json.dumps(read_requests(log)[-1]["messages"][-1])
    assert "taskNotification" in said and "There is one file." in said
    finished = next(e for e in client.events.of_type("subagent_completed"))
    assert "turnId" not in finished  # a background agent's events belong to no turn
    listed = await client.request("agent/listTasks", {"sessionId": session})
    assert [(t["subagentType"], t["status"]) for t in listed["tasks"]] == [("explore", "completed")]


async def test_a_background_agent_wakes_an_idle_session(
    client: AgentClient, tmp_path: Path
) -> None:
    background = task("t1", "Look later")
    background["input"]["run_in_background"] = True
    script = [
        calls(background),
        {"text": "Started it."},
        # Late enough that the first turn has ended: the report then wakes the session.
        {"for": "Look later", "text": "Found nothing odd.", "delay": 2.0},
        {"text": "The agent found nothing odd."},
    ]
    session, log = await client.scripted_session(tmp_path, script)
    first, done = await client.run_turn(session, "start a look")
    assert done["stopReason"] == "end_turn"
    woken = await client.events.wait_for(
        lambda e: e["type"] == "turn_started" and e["turnId"] != first
    )
    ended = await client.events.turn_completed(woken["turnId"])
    assert ended["stopReason"] == "end_turn"
    prompt = read_requests(log)[-1]["messages"][-1]["content"][1]["text"]
    assert prompt.startswith('<taskNotification agentId="agent_') and "Found nothing odd." in prompt


async def test_stop_task_stops_a_background_agent(client: AgentClient, tmp_path: Path) -> None:
    background = task("t1", "Hang around")
    background["input"]["run_in_background"] = True
    script = [
        calls(background),
        {"text": "Started."},
        {"for": "Hang around", "text": "x", "hang": True},
    ]
    session, _log = await client.scripted_session(tmp_path, script)
    await client.run_turn(session, "go")
    started = await client.events.wait_for(lambda e: e["type"] == "subagent_started")
    await client.events.wait_for(lambda e: e["type"] == "text_delta" and e.get("agentId"))
    stop = {"sessionId": session, "agentId": started["agentId"]}
    assert (await client.request("agent/stopTask", stop)) == {"stopped": True}
    assert (await client.request("agent/stopTask", stop)) == {"stopped": False}
    listed = await client.request("agent/listTasks", {"sessionId": session})
    assert listed["tasks"][0]["status"] == "stopped"


async def test_resume_continues_an_agent_with_its_history(
    client: AgentClient, tmp_path: Path
) -> None:
    script = [
        calls(task("t1", "Remember the number 7")),
        {"for": "Remember the number 7", "text": "Noted: 7."},
        {"text": "Asked it."},
    ]
    session, log = await client.scripted_session(tmp_path, script)
    await client.run_turn(session, "tell it a number")
    agent = next(e for e in client.events.of_type("subagent_started"))["agentId"]
    again = task("t2", "Which number was it?")
    again["input"]["resume"] = agent
    more = [calls(again), {"for": "Remember the number 7", "text": "It was 7."}, {"text": "7."}]
    script_path = tmp_path / "more.jsonl"
    script_path.write_text("".join(json.dumps(e) + "\n" for e in more), encoding="utf-8")
    await client.request("agent/closeSession", {"sessionId": session})
    await client.request(
        "agent/resumeSession",
        {"sessionId": session, "script": str(script_path), "requestLog": str(log)},
    )
    await client.run_turn(session, "ask it again")
    resumed = read_requests(log)[-2]["messages"]
    texts = [b.get("text") for m in resumed for b in m["content"] if b["type"] == "text"]
    assert texts == ["Remember the number 7", "Noted: 7.", "Which number was it?"]


def blocks(messages: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    return [(m["role"], block) for m in messages for block in m["content"]]


async def test_a_fork_shares_the_parents_prefix_byte_for_byte(
    client: AgentClient, tmp_path: Path
) -> None:
    script = [
        calls({"id": "r1", "name": "Read", "input": {"file_path": "app.py"}}),
        calls(task("t1", "Try port 9000 in your head", "fork")),
        {"for": "Try port 9000", "text": "9000 would work."},
        {"text": "Done."},
    ]
    session, log = await client.scripted_session(tmp_path, script)
    _turn, done = await client.run_turn(session, "explore the port")
    assert done["stopReason"] == "end_turn"
    parent, child = read_requests(log)[1], read_requests(log)[2]
    for key in ("system_static", "system_dynamic", "tools"):
        assert child[key] == parent[key]
    # Up to the fork point the child sends the parent's last request's blocks (its task
    # joins the parent's last user message, as the API itself joins user messages in a row).
    shared = blocks(parent["messages"])
    assert blocks(child["messages"])[: len(shared)] == shared
    assert "You are a fork" in child["messages"][-1]["content"][-1]["text"]


async def test_usage_adds_up_per_agent_turn_and_session(
    client: AgentClient, tmp_path: Path
) -> None:
    settings = tmp_path / "ws" / ".agentls"
    settings.mkdir()
    prices = {"prices": {"scripted": {"input": 1000, "output": 1000}}}
    (settings / "settings.json").write_text(json.dumps(prices), encoding="utf-8")
    parent, child = (
        {"input_tokens": 100, "output_tokens": 10},
        {"input_tokens": 50, "output_tokens": 5},
    )
    script = [
        {**calls(task("t1", "Count")), "usage": parent},
        {"for": "Count", "text": "3.", "usage": child},
        {"text": "Three.", "usage": parent},
    ]
    session, _log = await client.scripted_session(tmp_path, script)
    _turn, done = await client.run_turn(session, "count")
    finished = next(e for e in client.events.of_type("subagent_completed"))
    assert (finished["usage"]["inputTokens"], finished["usage"]["outputTokens"]) == (50, 5)
    assert (done["usage"]["inputTokens"], done["usage"]["outputTokens"]) == (250, 25)
    # Dollars add up the same way: the agent's call, then the turn's three.
    assert finished["costUsd"] == 0.055 and done["costUsd"] == 0.275
    costs = [e["costUsd"] for e in client.events.of_type("usage")]
    assert costs == [0.11, 0.055, 0.11]
    listed = await client.request("agent/listSessions", {"cwd": str(tmp_path / "ws")})
    info = next(s for s in listed["sessions"] if s["sessionId"] == session)
    assert (info["inputTokens"], info["outputTokens"]) == (250, 25)
    assert info["costUsd"] == 0.275


async def test_an_agent_on_its_own_model_costs_that_models_price(
    client: AgentClient, tmp_path: Path
) -> None:
    agents = tmp_path / "ws" / ".agentls" / "agents"
    agents.mkdir(parents=True)
    (agents / "counter.md").write_text(
        "---\nname: counter\ndescription: Counts things\nmodel: cheap-model\n---\nCount.\n",
        encoding="utf-8",
    )
    prices = {
        "scripted": {"input": 1000, "output": 1000},
        "cheap-model": {"input": 100, "output": 100},
    }
    (agents.parent / "settings.json").write_text(json.dumps({"prices": prices}), encoding="utf-8")
    spent = {"input_tokens": 100, "output_tokens": 10}
    script = [
        {**calls(task("t1", "Count", "counter")), "usage": spent},
        {"for": "Count", "text": "3.", "usage": spent},
        {"text": "Three.", "usage": spent},
    ]
    session, _log = await client.scripted_session(tmp_path, script)
    _turn, done = await client.run_turn(session, "count")
    finished = next(e for e in client.events.of_type("subagent_completed"))
    assert finished["costUsd"] == 0.011
    assert [e["costUsd"] for e in client.events.of_type("usage")] == [0.11, 0.011, 0.11]
    assert done["costUsd"] == 0.231


async def test_a_turns_budget_counts_its_agents(client: AgentClient, tmp_path: Path) -> None:
    # 12,000 tokens: the parent's first call (4,050) and the agent's first (about 5,300
    # asked, the tools' specs being most of it) fit; after it the turn has spent 8,100, so
    # the agent wraps up, then the parent.
    spent = {"input_tokens": 4000, "output_tokens": 50}
    script = [
        {**calls(task("t1", "Dig deep")), "usage": spent},
        {"for": "Dig deep", **calls(GREP), "usage": spent},
        {"for": "Dig deep", "text": "Partial: port in app.py.", "usage": spent},
        {"text": "Out of budget; the agent found app.py.", "usage": spent},
    ]
    session, log = await client.scripted_session(tmp_path, script, maxBudgetTokens=12000)
    _turn, done = await client.run_turn(session, "dig")
    assert done["stopReason"] == "budget_exceeded"
    finished = next(e for e in client.events.of_type("subagent_completed"))
    assert finished["stopReason"] == "budget_exceeded"
    assert [r["tool_choice"] for r in read_requests(log)] == ["auto", "auto", "none", "none"]
