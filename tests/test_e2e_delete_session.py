"""agent/deleteSession over stdio: a saved session deleted for good (its transcript,
listing entry and folder), a live one closed first (its running turn aborted), its
isolated agents' worktrees and branches removed from the user's repository."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from agent_client import AgentClient
from test_e2e_worktrees import git, isolated, make_repo, write


@pytest.fixture
def workspace_files() -> dict[str, str | bytes]:
    return {"app.txt": "one\n"}


def sessions_folder() -> Path:
    return Path(os.environ["AGENTLS_HOME"]) / "sessions"


async def listed_ids(client: AgentClient, tmp_path: Path) -> set[str]:
    params = {"cwd": str(tmp_path / "ws"), "limit": 500}
    listed = await client.request("agent/listSessions", params)
    return {s["sessionId"] for s in listed["sessions"]}


async def test_a_closed_session_is_deleted_and_never_listed_or_resumed_again(
    client: AgentClient, tmp_path: Path
) -> None:
    session, _log = await client.scripted_session(tmp_path, [{"text": "hello"}])
    await client.run_turn(session, "hi")
    await client.request("agent/closeSession", {"sessionId": session})
    assert session in await listed_ids(client, tmp_path)
    assert (sessions_folder() / f"{session}.jsonl").is_file()

    done = await client.request("agent/deleteSession", {"sessionId": session})
    assert done == {"deleted": True, "warnings": []}
    assert not [p for p in sessions_folder().iterdir() if p.name.startswith(session)]
    assert session not in await listed_ids(client, tmp_path)
    # The index file on disk no longer holds it either.
    assert session not in (sessions_folder() / "index.json").read_text(encoding="utf-8")
    with pytest.raises(JsonRpcException) as resumed:
        await client.request("agent/resumeSession", {"sessionId": session})
    assert resumed.value.code == 1001
    with pytest.raises(JsonRpcException) as again:
        await client.request("agent/deleteSession", {"sessionId": session})
    assert again.value.code == 1001


async def test_an_open_session_with_a_running_turn_is_aborted_then_deleted(
    client: AgentClient, tmp_path: Path
) -> None:
    session, _log = await client.scripted_session(tmp_path, [{"text": "thinking", "hang": True}])
    started = await client.request("agent/submitMessage", {"sessionId": session, "text": "go"})
    await client.events.wait_for(lambda e: e["type"] == "text_delta" and e["sessionId"] == session)

    done = await client.request("agent/deleteSession", {"sessionId": session})
    assert done["deleted"] is True
    completed = await client.events.turn_completed(started["turnId"])
    assert completed["stopReason"] == "aborted"
    assert not [p for p in sessions_folder().iterdir() if p.name.startswith(session)]
    assert session not in await listed_ids(client, tmp_path)
    with pytest.raises(JsonRpcException) as closed:
        await client.request("agent/submitMessage", {"sessionId": session, "text": "more"})
    assert closed.value.code == 1001


async def test_an_isolated_agents_worktree_and_branch_are_removed(
    client: AgentClient, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    make_repo(ws)
    script = [
        {"tool_calls": [isolated("a", "Write alpha")]},
        {"for": "Write alpha", "tool_calls": [write("wa", "alpha.txt", "alpha\n")]},
        {"for": "Write alpha", "text": "Wrote alpha."},
        {"text": "Done."},
    ]
    session, _log = await client.scripted_session(tmp_path, script, permissionMode="acceptEdits")
    await client.run_turn(session, "write alpha")
    finished = client.events.of_type("subagent_completed")[-1]
    tree, branch = Path(finished["worktree"]["path"]), finished["worktree"]["branch"]
    assert tree.is_dir() and branch in git(ws, "branch", "--list")

    done = await client.request("agent/deleteSession", {"sessionId": session})
    assert done == {"deleted": True, "warnings": []}
    assert not tree.exists()
    assert git(ws, "branch", "--list", "agentls/*") == ""
    assert str(tree) not in git(ws, "worktree", "list")
    # The user's tree is as it was.
    assert git(ws, "status", "--porcelain") == ""


async def test_a_worktree_git_cannot_remove_is_a_warning_not_a_half_deleted_session(
    client: AgentClient, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    make_repo(ws)
    script = [
        {"tool_calls": [isolated("a", "Write alpha")]},
        {"for": "Write alpha", "tool_calls": [write("wa", "alpha.txt", "alpha\n")]},
        {"for": "Write alpha", "text": "Wrote alpha."},
        {"text": "Done."},
    ]
    session, _log = await client.scripted_session(tmp_path, script, permissionMode="acceptEdits")
    await client.run_turn(session, "write alpha")
    tree = Path(client.events.of_type("subagent_completed")[-1]["worktree"]["path"])
    # A locked worktree: `git worktree remove --force` (one --force) refuses it.
    git(ws, "worktree", "lock", str(tree))

    done = await client.request("agent/deleteSession", {"sessionId": session})
    assert done["deleted"] is True
    assert len(done["warnings"]) == 1 and str(tree) in done["warnings"][0]
    assert not [p for p in sessions_folder().iterdir() if p.name.startswith(session)]
    assert session not in await listed_ids(client, tmp_path)


@pytest.mark.parametrize("hostile", ["../sess_x", "sess_a/b", "sess_..", "a\\b", "sess_x\0"])
async def test_a_hostile_id_is_invalid_params(client: AgentClient, hostile: str) -> None:
    with pytest.raises(JsonRpcException) as refused:
        await client.request("agent/deleteSession", {"sessionId": hostile})
    assert refused.value.code == -32602
    assert refused.value.data == {"field": "sessionId"}


async def test_an_unknown_session_is_the_usual_unknown_session_error(
    client: AgentClient,
) -> None:
    for unknown in ("sess_nothere", "whatever"):
        with pytest.raises(JsonRpcException) as refused:
            await client.request("agent/deleteSession", {"sessionId": unknown})
        assert refused.value.code == 1001


async def test_another_window_attached_to_it_sees_the_turn_aborted(tmp_path: Path) -> None:
    """Two windows on one TCP daemon: the second deletes the session the first runs a turn in."""
    from tcp_daemon import start_tcp_daemon
    from test_tcp import Window

    home = tmp_path / "home"
    daemon = await start_tcp_daemon(env={"AGENTLS_HOME": str(home)})
    try:
        first, second = await Window.open(daemon), await Window.open(daemon)
        script = [{"text": "thinking", "hang": True}]
        params = {"cwd": str(tmp_path), "provider": "scripted", "script": script}
        session = (await first.request("agent/newSession", params))["result"]["sessionId"]
        submitted = {"sessionId": session, "text": "go"}
        turn = (await first.request("agent/submitMessage", submitted))["result"]["turnId"]
        await first.event(lambda e: e["type"] == "text_delta")
        await second.request("agent/resumeSession", {"sessionId": session})

        done = await second.request("agent/deleteSession", {"sessionId": session})
        assert done["result"] == {"deleted": True, "warnings": []}
        for window in (first, second):
            ended = await window.event(
                lambda e: e["type"] == "turn_completed" and e["turnId"] == turn
            )
            assert ended["stopReason"] == "aborted"
        later = await first.request("agent/submitMessage", submitted)
        assert later["error"]["code"] == 1001
        assert not [p for p in (home / "sessions").iterdir() if p.name.startswith(session)]
        await first.close()
        await second.close()
    finally:
        await daemon.stop()
