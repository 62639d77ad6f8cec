"""Remembered permissions over stdio: an "always" answer is saved to the project's personal,
git-ignored settings.local.json (the narrowest rule, shown before), so the next session does
not ask; the shared settings.json is a choice; clients list and edit the rules with
agent/listPermissionRules and agent/updatePermissionRules."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from agent_client import AgentClient

BASH = {"tool_calls": [{"name": "Bash", "input": {"command": "touch made.txt"}}]}


def project_rules(tmp_path: Path) -> dict[str, Any]:
    settings = json.loads((tmp_path / "ws" / ".agentls" / "settings.json").read_text())
    permissions: dict[str, Any] = settings["permissions"]
    return permissions


async def test_always_allow_is_saved_to_the_git_ignored_local_file_and_not_asked_again(
    client: AgentClient, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / ".agentls").mkdir()
    shared = ws / ".agentls" / "settings.json"
    shared.write_text('{"maxTurns": 50}')
    (ws / ".agentls" / ".gitignore").write_text("scratch/")
    first, _log = await client.scripted_session(tmp_path, [BASH, {"text": "ok"}])
    answering = asyncio.create_task(client.answer_permission(first, "allow_always"))
    _turn, done = await client.run_turn(first, "run it")
    request = await answering
    assert done["stopReason"] == "end_turn"
    always = next(o for o in request["options"] if o["optionId"] == "allow_always")
    assert always["rule"] == "Bash(touch:*)"
    # Saved, as the rule the user was shown, in the personal file; the shared one is as it was.
    local = json.loads((ws / ".agentls" / "settings.local.json").read_text())
    assert local == {"permissions": {"allow": ["Bash(touch:*)"]}}
    assert json.loads(shared.read_text()) == {"maxTurns": 50}
    assert (ws / ".agentls" / ".gitignore").read_text() == "scratch/\nsettings.local.json\n"
    untracked = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=ws,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert ".agentls/settings.json" in untracked and "settings.local.json" not in untracked

    second, _log = await client.scripted_session(tmp_path, [BASH, {"text": "again"}])
    turn, done = await client.run_turn(second, "run it again")
    assert done["stopReason"] == "end_turn"
    assert not [e for e in client.events.of_turn(turn) if e["type"] == "permission_request"]
    listed = await client.request("agent/listPermissionRules", {"sessionId": second})
    assert {"rule": "Bash(touch:*)", "behavior": "allow", "scope": "local"} in listed["rules"]


async def test_the_shared_file_is_a_choice_and_both_files_rules_hold(
    client: AgentClient, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    (ws / ".agentls").mkdir()
    (ws / ".agentls" / "settings.json").write_text(
        '{"permissionRulesScope": "project", "permissions": {"allow": ["Bash(mkdir:*)"]}}'
    )
    (ws / ".agentls" / "settings.local.json").write_text(
        '{"permissions": {"allow": ["Bash(rmdir:*)"]}}'
    )
    session, _log = await client.scripted_session(tmp_path, [BASH, {"text": "ok"}])
    answering = asyncio.create_task(client.answer_permission(session, "allow_always"))
    await client.run_turn(session, "run it")
    await answering
    assert project_rules(tmp_path) == {"allow": ["Bash(mkdir:*)", "Bash(touch:*)"]}
    assert not (ws / ".agentls" / ".gitignore").exists()
    listed = await client.request("agent/listPermissionRules", {"sessionId": session})
    assert {"rule": "Bash(rmdir:*)", "behavior": "allow", "scope": "local"} in listed["rules"]
    # The personal file's rules add to the shared file's, they do not replace them.
    both_rules = {"tool_calls": [{"name": "Bash", "input": {"command": "mkdir d && rmdir d"}}]}
    both, _log = await client.scripted_session(tmp_path, [both_rules, {"text": "ran"}])
    turn, done = await client.run_turn(both, "list")
    assert done["stopReason"] == "end_turn"
    assert not [e for e in client.events.of_turn(turn) if e["type"] == "permission_request"]


async def test_rules_are_edited_through_the_protocol(client: AgentClient, tmp_path: Path) -> None:
    session, _log = await client.scripted_session(tmp_path, [BASH, {"text": "ok"}])
    deny = {"rule": "Bash(rm:*)", "behavior": "deny", "scope": "project"}
    mine = {"rule": "Read(./secret.txt)", "behavior": "deny", "scope": "session"}
    result = await client.request(
        "agent/updatePermissionRules", {"sessionId": session, "add": [deny, mine]}
    )
    assert deny in result["rules"] and mine in result["rules"]
    assert project_rules(tmp_path) == {"deny": ["Bash(rm:*)"]}
    result = await client.request(
        "agent/updatePermissionRules", {"sessionId": session, "remove": [deny]}
    )
    assert deny not in result["rules"] and mine in result["rules"]
    assert project_rules(tmp_path) == {}
    with pytest.raises(JsonRpcException) as bad:
        await client.request(
            "agent/updatePermissionRules",
            {
                "sessionId": session,
                "add": [{"rule": "Bash(", "behavior": "allow", "scope": "user"}],
            },
        )
    assert bad.value.code == -32602


async def test_a_session_scope_keeps_always_to_the_session(
    client: AgentClient, tmp_path: Path
) -> None:
    (tmp_path / "ws" / ".agentls").mkdir()
    settings = tmp_path / "ws" / ".agentls" / "settings.json"
    settings.write_text('{"permissionRulesScope": "session"}')
    session, _log = await client.scripted_session(tmp_path, [BASH, {"text": "ok"}])
    answering = asyncio.create_task(client.answer_permission(session, "reject_always"))
    await client.run_turn(session, "run it")
    await answering
    assert json.loads(settings.read_text()) == {"permissionRulesScope": "session"}
    listed = await client.request("agent/listPermissionRules", {"sessionId": session})
    assert {"rule": "Bash(touch:*)", "behavior": "deny", "scope": "session"} in listed["rules"]
