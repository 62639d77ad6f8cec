"""`agentls run --permission-mode plan`: the plan is shown as markdown text and asked about
with the permission prompt's keys; keeping on planning asks what should change; with no
terminal the plan is rejected, as other questions are."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_client import read_requests
from terminal_run import run_on_a_terminal
from test_cli_warm import environment, run

PLAN = "# Greet\n\n1. Write `hello.txt`."


def _present(call_id: str) -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": "ExitPlanMode", "input": {"plan": PLAN}}]}


@pytest.mark.parametrize("mode", ["warm", "in process"])
def test_a_plan_is_shown_sent_back_with_feedback_then_approved_on_a_terminal(
    tmp_path: Path, mode: str
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    write = {"name": "Write", "input": {"file_path": "hello.txt", "content": "hi\n"}}
    script = [_present("p1"), _present("p2"), {"tool_calls": [write]}, {"text": "Done."}]
    log = tmp_path / "requests.jsonl"
    env = {**environment(tmp_path, script, idle="3"), "AGENTLS_REQUEST_LOG": str(log)}
    replies = ["n", "Name the file hello.txt", "a"]

    def answer(shown: str) -> str | None:
        ends = shown.rstrip(" ")
        if replies and (ends.endswith("[d] Reject:") or ends.endswith("plan?")):
            return replies.pop(0)
        return None

    extra = ["--no-daemon"] if mode == "in process" else []
    args = [*extra, "--permission-mode", "plan", "greet"]
    code, _out, shown = run_on_a_terminal(args, answer, project, env, True)
    assert code == 0, shown
    question = shown.index("Approve the plan?")
    assert "# Greet\r\n\r\n1. Write `hello.txt`." in shown[:question]
    keys = "[y] Approve (ask before edits) · [a] Approve, accept edits · [n] Keep planning"
    assert keys in shown and "[d] Reject" in shown
    assert "→ Keep planning" in shown and "→ Approve, accept edits" in shown
    # acceptEdits from the approval on: the Write was not asked about.
    assert shown.count("Approve the plan?") == 2 and "Allow " not in shown
    assert (project / "hello.txt").read_text(encoding="utf-8") == "hi\n"
    feedback = read_requests(log)[1]["messages"][-1]["content"][0]["content"]
    assert "Name the file hello.txt" in feedback


def test_with_no_terminal_the_plan_is_rejected_and_the_model_told_to_stop(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    env = environment(tmp_path, [_present("p1"), {"text": "Stopped."}])
    done = run("--json", "--no-daemon", "--permission-mode", "plan", "greet", cwd=project, env=env)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    request = next(e for e in events if e["type"] == "permission_request")
    assert request["plan"] == PLAN
    resolved = next(e for e in events if e["type"] == "permission_resolved")
    assert resolved["optionId"] == "plan_reject"
    assert not [e for e in events if e["type"] == "permission_mode_changed"]
