"""Replaying recorded sessions: `agentls replay` and the `replay_transcript` helper run a
transcript again offline and say whether the tools still give what was recorded."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types as lsp

from agent_client import AgentClient, capabilities, daemon_config, write_script
from agentls.replay import read_recording, replay_transcript
from agentls.session.store import transcript_path

APP = "port = 8000\n"
EDIT = {"file_path": "app.py", "old_string": "8000", "new_string": "9000"}
TASK = [
    {"tool_calls": [{"id": "r1", "name": "Read", "input": {"file_path": "app.py"}}]},
    {"text": "Changing it.", "tool_calls": [{"id": "e1", "name": "Edit", "input": EDIT}]},
    {"text": "The port is now 9000."},
]


def project(root: Path) -> Path:
    root.mkdir()
    (root / "app.py").write_text(APP, encoding="utf-8")
    return root


def environment(home: Path, script: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    return {**env, "AGENTLS_HOME": str(home), "AGENTLS_SCRIPT": str(script)}


def agentls(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentls", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def shape(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What happened, without ids and timings: event types, tool calls and their ends."""
    return [
        (e["type"], e.get("name"), e.get("toolCallId"), e.get("status"), e.get("stopReason"))
        for e in events
        if e["type"] not in ("text_delta", "usage", "message_completed")
    ]


def test_agentls_replay_reproduces_a_recorded_run(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = environment(home, write_script(tmp_path / "task.jsonl", TASK))
    original = project(tmp_path / "original")
    ran = agentls(
        "run",
        "--no-daemon",
        "--json",
        "--permission-mode",
        "acceptEdits",
        "bump the port",
        cwd=original,
        env=env,
    )
    assert ran.returncode == 0, ran.stderr
    recorded = [json.loads(line) for line in ran.stdout.splitlines()]
    session = recorded[0]["sessionId"]

    again = project(tmp_path / "again")
    replayed = agentls("replay", session[:12], "--cwd", str(again), "--json", cwd=tmp_path, env=env)
    assert replayed.returncode == 0, replayed.stderr
    assert "all 2 tool results match the recording" in replayed.stderr
    events = [json.loads(line) for line in replayed.stdout.splitlines()]
    assert shape(events) == shape(recorded)
    assert (again / "app.py").read_text(encoding="utf-8") == "port = 9000\n"

    # The same transcript against a file that changed since: the difference is reported.
    moved = tmp_path / "moved"
    moved.mkdir()
    (moved / "app.py").write_text("port = 7000\n", encoding="utf-8")
    differs = agentls("replay", session, "--cwd", str(moved), "--as-is", cwd=tmp_path, env=env)
    assert differs.returncode == 1
    assert "e1 differs." in differs.stderr and "2 of 2 tool results differ" in differs.stderr


NOTES = {"file_path": "notes.txt", "content": "moved to 9000\n"}
CREATES = [*TASK[:2], {"tool_calls": [{"id": "w1", "name": "Write", "input": NOTES}]}, TASK[2]]


def test_by_default_a_replay_runs_in_a_scratch_copy_of_the_files_as_they_began(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    env = environment(home, write_script(tmp_path / "task.jsonl", CREATES))
    original = project(tmp_path / "original")
    ran = agentls(
        "run", "--no-daemon", "--permission-mode", "acceptEdits", "bump", cwd=original, env=env
    )
    assert ran.returncode == 0, ran.stderr
    session = ran.stderr.split("session ")[1].split()[0]
    assert (original / "app.py").read_text(encoding="utf-8") == "port = 9000\n"
    # The project as the session left it: the edit and the new file are put back as they
    # were when it began, in the copy, so the replay runs clean.
    replayed = agentls("replay", session, cwd=tmp_path, env=env)
    assert replayed.returncode == 0, replayed.stderr
    assert "replaying" in replayed.stderr and "agentls-replay-" in replayed.stderr
    assert "all 3 tool results match the recording" in replayed.stderr
    assert "2 files the session changed set back as they were" in replayed.stderr
    assert (original / "app.py").read_text(encoding="utf-8") == "port = 9000\n"  # untouched
    assert (original / "notes.txt").read_text(encoding="utf-8") == NOTES["content"]

    # In the session's own directory the user's files are never set back.
    here = agentls("replay", session, "--cwd", str(original), cwd=tmp_path, env=env)
    assert here.returncode == 1
    assert "its files are replayed as they are" in here.stderr and "set back" not in here.stderr
    assert (original / "app.py").read_text(encoding="utf-8") == "port = 9000\n"

    script = tmp_path / "bug.jsonl"
    written = agentls("replay", session, "--script", str(script), cwd=tmp_path, env=env)
    assert written.returncode == 0
    entries = [json.loads(line) for line in script.read_text(encoding="utf-8").splitlines()]
    assert [e.get("tool_calls", [{}])[0].get("id") for e in entries] == ["r1", "e1", "w1", None]


def test_an_unknown_session_is_a_usage_error(tmp_path: Path) -> None:
    env = environment(tmp_path / "home", tmp_path / "none.jsonl")
    done = agentls("replay", "sess_nothing", cwd=tmp_path, env=env)
    assert done.returncode == 2 and "no session" in done.stderr


# --- the helper, on a session recorded over stdio with a refusal and an answer ------------------


@pytest_lsp.fixture(config=daemon_config())
async def client(lsp_client: AgentClient, tmp_path: Path):
    workspace = project(tmp_path / "ws")
    params = lsp.InitializeParams(capabilities=capabilities(True), root_uri=workspace.as_uri())
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


async def test_replay_transcript_answers_as_the_user_did(
    client: AgentClient, tmp_path: Path
) -> None:
    question = {"question": "Which port?", "choices": ["8080", "9000"]}
    script = [
        {"tool_calls": [{"id": "q1", "name": "AskUser", "input": question}]},
        {"tool_calls": [{"id": "r1", "name": "Read", "input": {"file_path": "app.py"}}]},
        {"tool_calls": [{"id": "e1", "name": "Edit", "input": EDIT}]},
        {"text": "You said no."},
    ]
    result = await client.new_session(
        tmp_path / "ws", provider="scripted", script=str(write_script(tmp_path / "s.jsonl", script))
    )
    session = result["sessionId"]

    async def answer() -> None:
        asked = await client.events.wait_for(lambda e: e["type"] == "ask_user")
        await client.request(
            "agent/respondAskUser",
            {"sessionId": session, "requestId": asked["requestId"], "answer": "9000"},
        )
        request = await client.events.wait_for(lambda e: e["type"] == "permission_request")
        await client.request(
            "agent/respondPermission",
            {"sessionId": session, "requestId": request["requestId"], "optionId": "reject_once"},
        )

    answering = asyncio.create_task(answer())
    _turn, done = await client.run_turn(session, "change the port")
    await answering
    assert done["stopReason"] == "end_turn"
    recorded = client.events.of_type("tool_call_update")

    # The daemon keeps transcripts under the tests' AGENTLS_HOME (tests/conftest.py).
    path = transcript_path(Path(os.environ["AGENTLS_HOME"]), session)
    again = project(tmp_path / "again")
    replayed = await replay_transcript(path, again)
    assert replayed.stop_reasons == ["end_turn"] and not replayed.mismatches
    ends = [
        (e["toolCallId"], e["status"]) for e in replayed.events if e["type"] == "tool_call_update"
    ]
    assert ends == [(e["toolCallId"], e["status"]) for e in recorded]
    assert ("e1", "declined") in ends
    assert (again / "app.py").read_text(encoding="utf-8") == APP
    assert read_recording(path).prompts == ["change the port"]


async def test_replay_answers_a_plan_as_the_user_did(client: AgentClient, tmp_path: Path) -> None:
    # A plan request takes only the plan's own options: "allow_once" would be refused.
    plan = {"plan": "1. Change the port to 9000."}
    script = [
        {"tool_calls": [{"id": "p1", "name": "ExitPlanMode", "input": plan}]},
        {"tool_calls": [{"id": "p2", "name": "ExitPlanMode", "input": plan}]},
        {"text": "Planned."},
    ]
    result = await client.new_session(
        tmp_path / "ws",
        provider="scripted",
        permissionMode="plan",
        script=str(write_script(tmp_path / "s.jsonl", script)),
    )
    session = result["sessionId"]

    async def answer() -> None:
        answers = [("plan_keep_planning", "Say which file."), ("plan_approve", None)]
        for index, (option, message) in enumerate(answers):
            # Counted from the start: the second request may arrive before the first
            # answer's response does.
            await client.events.wait_for(
                lambda _e, n=index: len(client.events.of_type("permission_request")) > n, 60
            )
            request = client.events.of_type("permission_request")[index]
            params = {"sessionId": session, "requestId": request["requestId"], "optionId": option}
            await client.request("agent/respondPermission", {**params, "message": message})

    answering = asyncio.create_task(answer())
    submitted = {"sessionId": session, "text": "plan the port change"}
    turn = (await client.request("agent/submitMessage", submitted))["turnId"]
    done = await client.events.turn_completed(turn, timeout=120)
    await answering
    assert done["stopReason"] == "end_turn"
    path = transcript_path(Path(os.environ["AGENTLS_HOME"]), session)
    # Bounded: a replay whose answer is refused waits for an answer that never comes.
    replayed = await asyncio.wait_for(replay_transcript(path, project(tmp_path / "again")), 120)
    assert replayed.stop_reasons == ["end_turn"] and not replayed.mismatches
    assert len(read_recording(path).results) == 2
