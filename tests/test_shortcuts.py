"""The message shortcuts through the real daemon: `!command` runs a shell command in a
local turn (no model call) and the next message tells the model."""

from __future__ import annotations

import re
from pathlib import Path

from agent_client import AgentClient, read_requests, running_daemon


def _user_context(request: dict[str, object]) -> str:
    messages = request["messages"]
    assert isinstance(messages, list)
    return "".join(block.get("text", "") for block in messages[-1]["content"])


async def test_a_bang_command_runs_through_the_gate_without_the_model_and_the_next_message_tells_it(
    client: AgentClient, tmp_path: Path
) -> None:
    sid, log = await client.scripted_session(tmp_path, [{"text": "I see the file."}])
    submitted = await client.request(
        "agent/submitMessage", {"sessionId": sid, "text": "!echo made > made.txt && echo done"}
    )
    request = await client.answer_permission(sid, "allow_once")
    done = await client.events.turn_completed(submitted["turnId"])
    assert done["stopReason"] == "end_turn" and done["turns"] == 0
    assert request["input"] == {"command": "echo made > made.txt && echo done"}
    events = client.events.of_turn(submitted["turnId"])
    call = next(e for e in events if e["type"] == "tool_call")
    assert call["name"] == "Bash" and call["kind"] == "execute"
    finished = [e for e in events if e["type"] == "tool_call_update" and e["status"] == "completed"]
    assert finished and "done" in finished[0]["content"]
    output = next(e for e in events if e["type"] == "command_output")
    assert output["command"] == "!" and "done" in output["text"]
    assert (tmp_path / "ws" / "made.txt").read_text() == "made\n"
    assert read_requests(log) == []
    await client.run_turn(sid, "what did I do?")
    context = _user_context(read_requests(log)[0])
    assert "<userAction>The user ran a shell command themselves: echo made" in context
    assert "done" in context


async def test_a_bang_command_is_refused_in_plan_mode_like_bash(
    client: AgentClient, tmp_path: Path
) -> None:
    sid, _log = await client.scripted_session(tmp_path, [], permissionMode="plan")
    turn_id, done = await client.run_turn(sid, "!touch nope.txt")
    assert done["stopReason"] == "end_turn"
    declined = [
        e
        for e in client.events.of_turn(turn_id)
        if e["type"] == "tool_call_update" and e["status"] == "declined"
    ]
    assert "plan mode" in declined[0]["content"]
    assert not (tmp_path / "ws" / "nope.txt").exists()


async def test_a_note_goes_to_the_project_memory_file_and_the_next_message_tells_the_model(
    tmp_path: Path,
) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    workspace.mkdir()
    (workspace / "CLAUDE.md").write_text("# Project\nUse tabs.", encoding="utf-8")
    async with running_daemon(workspace, AGENTLS_HOME=str(home)) as client:
        sid, log = await client.scripted_session(tmp_path, [{"text": "Noted."}])
        turn_id, done = await client.run_turn(sid, "# Run the tests with -x")
        assert done["stopReason"] == "end_turn" and done["turns"] == 0
        output = next(e for e in client.events.of_turn(turn_id) if e["type"] == "command_output")
        assert output["command"] == "#" and "CLAUDE.md" in output["text"]
        # A markdown heading over several lines, or `#123`, is an ordinary message.
        await client.run_turn(sid, "#123 fails on CI")
        context = _user_context(read_requests(log)[0])
    # Only CLAUDE.md exists: the note goes there, on a line of its own.
    assert (
        workspace / "CLAUDE.md"
    ).read_text() == "# Project\nUse tabs.\n- Run the tests with -x\n"
    assert not (workspace / "AGENTS.md").exists()
    assert "added to the memory file" in context and "Run the tests with -x" in context
    assert "#123 fails on CI" in context


async def test_with_a_user_memory_file_too_the_user_is_asked_which_file(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    workspace.mkdir()
    (home / "AGENTS.md").write_text("Be brief.\n", encoding="utf-8")
    (workspace / "AGENTS.md").write_text("Project rules.\n", encoding="utf-8")
    async with running_daemon(workspace, AGENTLS_HOME=str(home)) as client:
        sid, _log = await client.scripted_session(tmp_path, [])
        submitted = await client.request(
            "agent/submitMessage", {"sessionId": sid, "text": "# Answer in French"}
        )
        question = await client.events.wait_for(lambda e: e["type"] == "ask_user")
        assert question["choices"][1] == f"user: {home / 'AGENTS.md'}"
        await client.request(
            "agent/respondAskUser",
            {"sessionId": sid, "requestId": question["requestId"], "answer": "user"},
        )
        await client.events.turn_completed(submitted["turnId"])
        resolved = client.events.of_type("ask_user_resolved")
        assert resolved[0]["outcome"] == "answered"
    assert (home / "AGENTS.md").read_text() == "Be brief.\n- Answer in French\n"
    assert (workspace / "AGENTS.md").read_text() == "Project rules.\n"


async def test_with_no_memory_file_agents_md_is_created(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    workspace.mkdir()
    async with running_daemon(workspace, AGENTLS_HOME=str(home)) as client:
        sid, _log = await client.scripted_session(tmp_path, [])
        await client.run_turn(sid, "# Keep answers short")
    assert (workspace / "AGENTS.md").read_text() == "- Keep answers short\n"


ROW = re.compile(r"^  (.+?)\s+([\d,]+) tokens\s+([\d.]+%)(?:  \((.*)\))?$")
SKILL = "---\nname: notes\ndescription: Writes release notes.\n---\nRead the git log.\n"


async def test_context_shows_each_part_of_the_window_in_tokens_and_percent(
    tmp_path: Path,
) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    (workspace / ".agentls" / "skills" / "notes").mkdir(parents=True)
    (workspace / ".agentls" / "skills" / "notes" / "SKILL.md").write_text(SKILL)
    home.mkdir()
    (workspace / "AGENTS.md").write_text("Use tabs. " * 200, encoding="utf-8")
    async with running_daemon(workspace, AGENTLS_HOME=str(home)) as client:
        sid, _log = await client.scripted_session(tmp_path, [{"text": "Hello there."}])
        await client.run_turn(sid, "hi")
        turn_id, done = await client.run_turn(sid, "/context")
        assert done["stopReason"] == "end_turn"
        output = next(e for e in client.events.of_turn(turn_id) if e["type"] == "command_output")
    lines = output["text"].splitlines()
    rows = {m[1]: m for m in (ROW.match(line) for line in lines[1:]) if m is not None}
    tokens = {name: int(m[2].replace(",", "")) for name, m in rows.items()}
    assert list(rows) == [
        "System prompt",
        "Tools",
        "MCP tools",
        "Memory files",
        "Skills",
        "Messages",
        "Free space",
    ]
    assert rows["Memory files"][4] == "1 file" and tokens["Memory files"] >= 500
    assert rows["Skills"][4] == "1 skill" and tokens["Skills"] > 0
    assert rows["Messages"][4] == "2 messages" and tokens["Messages"] > 0
    assert tokens["MCP tools"] == 0 and tokens["Tools"] > tokens["Skills"]
    used = sum(v for k, v in tokens.items() if k != "Free space")
    window = int(lines[0].split(" of ")[2].split()[0].replace(",", ""))
    assert used + tokens["Free space"] == window
    assert f"about {used:,} of {window:,} tokens" in lines[0]
