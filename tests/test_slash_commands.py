"""Slash commands over stdio: the built-ins, custom project and user commands, how they
are advertised, and what is (and is not) a command."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from agent_client import (
    AgentClient,
    Event,
    read_requests,
    running_daemon,
    write_script,
)
from agentls.commands.builtin import BUILT_IN, INIT_PROMPT, REVIEW_PROMPT, standard_catalog
from agentls.commands.catalog import (
    CommandFolder,
    FixedCommands,
    SlashCommand,
    parse_command_file,
)
from agentls.commands.invocation import expand, parse_invocation
from agentls.front_matter import comma_list
from agentls.permissions.gate import PermissionGate
from agentls.permissions.rules import Rule, parse_rule
from agentls.permissions.scoped import TurnGate
from agentls.session.slash import render
from test_cli import agentls


def user_texts(request: dict[str, Any]) -> list[str]:
    """The text the user sent in a model request, message by message (context aside)."""
    return [
        block["text"]
        for message in request["messages"]
        if message["role"] == "user"
        for block in message["content"]
        if block["type"] == "text" and not block["text"].startswith("<userContext>")
    ]


def command_file(folder: Path, name: str, text: str) -> Path:
    path = folder / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


async def run_command(client: AgentClient, session: str, text: str) -> tuple[Event, Event]:
    """Submit a local command; its command_output and turn_completed."""
    turn, done = await client.run_turn(session, text)
    outputs = [e for e in client.events.of_turn(turn) if e["type"] == "command_output"]
    assert len(outputs) == 1
    return outputs[0], done


def write_call(call_id: str, path: str, content: str) -> dict[str, Any]:
    return {
        "tool_calls": [
            {"id": call_id, "name": "Write", "input": {"file_path": path, "content": content}}
        ]
    }


# --- reading a message as a command, expanding its prompt ----------------------------------


def test_only_a_leading_slash_word_is_an_invocation() -> None:
    assert parse_invocation("/review") == parse_invocation("/review  ")
    found = parse_invocation("/fix 123 high\nmore")
    assert found is not None and (found.name, found.arguments) == ("fix", "123 high\nmore")
    namespaced = parse_invocation("/frontend:component Button")
    assert namespaced is not None and namespaced.name == "frontend:component"
    for text in ("/usr/bin is slow", " /review", "review", "/", "/ review", "/a.txt", "//x"):
        assert parse_invocation(text) is None, text


def test_arguments_fill_the_placeholders() -> None:
    template = "Fix issue $1 at priority $2 ($3). All: $ARGUMENTS"
    assert expand(template, '42 "very high"') == (
        'Fix issue 42 at priority very high (). All: 42 "very high"'
    )
    # Text put in by $ARGUMENTS is not expanded again.
    assert expand("Say $ARGUMENTS", "$1 and $ARGUMENTS") == "Say $1 and $ARGUMENTS"
    # A template without placeholders keeps what the user typed.
    assert expand("Review.", "src/app.py") == "Review.\n\nARGUMENTS: src/app.py"
    assert expand("Review.", "") == "Review."


def test_a_command_file_reads_its_front_matter() -> None:
    command = parse_command_file(
        "---\ndescription: Fix an issue\nargument-hint: <issue> [priority]\n"
        "allowed-tools: Bash(git add:*), Bash(npm run x -- a,b), Write\nmodel: small\n---\n"
        "Fix issue $1.\n",
        "fix",
        "project",
    )
    assert (command.name, command.description, command.argument_hint) == (
        "fix",
        "Fix an issue",
        "<issue> [priority]",
    )
    assert command.allowed_tools == ("Bash(git add:*)", "Bash(npm run x -- a,b)", "Write")
    assert (command.model, command.template, command.local) == ("small", "Fix issue $1.", False)
    bare = parse_command_file("Just do it.\nNow.", "go", "user")
    assert bare.description == "Just do it." and bare.allowed_tools == ()
    with pytest.raises(ValueError, match="empty"):
        parse_command_file("---\ndescription: x\n---\n\n", "empty", "user")
    assert comma_list("[Read, 'Grep']") == ("Read", "Grep")


def test_a_folder_is_read_again_only_when_it_changed(tmp_path: Path) -> None:
    folder = CommandFolder(tmp_path, "project")
    assert folder.commands() == ()
    command_file(tmp_path, "a", "A.")
    command_file(tmp_path / "sub", "b", "B.")
    command_file(tmp_path, "bad name", "ignored: not a command name")
    first = folder.commands()
    assert [c.name for c in first] == ["a", "sub:b"]
    assert folder.commands() is first
    command_file(tmp_path, "a", "A, changed.")
    assert folder.commands()[0].template == "A, changed."


async def test_a_later_source_joins_the_catalog_with_its_own_renderer(tmp_path: Path) -> None:
    # The seam MCP prompts use: a source whose commands fetch their prompt.
    catalog = standard_catalog(tmp_path, user_home=tmp_path / "home")
    seen: list[str] = []

    async def fetch(arguments: str) -> str:
        seen.append(arguments)
        return f"The server's prompt for {arguments}"

    prompt = SlashCommand("mcp__docs__explain", "Explain a topic", source="mcp", render=fetch)
    catalog.add_source(FixedCommands((prompt, SlashCommand("cost", "Not the built-in"))))
    assert catalog.refresh() is True and catalog.refresh() is False
    found = catalog.find("mcp__docs__explain")
    assert found is not None and await render(found, "caching") == "The server's prompt for caching"
    assert seen == ["caching"]
    # A local built-in keeps its name.
    cost = catalog.find("cost")
    assert cost is not None and cost.local and cost.source == "builtin"


# --- advertised commands -------------------------------------------------------------------


async def test_a_new_session_announces_its_commands_and_lists_them(
    client: AgentClient, tmp_path: Path
) -> None:
    session, _log = await client.scripted_session(tmp_path, [])
    announced = await client.events.wait_for(
        lambda e: e["type"] == "available_commands" and e["sessionId"] == session
    )
    assert "turnId" not in announced and announced["seq"] == 1
    names = [c["name"] for c in announced["commands"]]
    assert names == sorted(c.name for c in BUILT_IN)
    compact = next(c for c in announced["commands"] if c["name"] == "compact")
    assert compact == {
        "name": "compact",
        "description": "Summarise the conversation so far to free context",
        "argumentHint": "[instructions for the summary]",
        "source": "builtin",
    }
    listed = await client.request("agent/listCommands", {"sessionId": session})
    assert listed["commands"] == announced["commands"]


async def test_a_new_command_file_is_announced_before_the_next_turn(
    client: AgentClient, tmp_path: Path
) -> None:
    script = [{"text": "one"}, {"text": "two"}, {"text": "three"}]
    session, _log = await client.scripted_session(tmp_path, script)
    await client.events.wait_for(lambda e: e["type"] == "available_commands")
    await client.run_turn(session, "hello")
    assert len(client.events.of_type("available_commands")) == 1
    command_file(tmp_path / "ws" / ".agentls" / "commands", "deploy", "Deploy $1 now.")
    turn, _done = await client.run_turn(session, "hello again")
    announcements = client.events.of_type("available_commands")
    assert len(announcements) == 2
    added = next(c for c in announcements[1]["commands"] if c["name"] == "deploy")
    assert added == {"name": "deploy", "description": "Deploy $1 now.", "source": "project"}
    started = next(e for e in client.events.of_turn(turn) if e["type"] == "turn_started")
    assert announcements[1]["seq"] < started["seq"]
    # Nothing changed since: no announcement.
    await client.run_turn(session, "and again")
    assert len(client.events.of_type("available_commands")) == 2
    listed = await client.request("agent/listCommands", {"sessionId": session})
    assert "deploy" in [c["name"] for c in listed["commands"]]


# --- built-in local commands ---------------------------------------------------------------


async def test_clear_empties_the_history_the_plan_and_what_resume_shows(
    client: AgentClient, tmp_path: Path
) -> None:
    todo = {"todos": [{"content": "Read the config", "status": "in_progress"}]}
    script = [
        {"tool_calls": [{"id": "t1", "name": "TodoWrite", "input": todo}]},
        {"text": "first answer"},
        {"text": "second answer"},
    ]
    session, log = await client.scripted_session(tmp_path, script)
    await client.run_turn(session, "first question")
    turn, done = await client.run_turn(session, "/clear")
    assert (done["stopReason"], done["turns"]) == ("end_turn", 0)
    kinds = [e["type"] for e in client.events.of_turn(turn)]
    # No turn_started (no message joins the history): the plan is emptied, then the output.
    assert kinds == ["plan", "command_output", "turn_completed"]
    assert client.events.of_turn(turn)[0]["entries"] == []
    await client.run_turn(session, "second question")
    requests = read_requests(log)
    assert len(requests) == 3
    assert user_texts(requests[2]) == ["second question"]
    assert "first answer" not in json.dumps(requests[2]["messages"])
    # The clear is in the transcript: a resume starts from it.
    await client.request("agent/closeSession", {"sessionId": session})
    script_path = write_script(tmp_path / "resume.jsonl", [{"text": "third"}])
    before = client.events.of_type("available_commands")
    resumed = await client.request(
        "agent/resumeSession", {"sessionId": session, "script": str(script_path)}
    )
    # The resumed session announces its commands again, as its first event.
    again = await client.events.wait_for(
        lambda e: e["type"] == "available_commands" and all(e is not b for b in before)
    )
    assert again["sessionId"] == session and again["seq"] == 1
    shown = [b.get("text") for m in resumed["messages"] for b in m["content"]]
    assert "second question" in shown and "second answer" in shown
    assert "first question" not in shown and "first answer" not in shown
    assert "plan" not in resumed


async def test_compact_summarises_with_the_given_instructions(
    client: AgentClient, tmp_path: Path
) -> None:
    script = [
        {"text": "one"},
        {"text": "two"},
        {"text": "<summary>We talked twice.</summary>"},
        {"text": "three"},
    ]
    session, log = await client.scripted_session(tmp_path, script)
    empty_output, failed = await run_command(client, session, "/compact")
    assert empty_output["isError"] is True and "Compaction failed" in empty_output["text"]
    assert failed["stopReason"] == "error" and failed["error"]["code"] == "command_failed"
    await client.run_turn(session, "first")
    await client.run_turn(session, "second")
    turn, done = await client.run_turn(session, "/compact keep the names")
    assert done["stopReason"] == "end_turn"
    events = client.events.of_turn(turn)
    assert [e["type"] for e in events] == ["compaction", "command_output", "turn_completed"]
    assert events[0]["trigger"] == "manual"
    assert events[1]["text"].startswith("The conversation was compacted")
    summary_request = read_requests(log)[2]
    assert "keep the names" in json.dumps(summary_request["messages"])
    await client.run_turn(session, "third")
    after = json.dumps(read_requests(log)[3]["messages"])
    assert "We talked twice." in after and "first" not in after


async def test_cost_reports_tokens_cost_and_turns(client: AgentClient, tmp_path: Path) -> None:
    settings = tmp_path / "ws" / ".agentls" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"prices": {"scripted": {"input": 3, "output": 15}}}))
    usage = {"input_tokens": 1000, "output_tokens": 100}
    script = [{"text": "a", "usage": usage}, {"text": "b", "usage": usage}]
    session, _log = await client.scripted_session(tmp_path, script)
    output, _done = await run_command(client, session, "/cost")
    assert "0 turns" in output["text"] and "$0.0000" in output["text"]
    await client.run_turn(session, "one")
    await client.run_turn(session, "two")
    output, done = await run_command(client, session, "/cost")
    text = output["text"]
    assert done["stopReason"] == "end_turn" and output["command"] == "cost"
    assert f"Session {session}: 2 turns on scripted" in text
    assert "2,000 in" in text and "200 out" in text
    # 2,000 input tokens at $3 and 200 output tokens at $15 per million.
    assert "Cost: $0.0090" in text
    assert "Context: about" in text


async def test_cost_without_a_price_says_so(client: AgentClient, tmp_path: Path) -> None:
    session, _log = await client.scripted_session(tmp_path, [{"text": "a"}])
    await client.run_turn(session, "one")
    output, _done = await run_command(client, session, "/cost")
    assert "1 turn on scripted" in output["text"]
    assert "Cost: unknown (no price for scripted" in output["text"]


async def test_model_shows_and_switches_the_model(client: AgentClient, tmp_path: Path) -> None:
    session, log = await client.scripted_session(tmp_path, [{"text": "a"}, {"text": "b"}])
    shown, _done = await run_command(client, session, "/model")
    assert shown["text"] == "The model is scripted (provider scripted)."
    await client.run_turn(session, "before")
    switched, _done = await run_command(client, session, "/model tiny-model")
    assert switched["text"] == (
        "The model is now tiny-model (provider scripted): the next turn uses it."
    )
    refused, failed = await run_command(client, session, "/model tiny-model nowhere")
    assert refused["isError"] is True and "provider must be one of" in refused["text"]
    assert failed["error"]["code"] == "command_failed"
    await client.run_turn(session, "after")
    assert [r["model"] for r in read_requests(log)] == ["scripted", "tiny-model"]
    shown, _done = await run_command(client, session, "/model")
    assert "tiny-model" in shown["text"]


async def test_mode_shows_and_sets_the_permission_mode(client: AgentClient, tmp_path: Path) -> None:
    script = [write_call("w1", "made.txt", "x"), {"text": "written"}]
    session, _log = await client.scripted_session(tmp_path, script)
    shown, _done = await run_command(client, session, "/mode")
    assert shown["text"].startswith("The permission mode is default (one of default, ")
    bad, failed = await run_command(client, session, "/mode sloppy")
    assert bad["isError"] is True and "Unknown permission mode 'sloppy'" in bad["text"]
    assert failed["error"]["code"] == "command_failed"
    set_to, _done = await run_command(client, session, "/mode acceptEdits")
    assert set_to["text"] == "The permission mode is now acceptEdits."
    turn, done = await client.run_turn(session, "write it")
    assert done["stopReason"] == "end_turn"
    assert not [e for e in client.events.of_turn(turn) if e["type"] == "permission_request"]
    assert (tmp_path / "ws" / "made.txt").read_text() == "x"


async def test_help_lists_every_command_with_its_hint(client: AgentClient, tmp_path: Path) -> None:
    folder = tmp_path / "ws" / ".agentls" / "commands"
    command_file(folder, "fix", "---\ndescription: Fix an issue\nargument-hint: <n>\n---\nFix $1")
    session, _log = await client.scripted_session(tmp_path, [])
    output, _done = await run_command(client, session, "/help")
    lines = output["text"].splitlines()
    assert lines[0] == "Commands:"
    assert (
        "/compact [instructions for the summary]: Summarise the conversation so far to "
        "free context" in lines
    )
    assert "/fix <n>: Fix an issue (project)" in lines
    assert len(lines) == 1 + len(BUILT_IN) + 1


async def test_a_command_steered_into_a_running_turn_waits_for_its_own(
    client: AgentClient, tmp_path: Path
) -> None:
    # About 3 s of text: the turn still runs when the steer comes, on any machine.
    script = [{"text": "a slow answer " + "." * 50, "chunk": 1, "delay": 0.05}]
    session, _log = await client.scripted_session(tmp_path, script)
    running = await client.request("agent/submitMessage", {"sessionId": session, "text": "go"})
    await client.events.wait_for(lambda e: e["type"] == "text_delta")
    steered = await client.request(
        "agent/submitMessage", {"sessionId": session, "text": "/help", "delivery": "steer"}
    )
    assert steered["queued"] is True and steered["turnId"] != running["turnId"]
    first = await client.events.turn_completed(running["turnId"])
    second = await client.events.turn_completed(steered["turnId"])
    assert first["stopReason"] == second["stopReason"] == "end_turn"
    output = next(
        e for e in client.events.of_turn(steered["turnId"]) if e["type"] == "command_output"
    )
    assert first["seq"] < output["seq"] < second["seq"]


# --- built-in prompt commands --------------------------------------------------------------


async def test_init_runs_a_turn_that_writes_agents_md(client: AgentClient, tmp_path: Path) -> None:
    script = [write_call("w1", "AGENTS.md", "# Agents\nRun the tests."), {"text": "Written."}]
    session, log = await client.scripted_session(tmp_path, script, permissionMode="acceptEdits")
    turn, done = await client.run_turn(session, "/init")
    assert done["stopReason"] == "end_turn" and done["turns"] == 2
    request = read_requests(log)[0]
    assert user_texts(request) == [INIT_PROMPT]
    assert "Write" in request["tools"]
    assert (tmp_path / "ws" / "AGENTS.md").read_text() == "# Agents\nRun the tests."
    # The history shows what was sent.
    user = next(
        e for e in client.events.of_turn(turn)
        if e["type"] == "message_completed" and e["role"] == "user"
    )  # fmt: skip
    assert user["content"][1]["text"] == INIT_PROMPT


async def test_review_sends_its_prompt_over_the_current_diff(
    client: AgentClient, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    for args in (["init", "-q"], ["config", "user.email", "t@e.st"], ["config", "user.name", "T"]):
        subprocess.run(["git", *args], cwd=workspace, check=True)
    (workspace / "app.py").write_text("x = 1\n")
    subprocess.run(["git", "add", "."], cwd=workspace, check=True)
    subprocess.run(["git", "commit", "-qm", "start"], cwd=workspace, check=True)
    (workspace / "app.py").write_text("x = 2\n")
    diff = {"id": "b1", "name": "Bash", "input": {"command": "git diff"}}
    script = [{"tool_calls": [diff]}, {"text": "x changed from 1 to 2; fine."}]
    session, log = await client.scripted_session(tmp_path, script)
    turn, done = await client.run_turn(session, "/review the value of x")
    assert done["stopReason"] == "end_turn"
    requests = read_requests(log)
    assert user_texts(requests[0]) == [f"{REVIEW_PROMPT}\n\nARGUMENTS: the value of x"]
    # git diff is read-only: it ran without asking, and the model read the change.
    assert not [e for e in client.events.of_turn(turn) if e["type"] == "permission_request"]
    assert "+x = 2" in json.dumps(requests[1]["messages"][-1])


# --- custom commands -----------------------------------------------------------------------


async def test_project_and_user_commands_expand_their_arguments(tmp_path: Path) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    project, user = workspace / ".agentls" / "commands", home / ".agentls" / "commands"
    command_file(user, "fix", "User fix $1.")
    command_file(user, "greet", "---\ndescription: Greets\n---\nSay hello to $ARGUMENTS.")
    command_file(
        project, "fix", "---\nargument-hint: <issue> <priority>\n---\nFix #$1 at $2: $ARGUMENTS"
    )
    command_file(project / "frontend", "component", "Make a $1 component.")
    script = [{"text": "fixed"}, {"text": "hello"}, {"text": "made"}]
    async with running_daemon(workspace, HOME=str(home)) as client:
        session, log = await client.scripted_session(tmp_path, script)
        announced = await client.events.wait_for(lambda e: e["type"] == "available_commands")
        by_name = {c["name"]: c for c in announced["commands"]}
        assert by_name["fix"]["source"] == "project"
        assert by_name["fix"]["argumentHint"] == "<issue> <priority>"
        assert by_name["greet"] == {"name": "greet", "description": "Greets", "source": "user"}
        assert by_name["frontend:component"]["source"] == "project"
        await client.run_turn(session, "/fix 42 high")
        await client.run_turn(session, "/greet the team")
        await client.run_turn(session, "/frontend:component Button")
    sent = [user_texts(r)[-1] for r in read_requests(log)]
    assert sent == [
        "Fix #42 at high: 42 high",
        "Say hello to the team.",
        "Make a Button component.",
    ]


async def test_allowed_tools_are_pre_approved_only_in_the_commands_turn(
    client: AgentClient, tmp_path: Path
) -> None:
    folder = tmp_path / "ws" / ".agentls" / "commands"
    command_file(folder, "make", "---\nallowed-tools: Write\n---\nCreate the file $1.")
    script = [
        write_call("w1", "a.txt", "a"),
        {"text": "made a"},
        write_call("w2", "b.txt", "b"),
        {"text": "could not make b"},
    ]
    session, _log = await client.scripted_session(tmp_path, script)
    command_turn, done = await client.run_turn(session, "/make a.txt")
    assert done["stopReason"] == "end_turn"
    assert not [e for e in client.events.of_turn(command_turn) if e["type"].startswith("perm")]
    assert (tmp_path / "ws" / "a.txt").read_text() == "a"
    # The next turn asks again for the same tool.
    result = await client.request(
        "agent/submitMessage", {"sessionId": session, "text": "now make b.txt"}
    )
    request = await client.events.wait_for(lambda e: e["type"] == "permission_request")
    assert request["turnId"] == result["turnId"]
    await client.request(
        "agent/respondPermission",
        {"sessionId": session, "requestId": request["requestId"], "optionId": "reject_once"},
    )
    await client.events.turn_completed(result["turnId"])
    assert not (tmp_path / "ws" / "b.txt").exists()
    rules = await client.request("agent/listPermissionRules", {"sessionId": session})
    assert rules["rules"] == []


async def test_a_commands_model_holds_for_its_turn_only(
    client: AgentClient, tmp_path: Path
) -> None:
    folder = tmp_path / "ws" / ".agentls" / "commands"
    command_file(folder, "quick", "---\nmodel: small-model\n---\nAnswer briefly: $ARGUMENTS")
    session, log = await client.scripted_session(tmp_path, [{"text": "a"}, {"text": "b"}])
    await client.run_turn(session, "/quick why?")
    await client.run_turn(session, "and now?")
    assert [r["model"] for r in read_requests(log)] == ["small-model", "scripted"]


def test_a_turn_gate_adds_allow_rules_below_the_sessions_deny_and_mode() -> None:
    session = PermissionGate(
        "default", [parse_rule("Write(./secret.txt)", "deny")], cwd="/w", home="/h"
    )
    remembered: list[Rule] = []
    session.on_remember = remembered.append
    turn = TurnGate(session, [parse_rule("Write", "allow")], cwd="/w")
    assert turn.decide("Write", "edit", False, "/w/a.txt").behavior == "allow"
    assert turn.decide("Write", "edit", False, "/w/secret.txt").behavior == "deny"
    assert turn.decide("Bash", "execute", False, "make").behavior == "ask"
    # The session's mode is read at each decision: plan mode refuses even pre-approved tools.
    session.mode = "plan"
    assert turn.decide("Write", "edit", False, "/w/a.txt").behavior == "deny"
    # An "always" answer in the turn is the session's; the turn's rules never are.
    always = parse_rule("Bash(make:*)", "allow")
    turn.remember(always)
    assert session.rules[-1] == always and remembered == [always]
    assert all(rule.behavior != "allow" or rule.tool != "Write" for rule in session.rules)


async def test_a_project_command_may_replace_review_but_not_clear(
    client: AgentClient, tmp_path: Path
) -> None:
    folder = tmp_path / "ws" / ".agentls" / "commands"
    command_file(folder, "review", "Review only the tests.")
    command_file(folder, "clear", "This never runs.")
    session, log = await client.scripted_session(tmp_path, [{"text": "reviewed"}])
    await client.run_turn(session, "/review")
    output, _done = await run_command(client, session, "/clear")
    assert output["text"].startswith("The conversation was cleared")
    assert [user_texts(r) for r in read_requests(log)] == [["Review only the tests."]]


# --- what is not a command -----------------------------------------------------------------


async def test_an_unknown_command_is_refused_and_paths_reach_the_model(
    client: AgentClient, tmp_path: Path
) -> None:
    script = [{"text": "a"}, {"text": "b"}]
    session, log = await client.scripted_session(tmp_path, script)
    with pytest.raises(JsonRpcException) as refused:
        await client.request("agent/submitMessage", {"sessionId": session, "text": "/nope x"})
    assert refused.value.code == -32602
    assert "Unknown command /nope" in refused.value.message
    assert not client.events.of_type("turn_started")
    # A path, with a second slash or one that exists, is a message for the model.
    await client.run_turn(session, "/usr/bin is slow")
    await client.run_turn(session, "/tmp is full")
    assert [user_texts(r)[-1] for r in read_requests(log)] == ["/usr/bin is slow", "/tmp is full"]


# --- the command line ----------------------------------------------------------------------


def test_agentls_run_prints_a_commands_output(tmp_path: Path) -> None:
    script = write_script(tmp_path / "script.jsonl", [{"text": "hi", "usage": {}}])
    first = agentls("run", "--json", "hello", cwd=tmp_path, AGENTLS_SCRIPT=str(script))
    assert first.returncode == 0, first.stderr
    session = json.loads(first.stdout.splitlines()[0])["sessionId"]
    # Through the warm daemon, and in this process: the output alone, exit 0.
    for extra in ((), ("--no-daemon",)):
        done = agentls(
            "run", *extra, "--resume", session, "/cost", cwd=tmp_path, AGENTLS_SCRIPT=str(script)
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"Session {session}: 1 turn on scripted\n")
        assert "[end_turn" not in done.stdout
    helped = agentls("run", "--no-daemon", "/help", cwd=tmp_path, AGENTLS_SCRIPT=str(script))
    assert "/clear: Start the conversation afresh" in helped.stdout
    for extra in ((), ("--no-daemon",)):
        refused = agentls("run", *extra, "/nope", cwd=tmp_path, AGENTLS_SCRIPT=str(script))
        assert refused.returncode == 2
        assert "Unknown command /nope" in refused.stderr
