"""ACP `session/delete` through the official TypeScript SDK's client (tests/acp_node/client.mjs,
the SDK's own `methods.agent.session.delete`): a saved session deleted from a fresh agent, a
live one deleted under its running prompt, and a session whose isolated agent left a locked
worktree (named in `_meta.agentls.warnings`, the session gone anyway). Skipped without node
or tests/acp_node/node_modules."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from test_acp_node_client import (
    Output,
    node,
    request_ids,
    responses_to,
    run_client,
    scripted,
)
from test_e2e_worktrees import git, isolated, make_repo, write

__all__ = ["node"]  # the fixture, used by name


def saved_files(session_id: str) -> list[Path]:
    """The session's transcript and folder in the agent's home."""
    folder = Path(os.environ["AGENTLS_HOME"]) / "sessions"
    return [p for p in folder.iterdir() if p.name.startswith(session_id)]


def other_worktrees(repo: Path) -> list[Path]:
    """Worktrees of `repo` other than its own tree (the isolated agents')."""
    listed = git(repo, "worktree", "list", "--porcelain").splitlines()
    trees = [
        Path(line.removeprefix("worktree ")) for line in listed if line.startswith("worktree ")
    ]
    return [t for t in trees if t.resolve() != repo.resolve()]


def test_initialize_advertises_delete_and_the_sdk_parses_it(node: str, tmp_path: Path) -> None:
    out = run_client(node, tmp_path, {"steps": []})
    capabilities = out["initialize"]["agentCapabilities"]["sessionCapabilities"]
    assert capabilities["delete"] == {}
    assert {"list", "resume", "close", "delete", "fork"} <= set(capabilities)


def test_a_saved_session_is_deleted_for_good_from_a_fresh_agent(node: str, tmp_path: Path) -> None:
    first = run_client(
        node,
        tmp_path / "first",
        {
            "cwd": str(tmp_path),
            "steps": [
                {"op": "new", "as": "s", "meta": scripted(tmp_path, [{"text": "Hello."}])},
                {"op": "prompt", "session": "s", "text": "hi"},
            ],
        },
    )
    session_id = first["steps"][0]["result"]["sessionId"]
    assert first["steps"][1]["result"]["stopReason"] == "end_turn"
    assert saved_files(session_id)

    # A new agent process: the session is only on disk.
    out = run_client(
        node,
        tmp_path / "second",
        {
            "cwd": str(tmp_path),
            "steps": [
                {"op": "list"},
                {"op": "delete", "sessionId": session_id},
                {"op": "list"},
                {"op": "load", "sessionId": session_id},
                {"op": "delete", "sessionId": session_id},
            ],
        },
    )
    listed, deleted, after, loaded, again = out["steps"]
    assert [s["sessionId"] for s in listed["result"]["sessions"]] == [session_id]
    assert deleted["result"] == {}
    # The answer on the wire: `{}`, no warnings.
    answer = responses_to(out, request_ids(out, "session/delete")[0])
    assert [m["message"]["result"] for m in answer] == [{}]
    assert after["result"]["sessions"] == []
    assert saved_files(session_id) == []
    assert loaded["error"]["code"] == -32002
    # Deleted already: ACP says a delete of it succeeds silently (agentls answers `{}`
    # itself; the SDK would also resolve a -32002 as done, but not another error).
    assert again["result"] == {}
    assert responses_to(out, request_ids(out, "session/delete")[1])[0]["message"]["result"] == {}


def delete_under_prompt(
    node: str, tmp_path: Path, script: list[dict[str, Any]], at: str, **scenario: Any
) -> tuple[str, Output]:
    """A session deleted under its running prompt (at its first text chunk or its first
    permission request); then session/list and a prompt to the deleted id."""
    out = run_client(
        node,
        tmp_path,
        {
            **scenario,
            "steps": [
                {"op": "new", "as": "s", "meta": scripted(tmp_path, script)},
                {"op": "prompt", "session": "s", "text": "go", "deleteAt": at},
                {"op": "list"},
                {"op": "prompt", "session": "s", "text": "more"},
            ],
        },
    )
    session_id = out["steps"][0]["result"]["sessionId"]
    both = out["steps"][1]["result"]
    assert both["delete"] == {"result": {}}
    # The running turn was aborted: its prompt is answered `cancelled`, not an error.
    assert both["prompt"]["result"]["stopReason"] == "cancelled"
    # Nothing more is said of the session once its delete is answered (a title update
    # after it would bring the deleted session back into the client's list).
    [answered] = responses_to(out, request_ids(out, "session/delete")[0])
    late = [
        m["message"]["params"]["update"]
        for m in out["wire"]
        if m["seq"] > answered["seq"] and m["message"].get("method") == "session/update"
    ]
    assert late == []
    assert out["steps"][2]["result"]["sessions"] == []
    assert out["steps"][3]["error"]["code"] == -32002
    assert saved_files(session_id) == []
    return session_id, out


def test_a_live_session_is_deleted_under_its_running_prompt(node: str, tmp_path: Path) -> None:
    script = [{"text": "This answer never finishes", "hang": True}]
    delete_under_prompt(node, tmp_path, script, "chunk")


def test_a_session_deleted_while_it_asks_permission_never_runs_the_call(
    node: str, tmp_path: Path
) -> None:
    write = {"file_path": "new.txt", "content": "x\n"}
    script = [
        {"text": "Writing.", "tool_calls": [{"id": "w1", "name": "Write", "input": write}]},
        {"text": "Written."},
    ]
    held = {"optionId": "allow_once", "hold": True}
    _session, out = delete_under_prompt(node, tmp_path, script, "permission", permission=held)
    # The client allowed it after the delete's answer: too late, nothing was written.
    [asked] = out["permissions"]
    assert asked["answer"]["outcome"] == {"outcome": "selected", "optionId": "allow_once"}
    assert not (tmp_path / "new.txt").exists()
    calls = (tmp_path / "requests.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(calls) == 1


def test_a_locked_worktree_is_a_warning_and_the_session_is_gone_anyway(
    node: str, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.txt").write_text("one\n", encoding="utf-8")
    make_repo(ws)
    script = [
        {"tool_calls": [isolated("a", "Write alpha")]},
        {"for": "Write alpha", "tool_calls": [write("wa", "alpha.txt", "alpha\n")]},
        {"for": "Write alpha", "text": "Wrote alpha."},
        {"text": "Done."},
    ]
    meta = scripted(tmp_path, script)
    meta["agentls"]["permissionMode"] = "acceptEdits"
    first = run_client(
        node,
        tmp_path / "first",
        {
            "cwd": str(ws),
            "steps": [
                {"op": "new", "as": "s", "meta": meta},
                {"op": "prompt", "session": "s", "text": "write alpha"},
            ],
        },
    )
    session_id = first["steps"][0]["result"]["sessionId"]
    assert first["steps"][1]["result"]["stopReason"] == "end_turn"
    [tree] = other_worktrees(ws)
    # A locked worktree: `git worktree remove --force` (one --force) refuses it.
    git(ws, "worktree", "lock", str(tree))

    out = run_client(
        node,
        tmp_path / "second",
        {
            "cwd": str(ws),
            "steps": [{"op": "delete", "sessionId": session_id}, {"op": "list"}],
        },
    )
    deleted, listed = out["steps"]
    warnings: list[Any] = deleted["result"]["_meta"]["agentls"]["warnings"]
    assert len(warnings) == 1 and str(tree) in warnings[0]
    assert listed["result"]["sessions"] == []
    assert saved_files(session_id) == []
    # The session's folder (the worktree's files with it) is gone; git keeps its record of
    # the locked worktree, which the warning tells the user about.
    assert not tree.exists()
    assert str(tree) in git(ws, "worktree", "list")
