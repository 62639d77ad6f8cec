"""The VS Code extension's Permission Rules and MCP Servers views against a real daemon,
and Rewind/Changes on a resumed history.

`clients/vscode/test/daemon/views.ts` runs the views' own logic (src/permissionRules.ts,
src/mcpServers.ts, src/reducer.ts) in node against `agentls --stdio`, one part per test
(`VIEWS_DRIVER_PART`): a rule added in the local scope is listed under Allow and saved in
`.agentls/settings.local.json`, a malformed one is refused with the daemon's message, the
rule removed from list and file; the fixture MCP server (tests/mcp_fixture_server.py) is
listed with its tools, restarted (a second start), disabled (remembered in the project's
`disabledMcpServers`) and enabled again, an unknown name refused; a resumed session's user
message knows the turn it began.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vscode_daemon_driver import run_driver


def test_a_rule_is_added_listed_saved_refused_when_malformed_and_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VIEWS_DRIVER_PART", "rules")
    workspace, steps = run_driver(tmp_path, "views-daemon", "x = 1\n")
    added = steps["ruleAdded"]
    assert dict(added["groups"])["allow"] == ["Bash(npm test:*) (local)"], added
    assert [g for g, _ in added["groups"]] == ["allow", "ask", "deny"]
    assert "Bash(npm test:*)" in added["settings"]["permissions"]["allow"]
    assert "settings.local.json" in (workspace / ".agentls" / ".gitignore").read_text()

    refused = steps["ruleRefused"]
    assert "Malformed permission rule" in refused["message"], refused
    assert refused["rules"] == ["Bash(npm test:*)"]

    removed = steps["ruleRemoved"]
    assert removed["rules"] == removed["listed"] == []
    assert "Bash(npm test:*)" not in removed["settings"]["permissions"].get("allow", [])


def test_a_resumed_user_message_carries_its_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VIEWS_DRIVER_PART", "resumed")
    _, steps = run_driver(tmp_path, "views-daemon", "x = 1\n")
    assert steps["resumed"]["shownTurn"] == steps["resumed"]["turnId"], steps["resumed"]


def test_an_mcp_server_is_listed_restarted_disabled_and_enabled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VIEWS_DRIVER_PART", "mcp")
    _, steps = run_driver(tmp_path, "views-daemon", "x = 1\n")
    [listed] = steps["mcpListed"]["servers"]
    assert listed["status"] == "ready" and listed["label"] == "fx"
    assert listed["description"].startswith("ready · stdio · ")
    assert {"echo", "add"} <= set(listed["tools"])

    restarted = steps["mcpRestarted"]
    assert restarted["servers"][0]["status"] == "ready"
    assert "ready#2" in restarted["statuses"], restarted["statuses"]

    [disabled] = steps["mcpDisabled"]["servers"]
    assert disabled["status"] == "disabled" and disabled["tools"] == []
    assert steps["mcpDisabled"]["settings"]["disabledMcpServers"] == ["fx"]

    [enabled] = steps["mcpEnabled"]["servers"]
    assert enabled["status"] == "ready" and "echo" in enabled["tools"]
    assert "fx" not in steps["mcpEnabled"]["settings"].get("disabledMcpServers", [])

    assert steps["mcpUnknown"]["message"], steps["mcpUnknown"]
    assert steps["mcpUnknown"]["logExists"]
