"""Isolated agents over stdio: `Task` with `isolation: "worktree"` runs each agent in a
git worktree of its own; the user's tree stays as it was until the user merges an agent's
branch (agent/resolveWorktree), and a discard removes the worktree and the branch."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent_client import AgentClient, read_requests

APP = "line one\nline two\nline three\nline four\nline five\n"


@pytest.fixture
def workspace_files() -> dict[str, str | bytes]:
    return {"app.txt": APP}


def git(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    identity = ("-c", "user.name=Test", "-c", "user.email=test@example.com")
    done = subprocess.run(
        ["git", *identity, *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def make_repo(ws: Path) -> None:
    git(ws, "init", "-q", "-b", "main")
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "start")


def isolated(call_id: str, prompt: str) -> dict[str, Any]:
    arguments = {
        "description": prompt[:20],
        "prompt": prompt,
        "subagent_type": "general",
        "isolation": "worktree",
    }
    return {"id": call_id, "name": "Task", "input": arguments}


def write(call_id: str, path: str, content: str) -> dict[str, Any]:
    return {"id": call_id, "name": "Write", "input": {"file_path": path, "content": content}}


def edit(call_id: str, old: str, new: str) -> dict[str, Any]:
    arguments = {"file_path": "app.txt", "old_string": old, "new_string": new}
    return {"id": call_id, "name": "Edit", "input": arguments}


def read(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "name": "Read", "input": {"file_path": "app.txt"}}


def completed(events: list[dict[str, Any]], call_id: str) -> dict[str, Any]:
    return next(
        e for e in events if e["type"] == "subagent_completed" and e["parentToolCallId"] == call_id
    )


def result_of(events: list[dict[str, Any]], call_id: str) -> dict[str, Any]:
    updates = [e for e in events if e["type"] == "tool_call_update" and e["toolCallId"] == call_id]
    return updates[-1]


async def test_two_isolated_agents_write_apart_then_one_is_merged_one_discarded(
    client: AgentClient, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    make_repo(ws)
    script = [
        {"tool_calls": [isolated("a", "Write alpha"), isolated("b", "Write beta")]},
        {"for": "Write alpha", "tool_calls": [write("wa", "alpha.txt", "alpha\n")]},
        {"for": "Write beta", "tool_calls": [write("wb", "beta.txt", "beta\n")]},
        # Each agent's last answer takes a second, so both have started (a worktree each,
        # made one at a time) before either ends, however slow the machine.
        {"for": "Write alpha", "text": "Wrote alpha.", "delay": 1.0},
        {"for": "Write beta", "text": "Wrote beta.", "delay": 1.0},
        {"text": "Both agents are done."},
    ]
    session, log = await client.scripted_session(tmp_path, script, permissionMode="acceptEdits")
    turn, done = await client.run_turn(session, "write both")
    assert done["stopReason"] == "end_turn"
    events = client.events.of_turn(turn)
    # Both ran at once: each started before the first ended.
    kinds = [(e["type"], e.get("parentToolCallId")) for e in events]
    first_done = min(kinds.index(("subagent_completed", c)) for c in ("a", "b"))
    assert max(kinds.index(("subagent_started", c)) for c in ("a", "b")) < first_done
    # The agents wrote on disk in their worktrees, never through the editor.
    assert client.applied_edits == []
    # The user's tree is untouched: no new file, nothing staged, no new branch checked out.
    assert sorted(p.name for p in ws.iterdir() if p.name != ".git") == ["app.txt"]
    assert git(ws, "status", "--porcelain") == ""
    assert git(ws, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"

    worktrees = {}
    for call_id, name in (("a", "alpha.txt"), ("b", "beta.txt")):
        finished = completed(events, call_id)
        tree = finished["worktree"]
        assert tree["branch"] == f"agentls/{finished['agentId']}"
        assert tree["files"] == [{"path": name, "status": "added", "added": 1, "removed": 0}]
        assert (tree["added"], tree["removed"]) == (1, 0)
        # Outside the user's tree, committed on the agent's branch.
        assert not Path(tree["path"]).is_relative_to(ws)
        assert (Path(tree["path"]) / name).read_text(encoding="utf-8") == name[:-4] + "\n"
        assert git(Path(tree["path"]), "status", "--porcelain") == ""
        # The model is told the diff summary in the Task result.
        result = result_of(events, call_id)["content"]
        assert f"branch {tree['branch']}" in result and f"A {name} (+1 -0)" in result
        worktrees[call_id] = (finished["agentId"], tree)
    # Each agent was told where it works.
    child_requests = [r for r in read_requests(log) if "<worktree>" in str(r["messages"][0])]
    assert len(child_requests) >= 2

    listed = await client.request("agent/listWorktrees", {"sessionId": session})
    assert {w["agentId"]: w["status"] for w in listed["worktrees"]} == {
        worktrees["a"][0]: "ready",
        worktrees["b"][0]: "ready",
    }
    diff = await client.request(
        "agent/worktreeDiff", {"sessionId": session, "agentId": worktrees["a"][0]}
    )
    assert [(f["path"], f["created"], f["added"]) for f in diff["files"]] == [
        (str(ws / "alpha.txt"), True, 1)
    ]
    assert "+alpha" in diff["files"][0]["diff"]

    merged = await client.request(
        "agent/resolveWorktree",
        {"sessionId": session, "agentId": worktrees["a"][0], "action": "merge"},
    )
    assert merged == {
        "action": "merge",
        "resolved": True,
        "merged": [str(ws / "alpha.txt")],
        "conflicts": [],
    }
    assert (ws / "alpha.txt").read_text(encoding="utf-8") == "alpha\n"
    # The merge went through the editor, as the agent's own edits in the user's tree do.
    assert len(client.applied_edits) == 1
    # Uncommitted in the user's tree, on the user's branch.
    assert git(ws, "status", "--porcelain") == "?? alpha.txt\n"
    discarded = await client.request(
        "agent/resolveWorktree",
        {"sessionId": session, "agentId": worktrees["b"][0], "action": "discard"},
    )
    assert discarded["resolved"] and discarded["merged"] == []
    assert not (ws / "beta.txt").exists()
    for agent_id, tree in worktrees.values():
        assert not Path(tree["path"]).exists()
        assert git(ws, "branch", "--list", f"agentls/{agent_id}") == ""
        assert tree["path"] not in git(ws, "worktree", "list")
    resolved = await client.events.wait_for(
        lambda e: e["type"] == "worktree_resolved" and e["action"] == "discarded"
    )
    assert resolved["agentId"] == worktrees["b"][0]
    listed = await client.request("agent/listWorktrees", {"sessionId": session})
    assert listed["worktrees"] == []


async def test_a_conflicting_merge_changes_nothing_and_a_clean_one_merges_both_sides(
    client: AgentClient, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    make_repo(ws)
    script = [
        {"tool_calls": [isolated("a", "Change line one")]},
        {"for": "Change line one", "tool_calls": [read("r1")]},
        {"for": "Change line one", "tool_calls": [edit("e1", "line one", "LINE ONE")]},
        {"for": "Change line one", "text": "Changed."},
        {"text": "Done."},
    ]
    session, _log = await client.scripted_session(tmp_path, script, permissionMode="acceptEdits")
    turn, _done = await client.run_turn(session, "change it")
    agent_id = completed(client.events.of_turn(turn), "a")["agentId"]
    assert (ws / "app.txt").read_text(encoding="utf-8") == APP

    # The user changed the same line meanwhile: the merge conflicts and writes nothing.
    mine = APP.replace("line one", "my line one")
    (ws / "app.txt").write_text(mine, encoding="utf-8")
    params = {"sessionId": session, "agentId": agent_id, "action": "merge"}
    refused = await client.request("agent/resolveWorktree", params)
    assert refused["resolved"] is False and refused["merged"] == []
    assert refused["conflicts"] == [
        {
            "path": str(ws / "app.txt"),
            "reason": "the agent and your working tree changed the same lines",
        }
    ]
    assert (ws / "app.txt").read_text(encoding="utf-8") == mine
    listed = await client.request("agent/listWorktrees", {"sessionId": session})
    assert [w["agentId"] for w in listed["worktrees"]] == [agent_id]

    # A change elsewhere in the file merges with the agent's, uncommitted in the user's tree.
    elsewhere = APP.replace("line five", "my line five")
    (ws / "app.txt").write_text(elsewhere, encoding="utf-8")
    merged = await client.request("agent/resolveWorktree", params)
    assert merged["resolved"] is True
    both = APP.replace("line one", "LINE ONE").replace("line five", "my line five")
    assert (ws / "app.txt").read_text(encoding="utf-8") == both
    assert git(ws, "log", "--oneline").count("\n") == 1

    # The merge is the agent's turn's change: a rewind of the turn takes it back.
    await client.request(
        "agent/rewind", {"sessionId": session, "turnId": turn, "what": "files", "force": True}
    )
    assert (ws / "app.txt").read_text(encoding="utf-8") == elsewhere


async def test_isolation_outside_a_git_repository_is_a_clear_tool_error(
    client: AgentClient, tmp_path: Path
) -> None:
    script = [
        {"tool_calls": [isolated("a", "Write alpha")]},
        {"text": "It could not start."},
    ]
    session, _log = await client.scripted_session(tmp_path, script, permissionMode="acceptEdits")
    turn, _done = await client.run_turn(session, "go")
    failed = result_of(client.events.of_turn(turn), "a")
    assert failed["status"] == "failed"
    assert 'isolation: "worktree" needs a git repository' in failed["content"]
    assert "not in a git repository" in failed["content"]
    assert not any(e["type"] == "subagent_started" for e in client.events.of_turn(turn))


async def test_worktrees_outlive_an_abort_and_a_resume(client: AgentClient, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    make_repo(ws)
    script = [
        {"tool_calls": [isolated("a", "Write alpha")]},
        {"for": "Write alpha", "tool_calls": [write("wa", "alpha.txt", "alpha\n")]},
        {"for": "Write alpha", "text": "Still thinking", "hang": True},
    ]
    session, _log = await client.scripted_session(tmp_path, script, permissionMode="acceptEdits")
    result = await client.request("agent/submitMessage", {"sessionId": session, "text": "go"})
    await client.events.wait_for(
        lambda e: (
            e["type"] == "tool_call_update"
            and e["toolCallId"] == "wa"
            and e["status"] == "completed"
        )
    )
    listed = await client.request("agent/listWorktrees", {"sessionId": session})
    assert [w["status"] for w in listed["worktrees"]] == ["running"]
    agent_id = listed["worktrees"][0]["agentId"]
    busy = {"sessionId": session, "agentId": agent_id, "action": "merge"}
    with pytest.raises(Exception, match="still working in its worktree"):
        await client.request("agent/resolveWorktree", busy)
    await client.request("agent/abort", {"sessionId": session})
    await client.events.turn_completed(result["turnId"])
    await client.request("agent/closeSession", {"sessionId": session})

    # A resumed session (as after a daemon restart) finds its worktrees in its folder; the
    # aborted agent's uncommitted file is committed on its branch when listed.
    await client.request("agent/resumeSession", {"sessionId": session})
    listed = await client.request("agent/listWorktrees", {"sessionId": session})
    [entry] = listed["worktrees"]
    assert (entry["agentId"], entry["status"]) == (agent_id, "ready")
    assert entry["files"] == [{"path": "alpha.txt", "status": "added", "added": 1, "removed": 0}]
    merged = await client.request("agent/resolveWorktree", busy)
    assert merged["merged"] == [str(ws / "alpha.txt")]
    assert (ws / "alpha.txt").read_text(encoding="utf-8") == "alpha\n"
    assert git(ws, "branch", "--list", f"agentls/{agent_id}") == ""
