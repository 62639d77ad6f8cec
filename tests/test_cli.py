"""The console script: demo, headless run, and the missing-credentials message."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def agentls(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    base.pop("AGENTLS_NO_DAEMON", None)  # `run` goes through the warm daemon here
    # A warm daemon started for a test goes away soon after it.
    base["AGENTLS_DAEMON_IDLE"] = "3"
    return subprocess.run(
        [sys.executable, "-m", "agentls", *args],
        cwd=cwd,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_demo_runs_a_full_turn_offline(tmp_path: Path) -> None:
    done = agentls("demo", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "● Read server.py" in out and "● Grep PORT" in out
    assert "? permission requested: Edit server.py" in out
    assert 'PORT = int(os.environ.get("PORT", "8000"))' in out
    assert "[end_turn after 4 model calls" in out


def test_run_without_credentials_exits_2_naming_the_variables(tmp_path: Path) -> None:
    done = agentls("run", "hello", cwd=tmp_path)
    assert done.returncode == 2
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENTLS_PROVIDER"):
        assert name in done.stderr


def test_run_json_prints_the_wire_events(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text(
        json.dumps(
            {"tool_calls": [{"name": "Write", "input": {"file_path": "a.txt", "content": "x"}}]}
        )
        + "\n"
        + json.dumps({"text": "could not write"})
        + "\n"
    )
    done = agentls("run", "--json", "write a file", cwd=tmp_path, AGENTLS_SCRIPT=str(script))
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "turn_started" and kinds[-1] == "turn_completed"
    assert "permission_request" in kinds and "permission_resolved" in kinds
    assert not (tmp_path / "a.txt").exists()
    assert "No terminal to ask on" in done.stderr


def test_run_in_accept_edits_mode_writes(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text(
        json.dumps(
            {"tool_calls": [{"name": "Write", "input": {"file_path": "a.txt", "content": "x"}}]}
        )
        + "\n"
        + json.dumps({"text": "written"})
        + "\n"
    )
    done = agentls(
        "run", "--permission-mode", "acceptEdits", "write", cwd=tmp_path, AGENTLS_SCRIPT=str(script)
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "a.txt").read_text() == "x"
    assert "written" in done.stdout


def test_run_without_a_terminal_answers_a_question_instead_of_hanging(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text(
        json.dumps({"tool_calls": [{"name": "AskUser", "input": {"question": "Which port?"}}]})
        + "\n"
        + json.dumps({"text": "Port 8080 it is."})
        + "\n"
    )
    done = agentls("run", "choose a port", cwd=tmp_path, AGENTLS_SCRIPT=str(script))
    assert done.returncode == 0, done.stderr
    assert "? Which port?" in done.stdout
    assert "Port 8080 it is." in done.stdout


def test_run_says_when_printed_text_was_cut_short_and_asked_again(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    entries = [
        {"text": "The answer is forty", "error": {"kind": "overloaded", "message": "Overloaded"}},
        {"text": "The answer is 42."},
    ]
    script.write_text("".join(json.dumps(e) + "\n" for e in entries))
    done = agentls("run", "question", cwd=tmp_path, AGENTLS_SCRIPT=str(script))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    cut = lines.index("[the text above was cut short and is asked for again]")
    assert lines[cut - 1] == "The answer is forty"
    assert lines[cut + 1].startswith("[warning] Model error overloaded: Overloaded Retrying in")
    assert lines[cut + 2] == "The answer is 42."


def test_run_says_when_printed_text_was_cut_short_by_the_error(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    error = {"kind": "invalid_request", "message": "bad", "retryable": False}
    script.write_text(json.dumps({"text": "The answer is forty", "error": error}) + "\n")
    done = agentls("run", "question", cwd=tmp_path, AGENTLS_SCRIPT=str(script))
    lines = done.stdout.splitlines()
    cut = lines.index("[the text above was cut short by the error below]")
    assert lines[cut - 1] == "The answer is forty"
    assert "asked for again" not in done.stdout


def test_the_demo_leaves_no_session_behind_and_its_closing_hint_runs(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    done = agentls("demo", cwd=tmp_path, AGENTLS_HOME=home)
    assert done.returncode == 0, done.stderr
    assert "--resume" not in done.stdout + done.stderr
    listed = agentls("sessions", "list", "--all", "--json", cwd=tmp_path, AGENTLS_HOME=home)
    assert json.loads(listed.stdout) == []
    shown = agentls("sessions", "list", "--all", cwd=tmp_path, AGENTLS_HOME=home)
    assert shown.stdout == "no sessions\n"
    # The command the demo suggests, run as suggested in a project, with a model configured.
    hint = next(line.strip() for line in done.stdout.splitlines() if "agentls run" in line)
    command = hint.split()
    assert command[:2] == ["agentls", "run"]
    project = tmp_path / "mine"
    project.mkdir()
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"text": "A demo project."}) + "\n")
    prompt = hint.split(" ", 2)[2].strip('"')
    tried = agentls("run", prompt, cwd=project, AGENTLS_HOME=home, AGENTLS_SCRIPT=str(script))
    assert tried.returncode == 0, tried.stderr
    assert "A demo project." in tried.stdout


def test_turn_line_says_when_the_server_sent_no_token_counts() -> None:
    # llama-cpp-python's server streams no usage even when asked: a turn with model calls
    # and all-zero counts is "not reported", never a turn that cost nothing.
    from agentls.cli_print import summary_line

    def ended(turns: int, usage: dict[str, int]) -> str | None:
        event = {"type": "turn_completed", "stopReason": "end_turn", "turns": turns}
        return summary_line({**event, "usage": usage})

    silent = {"inputTokens": 0, "outputTokens": 0, "cacheReadTokens": 0, "cacheWriteTokens": 0}
    assert ended(2, silent) == (
        "\n[end_turn after 2 model calls, token counts not reported by the server]"
    )
    assert ended(0, silent) == "\n[end_turn after 0 model calls, 0 in / 0 out tokens]"
    counted = {**silent, "inputTokens": 1200, "outputTokens": 35}
    assert ended(1, counted) == "\n[end_turn after 1 model call, 1,200 in / 35 out tokens]"


def test_turn_and_agent_lines_show_their_cost_when_it_is_known() -> None:
    from agentls.cli_print import summary_line

    usage = {"inputTokens": 1200, "outputTokens": 35}
    turn = {"type": "turn_completed", "stopReason": "end_turn", "turns": 1, "usage": usage}
    assert summary_line({**turn, "costUsd": 0.012345}) == (
        "\n[end_turn after 1 model call, 1,200 in / 35 out tokens, $0.0123]"
    )
    agent = {"type": "subagent_completed", "stopReason": "end_turn", "turns": 2}
    agent |= {"toolCalls": 1, "durationMs": 1500, "usage": usage}
    assert summary_line(agent) == "  ↳ agent end_turn: 2 model calls, 1 tool call, 1.5 s"
    assert summary_line({**agent, "costUsd": 0.5}) == (
        "  ↳ agent end_turn: 2 model calls, 1 tool call, 1.5 s, $0.5000"
    )
