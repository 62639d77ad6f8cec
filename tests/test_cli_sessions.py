"""`agentls run` beyond one fresh turn (stdin, --continue, --resume, --data) and
`agentls sessions list|show|rename|rm|export`, as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_client import read_requests


def agentls(
    *args: str, cwd: Path, home: Path, stdin: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    base.pop("AGENTLS_NO_DAEMON", None)  # `run` goes through the warm daemon here
    # A warm daemon started for a test goes away soon after it.
    base["AGENTLS_DAEMON_IDLE"] = "3"
    return subprocess.run(
        [sys.executable, "-m", "agentls", *args],
        cwd=cwd,
        env={**base, "AGENTLS_HOME": str(home), **env},
        capture_output=True,
        text=True,
        timeout=60,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        check=False,
    )


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    root = tmp_path / "proj"
    root.mkdir()
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"text": "Noted."}) + "\n", encoding="utf-8")
    env = {"AGENTLS_SCRIPT": str(script), "AGENTLS_REQUEST_LOG": str(tmp_path / "requests.jsonl")}
    return root, tmp_path / "home", env


def user_texts(request: dict) -> list[str]:
    return [
        block["text"]
        for message in request["messages"]
        if message["role"] == "user"
        for block in message["content"]
        if block["type"] == "text" and not block["text"].startswith("<userContext>")
    ]


def test_the_prompt_comes_from_stdin(project: tuple[Path, Path, dict[str, str]]) -> None:
    root, home, env = project
    done = agentls("run", cwd=root, home=home, stdin="remember the number 42\n", **env)
    assert done.returncode == 0, done.stderr
    assert "Noted." in done.stdout
    assert user_texts(read_requests(Path(env["AGENTLS_REQUEST_LOG"]))[0]) == [
        "remember the number 42\n"
    ]


def test_continue_and_resume_go_on_in_the_earlier_session(
    project: tuple[Path, Path, dict[str, str]],
) -> None:
    root, home, env = project
    first = agentls("run", "remember the number 42", cwd=root, home=home, **env)
    assert first.returncode == 0, first.stderr
    session_id = first.stderr.split("session ", 1)[1].split()[0]
    again = agentls("run", "--continue", "which number?", cwd=root, home=home, **env)
    assert again.returncode == 0, again.stderr
    log = Path(env["AGENTLS_REQUEST_LOG"])
    assert user_texts(read_requests(log)[-1]) == ["remember the number 42", "which number?"]
    resumed = agentls("run", "--resume", session_id, "and now?", cwd=root, home=home, **env)
    assert resumed.returncode == 0, resumed.stderr
    assert user_texts(read_requests(log)[-1])[-1] == "and now?"
    assert len(user_texts(read_requests(log)[-1])) == 3


def test_continue_with_no_session_and_an_unknown_resume_exit_2(
    project: tuple[Path, Path, dict[str, str]],
) -> None:
    root, home, env = project
    nothing = agentls("run", "--continue", "hi", cwd=root, home=home, **env)
    assert nothing.returncode == 2
    assert "No session to continue" in nothing.stderr
    unknown = agentls("run", "--resume", "sess_nope", "hi", cwd=root, home=home, **env)
    assert unknown.returncode == 2
    assert "sess_nope" in unknown.stderr


def test_data_and_intent_reach_the_model(project: tuple[Path, Path, dict[str, str]]) -> None:
    root, home, env = project
    data = root.parent / "orders.json"
    data.write_text(json.dumps({"orders": [{"id": 1, "total": 9.5}]}), encoding="utf-8")
    done = agentls(
        "run",
        "--data",
        str(data),
        "--intent",
        "find big orders",
        "look",
        cwd=root,
        home=home,
        **env,
    )
    assert done.returncode == 0, done.stderr
    context = read_requests(Path(env["AGENTLS_REQUEST_LOG"]))[0]["messages"][0]["content"][0]
    assert "<structuredData>" in context["text"] and '"total": 9.5' in context["text"]
    assert "<userIntent>find big orders</userIntent>" in context["text"]
    broken = root.parent / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    bad = agentls("run", "--data", str(broken), "look", cwd=root, home=home, **env)
    assert bad.returncode == 2 and "broken.json" in bad.stderr


def test_an_empty_prompt_is_a_usage_error(project: tuple[Path, Path, dict[str, str]]) -> None:
    root, home, env = project
    done = agentls("run", cwd=root, home=home, stdin="  \n", **env)
    assert done.returncode == 2 and "empty" in done.stderr


def test_sessions_list_show_rename_export_rm(project: tuple[Path, Path, dict[str, str]]) -> None:
    root, home, env = project
    done = agentls("run", "remember the number 42", cwd=root, home=home, **env)
    session_id = done.stderr.split("session ", 1)[1].split()[0]
    listed = agentls("sessions", "list", cwd=root, home=home)
    assert listed.returncode == 0
    assert session_id in listed.stdout and "remember the number 42" in listed.stdout
    elsewhere = agentls("sessions", "list", cwd=root.parent, home=home)
    assert session_id not in elsewhere.stdout
    assert session_id in agentls("sessions", "list", "--all", cwd=root.parent, home=home).stdout
    shown = agentls("sessions", "show", session_id[:12], cwd=root, home=home)
    assert shown.returncode == 0, shown.stderr
    assert "## You\n\nremember the number 42" in shown.stdout and "Noted." in shown.stdout
    assert "<userContext>" not in shown.stdout
    renamed = agentls("sessions", "rename", session_id, "The number", cwd=root, home=home)
    assert renamed.returncode == 0
    as_json = json.loads(agentls("sessions", "list", "--json", cwd=root, home=home).stdout)
    assert as_json[0]["title"] == "The number"
    exported = agentls(
        "sessions", "export", session_id, "--format", "json", "-o", "out.json", cwd=root, home=home
    )
    assert exported.returncode == 0, exported.stderr
    body = json.loads((root / "out.json").read_text(encoding="utf-8"))
    assert body["session"]["sessionId"] == session_id
    assert [m["role"] for m in body["messages"]] == ["user", "assistant"]
    removed = agentls("sessions", "rm", session_id, cwd=root, home=home)
    assert removed.returncode == 0
    assert session_id not in agentls("sessions", "list", "--all", cwd=root, home=home).stdout
    missing = agentls("sessions", "show", session_id, cwd=root, home=home)
    assert missing.returncode == 2 and "no session" in missing.stderr
