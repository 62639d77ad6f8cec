"""Agent Skills: found in four places, listed by the Skill tool (names and descriptions,
never bodies), loaded by a call or by `/<name>`, narrowing the turn to their tools, a
malformed one told once, and a byte-stable first request."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from agent_client import AgentClient, read_requests, running_daemon
from agentls.permissions.gate import PermissionGate
from agentls.permissions.rules import parse_rule
from agentls.permissions.scoped import ActiveSkill, TurnGate
from agentls.skills.found import SkillPlace, find_skills, read_skill, skill_places, tool_list
from replay_server import ReplayServer, anthropic_text_turn
from test_cli import agentls
from test_slash_commands import user_texts, write_call


def skill_file(root: Path, name: str, description: str, body: str, extra: str = "") -> Path:
    """`root/<name>/SKILL.md` with front matter `name`, `description` and `extra` lines."""
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    head = f"---\nname: {name}\ndescription: {description}\n{extra}---\n"
    (folder / "SKILL.md").write_text(head + body, encoding="utf-8")
    return folder


def skill_call(call_id: str, name: str) -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": "Skill", "input": {"skill": name}}]}


def bash_call(call_id: str, command: str) -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": "Bash", "input": {"command": command}}]}


def tool_results(request: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The tool results a model request carries, by call id."""
    return {
        block["tool_use_id"]: block
        for message in request["messages"]
        for block in message["content"]
        if block["type"] == "tool_result"
    }


def updates(client: AgentClient, turn: str, call_id: str) -> list[str]:
    return [
        e["status"]
        for e in client.events.of_turn(turn)
        if e["type"] == "tool_call_update" and e["toolCallId"] == call_id
    ]


def homes(tmp_path: Path) -> dict[str, str]:
    """A private HOME and AGENTLS_HOME, so no skill of the machine's user is found."""
    home, agentls_home = tmp_path / "home", tmp_path / "agentls-home"
    home.mkdir(exist_ok=True)
    agentls_home.mkdir(exist_ok=True)
    return {"HOME": str(home), "AGENTLS_HOME": str(agentls_home)}


# --- reading SKILL.md and finding skills ---------------------------------------------------


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("---\ndescription: d\n---\nBody", "no name"),
        ("---\nname: s\n---\nBody", "no description"),
        ("Just a body", "no front matter"),
        ("---\nname: s\ndescription: d\nBody without an end", "not closed"),
        ("---\nname: other\ndescription: d\n---\nBody", "not its folder's"),
        ("---\nname: S_1\ndescription: d\n---\nBody", "lowercase letters"),
        ("---\nname: s\ndescription: " + "d" * 1025 + "\n---\nBody", "over 1,024"),
        ("---\nname: s\ndescription: d\n---\n\n", "body"),
        ("---\nname: s\ndescription: >\n  two\n  lines\n---\nBody", "on one line"),
        ("---\nname: s\ndescription: d\nallowed-tools: Bash(\n---\nBody", "allowed-tools"),
        ("---\nname: s\ndescription: d\nallowed-tools:\n  - Read\n---\nBody", "one line"),
    ],
)
def test_a_malformed_skill_file_says_what_is_wrong(tmp_path: Path, text: str, why: str) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "SKILL.md").write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=why):
        read_skill(tmp_path / "s", "project")


def test_allowed_tools_take_commas_or_spaces() -> None:
    assert tool_list("Read, Grep") == ("Read", "Grep")
    assert tool_list("Bash(git diff:*) Read  Bash(npm run x -- a,b)") == (
        "Bash(git diff:*)",
        "Read",
        "Bash(npm run x -- a,b)",
    )
    assert tool_list("[Read, 'Write']") == ("Read", "Write")
    assert tool_list("") == ()


def test_a_name_over_64_characters_is_refused(tmp_path: Path) -> None:
    name = "a" * 65
    skill_file(tmp_path, name, "d", "Body")
    with pytest.raises(ValueError, match="over 64"):
        read_skill(tmp_path / name, "user")


def test_the_project_wins_a_name_and_problems_are_logged_and_told_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    project, agentls_home, home = tmp_path / "p", tmp_path / "ah", tmp_path / "h"
    skill_file(project / ".claude" / "skills", "same", "the project's", "P")
    skill_file(home / ".claude" / "skills", "same", "the user's", "U")
    skill_file(agentls_home / "skills", "zeta", "last by name", "Z", "allowed-tools: Read\n")
    (project / ".agentls" / "skills" / "broken").mkdir(parents=True)
    (project / ".agentls" / "skills" / "broken" / "SKILL.md").write_text("no front matter")
    (project / ".agentls" / "skills" / "not-a-skill").mkdir()
    with caplog.at_level(logging.WARNING):
        found = find_skills(skill_places(project, agentls_home, home))
    assert found.names() == ["same", "zeta"]
    same = found.find("same")
    assert same is not None and (same.description, same.scope) == ("the project's", "project")
    zeta = found.find("zeta")
    assert zeta is not None and zeta.allowed == (parse_rule("Read", "allow"),)
    assert (
        len(found.problems) == 1
        and "broken/SKILL.md ignored: no front matter" in (found.problems[0])
    )
    assert found.problems[0] in caplog.text
    assert found.untold_problems() == found.problems and found.untold_problems() == []
    assert find_skills([SkillPlace(tmp_path / "nowhere", "user")]).skills == ()
    # A project at the home directory: its .claude/skills is read (and told) once.
    (project / ".claude" / "skills" / "worse").mkdir()
    (project / ".claude" / "skills" / "worse" / "SKILL.md").write_text("no front matter")
    at_home = find_skills(skill_places(project, agentls_home, project))
    assert at_home.find("same") is not None and len(at_home.problems) == 2


def test_an_active_skill_narrows_the_turn_to_its_tools() -> None:
    session = PermissionGate("default", [parse_rule("Bash(rm:*)", "deny")], cwd="/w", home="/h")
    active = ActiveSkill()
    gate = TurnGate(session, [], cwd="/w", skill=active)
    assert gate.decide("Bash", "execute", False, "make").behavior == "ask"
    active.start("builder", [parse_rule("Bash(make:*)", "allow"), parse_rule("Read", "allow")])
    assert gate.decide("Bash", "execute", False, "make all").behavior == "allow"
    assert gate.decide("Read", "read", True, "a.txt").behavior == "allow"
    refused = gate.decide("Write", "edit", False, "a.txt")
    assert refused.behavior == "deny" and "skill builder is active" in refused.reason
    # Read rules cover the read tools (Grep, Glob), as in any rule; nothing else.
    assert gate.decide("Grep", "search", True, None).behavior == "allow"
    assert gate.decide("WebFetch", "fetch", True, "https://x.org").behavior == "deny"
    # Another skill can always start; a deny rule still wins over the skill's rules.
    assert gate.decide("Skill", "read", True, "other").behavior == "allow"
    active.start("cleaner", [parse_rule("Bash", "allow")])
    assert gate.decide("Bash", "execute", False, "rm -rf x").behavior == "deny"
    # Plan mode refuses a change even when the skill allows it.
    session.mode = "plan"
    assert gate.decide("Bash", "execute", False, "touch x").behavior == "deny"
    session.mode = "default"
    active.end()
    assert gate.decide("Write", "edit", False, "a.txt").behavior == "ask"


# --- through the daemon --------------------------------------------------------------------


def four_places(tmp_path: Path) -> Path:
    """A workspace with a skill in each of the four places (and bodies the model must not
    see before it asks); returns the workspace."""
    workspace, env = tmp_path / "ws", homes(tmp_path)
    skill_file(workspace / ".agentls" / "skills", "alpha", "Alpha work", "ALPHA-BODY steps")
    skill_file(workspace / ".claude" / "skills", "bravo", "Bravo work", "BRAVO-BODY steps")
    skill_file(Path(env["AGENTLS_HOME"]) / "skills", "charlie", "Charlie work", "CHARLIE-BODY")
    delta = skill_file(Path(env["HOME"]) / ".claude" / "skills", "delta", "Delta work", "DELTA")
    (delta / "reference.md").write_text("Delta's reference.\n")
    return workspace


async def test_skills_in_all_four_places_are_listed_and_loaded(tmp_path: Path) -> None:
    workspace = four_places(tmp_path)
    script = [skill_call("s1", "delta"), skill_call("s2", "nope"), {"text": "done"}]
    async with running_daemon(workspace, **homes(tmp_path)) as client:
        session, log = await client.scripted_session(tmp_path, script)
        announced = await client.events.wait_for(lambda e: e["type"] == "available_commands")
        skills = [c for c in announced["commands"] if c["source"] == "skill"]
        assert [(c["name"], c["description"]) for c in skills] == [
            ("alpha", "Alpha work"),
            ("bravo", "Bravo work"),
            ("charlie", "Charlie work"),
            ("delta", "Delta work"),
        ]
        turn, done = await client.run_turn(session, "do the delta thing")
        assert done["stopReason"] == "end_turn"
        # Reading a skill asks nobody.
        assert not [e for e in client.events.of_turn(turn) if e["type"] == "permission_request"]
        assert updates(client, turn, "s1") == ["in_progress", "completed"]
    requests = read_requests(log)
    assert "Skill" in requests[0]["tools"]
    assert "DELTA" not in json.dumps(requests[0])
    loaded = tool_results(requests[1])["s1"]
    folder = tmp_path / "home" / ".claude" / "skills" / "delta"
    assert not loaded["is_error"] and f'folder="{folder.resolve()}"' in loaded["content"]
    assert loaded["content"].endswith("\nDELTA\n</skill>")
    unknown = tool_results(requests[2])["s2"]
    assert (
        unknown["is_error"]
        and "The skills are: alpha, bravo, charlie, delta." in (unknown["content"])
    )


async def test_no_skills_no_skill_tool(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    async with running_daemon(tmp_path / "ws", **homes(tmp_path)) as client:
        session, log = await client.scripted_session(tmp_path, [{"text": "hi"}])
        await client.run_turn(session, "hello")
    assert "Skill" not in read_requests(log)[0]["tools"]


async def test_the_first_request_is_byte_identical_across_sessions(tmp_path: Path) -> None:
    workspace = four_places(tmp_path)
    env = homes(tmp_path)
    with ReplayServer() as replay:
        replay.enqueue(anthropic_text_turn("one"), anthropic_text_turn("two"))
        async with running_daemon(
            workspace,
            AGENTLS_PROVIDER="anthropic",
            ANTHROPIC_API_KEY="test",
            ANTHROPIC_BASE_URL=replay.base_url,
            **env,
        ) as client:
            for _ in range(2):
                session = await client.new_session(workspace)
                _turn, done = await client.run_turn(session["sessionId"], "hello")
                assert done["stopReason"] == "end_turn"
        first, second = (r.body for r in replay.requests)
    assert json.dumps(first["system"]) == json.dumps(second["system"])
    assert json.dumps(first["tools"]) == json.dumps(second["tools"])
    skill = next(t for t in first["tools"] if t["name"] == "Skill")
    listed = skill["description"].split("Skills:\n", 1)[1]
    assert listed.splitlines() == [
        "- alpha: Alpha work",
        "- bravo: Bravo work",
        "- charlie: Charlie work",
        "- delta: Delta work",
    ]
    assert "BODY" not in json.dumps(first)


async def test_allowed_tools_narrow_the_rest_of_the_turn(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    skill_file(
        workspace / ".agentls" / "skills",
        "scribe",
        "Writes files",
        "Write it.",
        "allowed-tools: Write\n",
    )
    script = [
        bash_call("b0", "echo before"),
        skill_call("s1", "scribe"),
        write_call("w1", "a.txt", "a"),
        bash_call("b1", "echo after"),
        {"text": "wrote a"},
        write_call("w2", "b.txt", "b"),
        {"text": "asked for b"},
    ]
    async with running_daemon(workspace, **homes(tmp_path)) as client:
        session, log = await client.scripted_session(tmp_path, script)
        turn, done = await client.run_turn(session, "write a")
        assert done["stopReason"] == "end_turn"
        events = client.events.of_turn(turn)
        # Before the skill, echo is read-only and runs; within it, Write runs unasked and
        # Bash is refused.
        assert not [e for e in events if e["type"] == "permission_request"]
        assert updates(client, turn, "b0")[-1] == "completed"
        assert updates(client, turn, "w1")[-1] == "completed"
        assert updates(client, turn, "b1") == ["declined"]
        assert (workspace / "a.txt").read_text() == "a"
        # The skill ended with its turn: the next Write asks.
        result = await client.request(
            "agent/submitMessage", {"sessionId": session, "text": "write b"}
        )
        await client.answer_permission(session, "reject_once")
        await client.events.turn_completed(result["turnId"])
    refused = tool_results(read_requests(log)[4])["b1"]
    assert refused["is_error"] and "the skill scribe is active" in refused["content"]
    assert "Write" in refused["content"]
    assert not (workspace / "b.txt").exists()


async def test_a_skill_runs_as_a_slash_command_in_its_skill(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    skills = workspace / ".agentls" / "skills"
    skill_file(skills, "scribe", "Writes files", "Write $ARGUMENTS.", "allowed-tools: Write\n")
    skill_file(skills, "shadowed", "Loses to the command", "Never sent.")
    (workspace / ".agentls" / "commands").mkdir(parents=True)
    (workspace / ".agentls" / "commands" / "shadowed.md").write_text("The command's prompt.")
    script = [
        write_call("w1", "a.txt", "a"),
        bash_call("b1", "echo no"),
        {"text": "done"},
        {"text": "command ran"},
    ]
    async with running_daemon(workspace, **homes(tmp_path)) as client:
        session, log = await client.scripted_session(tmp_path, script)
        announced = await client.events.wait_for(lambda e: e["type"] == "available_commands")
        by_name = {c["name"]: c for c in announced["commands"]}
        assert by_name["scribe"] == {
            "name": "scribe",
            "description": "Writes files",
            "argumentHint": "[arguments]",
            "source": "skill",
        }
        assert by_name["shadowed"]["source"] == "project"
        turn, done = await client.run_turn(session, "/scribe a.txt")
        assert done["stopReason"] == "end_turn"
        assert not [e for e in client.events.of_turn(turn) if e["type"] == "permission_request"]
        assert updates(client, turn, "b1") == ["declined"]
        await client.run_turn(session, "/shadowed")
    requests = read_requests(log)
    sent = user_texts(requests[0])[-1]
    assert sent.startswith('<skill name="scribe" folder="') and "Write a.txt." in sent
    assert user_texts(requests[3])[-1] == "The command's prompt."
    assert (workspace / "a.txt").read_text() == "a"


async def test_a_malformed_skill_is_told_once_and_the_others_work(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    skills = workspace / ".agentls" / "skills"
    skill_file(skills, "good", "Works", "GOOD-BODY")
    (skills / "bad").mkdir()
    (skills / "bad" / "SKILL.md").write_text("---\nname: bad\n---\nNo description.\n")
    script = [skill_call("s1", "good"), {"text": "one"}, {"text": "two"}]
    async with running_daemon(workspace, **homes(tmp_path)) as client:
        session, log = await client.scripted_session(tmp_path, script)
        first, _done = await client.run_turn(session, "first")
        second, _done = await client.run_turn(session, "second")
        notices = client.events.of_type("notice")
    assert len(notices) == 1 and notices[0]["turnId"] == first
    assert notices[0]["level"] == "warning"
    assert "bad/SKILL.md ignored: no description" in notices[0]["message"]
    kinds = [e["type"] for e in client.events.of_turn(first)]
    assert kinds.index("notice") > kinds.index("message_completed")
    assert "GOOD-BODY" in tool_results(read_requests(log)[1])["s1"]["content"]
    assert not [e for e in client.events.of_turn(second) if e["type"] == "notice"]


def test_agentls_run_starts_a_skill_by_its_command(tmp_path: Path) -> None:
    skill_file(tmp_path / ".agentls" / "skills", "haiku", "Writes a haiku", "Write a haiku on $1.")
    script = tmp_path / "script.jsonl"
    log = tmp_path / "requests.jsonl"
    env = {**homes(tmp_path), "AGENTLS_SCRIPT": str(script), "AGENTLS_REQUEST_LOG": str(log)}
    for extra in ((), ("--no-daemon",)):
        script.write_text(json.dumps({"text": "Old pond, a frog", "usage": {}}) + "\n")
        done = agentls("run", *extra, "/haiku frogs", cwd=tmp_path, **env)
        assert done.returncode == 0, done.stderr
        assert "Old pond, a frog" in done.stdout
    sent = [user_texts(request)[-1] for request in read_requests(log)]
    assert len(sent) == 2 and all("Write a haiku on frogs." in text for text in sent)
