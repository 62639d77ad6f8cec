"""Plugins through the real daemon on the scripted model: an installed plugin's command
runs as `/plugin:command` (and `/command`), its skill is listed by the Skill tool, its
agent type runs through Task; its hook waits for the user's trust in the plugin (asked
once, remembered by the plugin's digest, asked again once it changed), and so does its MCP
server (one question for both); a disabled plugin adds nothing; a plugin gone bad is told
once and the others still work."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from agent_client import AgentClient, read_requests, running_daemon
from plugin_fixture import make_plugin, write
from test_cli import agentls
from test_slash_commands import user_texts


def homes(tmp_path: Path) -> dict[str, str]:
    """A private HOME and AGENTLS_HOME, so no plugin or skill of the machine's user counts."""
    home, agentls_home = tmp_path / "home", tmp_path / "agentls-home"
    home.mkdir(exist_ok=True)
    agentls_home.mkdir(exist_ok=True)
    (tmp_path / "ws").mkdir(exist_ok=True)
    return {"HOME": str(home), "AGENTLS_HOME": str(agentls_home)}


def cli(tmp_path: Path, env: dict[str, str], *args: str) -> None:
    done = agentls("plugin", *args, cwd=tmp_path, **env)
    assert done.returncode == 0, done.stderr


def task(call_id: str, prompt: str, kind: str) -> dict[str, Any]:
    arguments = {"description": prompt[:20], "prompt": prompt, "subagent_type": kind}
    return {"tool_calls": [{"id": call_id, "name": "Task", "input": arguments}]}


def skill_call(call_id: str, name: str) -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": "Skill", "input": {"skill": name}}]}


def tool_result(request: dict[str, Any], call_id: str) -> dict[str, Any]:
    blocks = [b for m in request["messages"] for b in m["content"] if isinstance(b, dict)]
    return next(b for b in blocks if b.get("tool_use_id") == call_id)


async def test_a_plugins_command_skill_and_agent_join_the_session(tmp_path: Path) -> None:
    env = homes(tmp_path)
    cli(tmp_path, env, "add", str(make_plugin(tmp_path / "p" / "demo", "demo")))
    cli(tmp_path, env, "add", str(make_plugin(tmp_path / "p" / "off", "off")))
    cli(tmp_path, env, "disable", "off")
    broken = make_plugin(tmp_path / "p" / "broken", "broken")
    cli(tmp_path, env, "add", str(broken))
    write(broken / ".claude-plugin" / "plugin.json", "{oops")
    script = [
        task("t1", "Check the greeting", "demo:checker"),
        {"for": "Check the greeting", "text": "The greeting is fine."},
        skill_call("s1", "demo:helper"),
        skill_call("s2", "off:helper"),
        {"text": "done"},
    ]
    async with running_daemon(tmp_path / "ws", **env) as client:
        session, log = await client.scripted_session(tmp_path, script)
        announced = await client.events.wait_for(lambda e: e["type"] == "available_commands")
        turn, done = await client.run_turn(session, "/demo:greet the team")
        assert done["stopReason"] == "end_turn"
        opened = await client.new_session(
            tmp_path / "ws", provider="scripted", script=[{"text": "x"}]
        )
        notices = client.events.of_type("notice")
    plugins = {p["name"]: p for p in opened["plugins"]}
    assert plugins["demo"]["enabled"] and plugins["demo"]["commands"] == ["demo:greet"]
    assert plugins["off"]["enabled"] is False
    assert "not JSON" in plugins["broken"]["error"]
    by_name = {c["name"]: c for c in announced["commands"]}
    assert by_name["demo:greet"] == {
        "name": "demo:greet",
        "description": "Greets",
        "source": "plugin",
    }
    assert by_name["greet"]["source"] == "plugin"
    assert by_name["demo:helper"]["source"] == "skill"
    assert not [n for n in by_name if n.startswith(("off:", "broken:"))]
    # A plugin gone bad is told once, in the first turn; the others load.
    [notice] = notices
    assert notice["turnId"] == turn and "Plugin broken not loaded" in notice["message"]

    parent, child, after_task, after_skill, last = read_requests(log)
    assert user_texts(parent)[-1] == "Greet the team."
    assert "Skill" in parent["tools"] and "Task" in parent["tools"]
    assert "CHECKER-INSTRUCTIONS" in child["system_dynamic"]
    assert tool_result(after_task, "t1")["content"].startswith("The greeting is fine.")
    assert "HELPER-BODY" in tool_result(after_skill, "s1")["content"]
    # The disabled plugin's skill is not there: the model is told the skills there are.
    refused = tool_result(last, "s2")
    assert refused["is_error"] and "The skills are: demo:helper." in refused["content"]


async def trust_turn(
    client: AgentClient, tmp_path: Path, option: str | None
) -> dict[str, Any] | None:
    """A turn in a new session answering the trust question with `option` (None: no
    question may come); the question asked."""
    session, _log = await client.scripted_session(tmp_path, [{"text": "ok"}])
    answering = asyncio.create_task(client.answer_permission(session, option or ""))
    turn, done = await client.run_turn(session, "hello")
    assert done["stopReason"] == "end_turn"
    if option is None:
        answering.cancel()
        assert not [e for e in client.events.of_turn(turn) if e["type"] == "permission_request"]
        return None
    return await answering


async def test_a_plugins_hook_runs_only_once_the_plugin_is_trusted(tmp_path: Path) -> None:
    env = homes(tmp_path)
    marks = tmp_path / "marks.txt"
    folder = make_plugin(tmp_path / "p" / "hooky", "hooky", marks=marks)
    cli(tmp_path, env, "add", str(folder))

    def ran() -> list[str]:
        return marks.read_text().split() if marks.exists() else []

    async with running_daemon(tmp_path / "ws", **env) as client:
        asked = await trust_turn(client, tmp_path, "reject_once")
        assert asked is not None and ran() == []
        assert asked["title"].startswith("Trust the plugin hooky?")
        [command] = asked["input"]["runs"]
        # ${CLAUDE_PLUGIN_ROOT} is the plugin's folder.
        assert f"{folder.resolve()}/scripts/mark.py hooky" in command
        assert asked["input"]["plugin"] == "hooky"
        assert asked["options"][0]["optionId"] == "allow_always"
        # "Once" is not remembered: the next session asks again.
        assert await trust_turn(client, tmp_path, "allow_always") is not None
        assert ran() == ["hooky"]
        assert await trust_turn(client, tmp_path, None) is None
        assert ran() == ["hooky", "hooky"]
        # A changed plugin is another plugin: asked again.
        write(folder / "commands" / "greet.md", "Greet $ARGUMENTS warmly.\n")
        assert await trust_turn(client, tmp_path, "reject_always") is not None
        assert await trust_turn(client, tmp_path, None) is None
        assert ran() == ["hooky", "hooky"]
        cli(tmp_path, env, "disable", "hooky")
        write(folder / "commands" / "greet.md", "Greet $ARGUMENTS again.\n")
        # Disabled: no question, no hook, no command.
        assert await trust_turn(client, tmp_path, None) is None
        opened = await client.new_session(
            tmp_path / "ws", provider="scripted", script=[{"text": "x"}]
        )
        commands = await client.request("agent/listCommands", {"sessionId": opened["sessionId"]})
    assert ran() == ["hooky", "hooky"]
    assert not [c for c in commands["commands"] if c["source"] == "plugin"]
    remembered = json.loads((Path(env["AGENTLS_HOME"]) / "workspace-trust.json").read_text())
    assert remembered["plugin:hooky"]["trusted"] is False


SERVER = Path(__file__).parent / "mcp_fixture_server.py"


def mcp_call(text: str) -> dict[str, Any]:
    return {"tool_calls": [{"id": "c1", "name": "mcp__pfx__echo", "input": {"text": text}}]}


async def test_a_plugins_mcp_server_and_hook_wait_for_one_trust_question(
    tmp_path: Path,
) -> None:
    env = homes(tmp_path)
    marks = tmp_path / "marks.txt"
    folder = make_plugin(tmp_path / "p" / "both", "both", marks=marks)
    write(folder / "servers" / "fx.py", SERVER.read_text())
    server = {"command": sys.executable, "args": ["${CLAUDE_PLUGIN_ROOT}/servers/fx.py"]}
    write(folder / ".mcp.json", json.dumps({"mcpServers": {"pfx": server}}))
    cli(tmp_path, env, "add", str(folder))
    script = [mcp_call("from the plugin"), {"text": "ok"}]
    async with running_daemon(tmp_path / "ws", **env) as client:
        session, log = await client.scripted_session(
            tmp_path, script, permissionMode="bypassPermissions"
        )
        listed = await client.request("agent/listMcpServers", {"sessionId": session})
        assert [(s["name"], s["status"]) for s in listed["servers"]] == [
            ("pfx", "awaiting_approval")
        ]
        answering = asyncio.create_task(client.answer_permission(session, "allow_once"))
        turn, done = await client.run_turn(session, "echo")
        asked = await answering
        assert done["stopReason"] == "end_turn"
        questions = [e for e in client.events.of_turn(turn) if e["type"] == "permission_request"]
        second, _log = await client.scripted_session(tmp_path, [{"text": "no"}])
        answering = asyncio.create_task(client.answer_permission(second, "reject_always"))
        await client.run_turn(second, "again")
        await answering
        stopped = await client.events.wait_for(
            lambda e: (
                e["type"] == "mcp_status" and e["sessionId"] == second and e["status"] == "stopped"
            )
        )
    # One question for the plugin's hook and server, naming what each runs.
    assert len(questions) == 1 and asked["input"]["plugin"] == "both"
    assert f"{folder.resolve()}/servers/fx.py" in asked["title"]
    assert marks.read_text().split() == ["both"]
    after = read_requests(log)[1]
    echoed = tool_result(after, "c1")
    assert "echo: from the plugin" in json.dumps(echoed["content"])
    assert "did not trust the plugin both" in stopped["error"]
