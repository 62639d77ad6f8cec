"""What a user of `agentls run` sees when a change needs permission: the diff before the
question, the answer in words, and no question at all for a change that cannot apply."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from terminal_run import run_on_a_terminal
from test_cli_warm import environment, run


def _read(path: str) -> dict[str, Any]:
    return {"name": "Read", "input": {"file_path": path}}


def _edit(path: str, old: str, new: str) -> dict[str, Any]:
    return {"name": "Edit", "input": {"file_path": path, "old_string": old, "new_string": new}}


def _multi_edit(path: str, *steps: tuple[str, str]) -> dict[str, Any]:
    edits = [{"old_string": old, "new_string": new} for old, new in steps]
    return {"name": "MultiEdit", "input": {"file_path": path, "edits": edits}}


CANNOT_APPLY = {
    "old_string missing": (_edit("app.py", "port = 9", "port = 10"), "was not found"),
    "old_string not unique": (_edit("app.py", "x", "y"), "Found 2 matches"),
    "a MultiEdit step missing": (
        _multi_edit("app.py", ("port = 8000", "port = 1"), ("nothing", "else")),
        "Edit 2 of 2: old_string was not found",
    ),
    "the file its Read failed on": (_edit("apps.py", "port", "host"), "File does not exist"),
}


@pytest.mark.parametrize("case", CANNOT_APPLY)
def test_a_change_that_cannot_apply_is_refused_before_anyone_is_asked(
    tmp_path: Path, case: str
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "app.py").write_text("port = 8000\nx = 1\nx = 2\n", encoding="utf-8")
    call, reason = CANNOT_APPLY[case]
    read = _read(call["input"]["file_path"])
    script = [{"tool_calls": [read]}, {"tool_calls": [call]}, {"text": "It did not apply."}]
    env = environment(tmp_path, script)
    done = run("--json", "--no-daemon", "change the port", cwd=project, env=env)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e for e in events if e["type"] == "permission_request"] == []
    ends = [e for e in events if e["type"] == "tool_call_update" and e["status"] == "failed"]
    assert reason in ends[-1]["content"]
    assert (project / "app.py").read_text(encoding="utf-8") == "port = 8000\nx = 1\nx = 2\n"


def on_a_terminal(
    args: list[str], reply: str, cwd: Path, env: dict[str, str], stdout_too: bool
) -> tuple[int, str, str]:
    """`agentls run` on a terminal whose permission question gets `reply` once."""
    answered: list[str] = []

    def answer(shown: str) -> str | None:
        if not answered and "Allow " in shown and shown.rstrip(" ").endswith(":"):
            answered.append(reply)
            return reply
        return None

    return run_on_a_terminal(args, answer, cwd, env, stdout_too)


@pytest.mark.parametrize("mode", ["warm", "in process"])
def test_the_diff_is_shown_coloured_before_the_question_and_the_answer_in_words(
    tmp_path: Path, mode: str
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "app.py").write_text("host = 'a'\nport = 8000\n", encoding="utf-8")
    script = [
        {"tool_calls": [_read("app.py")]},
        {"tool_calls": [_edit("app.py", "port = 8000", "port = 9000")]},
        {"text": "Changed."},
    ]
    env = {**environment(tmp_path, script, idle="3"), "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    extra = ["--no-daemon"] if mode == "in process" else []
    code, _out, shown = on_a_terminal([*extra, "change the port"], "y", project, env, True)
    assert code == 0, shown
    question = shown.index("Allow Edit app.py?")
    assert "\x1b[31m-port = 8000\x1b[0m" in shown[:question]
    assert "\x1b[32m+port = 9000\x1b[0m" in shown[:question]
    assert "[y] Allow once · [a] Always allow Edit(./app.py) · [n] Reject" in shown
    assert "[d] Always reject Edit(./app.py)" in shown
    assert "→ Allow once" in shown[question:]
    assert "allow_once" not in shown
    assert (project / "app.py").read_text(encoding="utf-8") == "host = 'a'\nport = 9000\n"


def test_a_big_diff_is_cut_with_a_note_and_is_plain_when_stdout_is_not_a_terminal(
    tmp_path: Path,
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    content = "".join(f"line {n}\n" for n in range(1, 201))
    write = {"name": "Write", "input": {"file_path": "big.txt", "content": content}}
    env = environment(tmp_path, [{"tool_calls": [write]}, {"text": "Not written."}], idle="3")
    code, out, shown = on_a_terminal(["--no-daemon", "write it"], "d", project, env, False)
    assert code == 0, shown
    assert "--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,200 @@\n+line 1\n" in out
    assert "\x1b[" not in out
    assert "+line 57\n… 143 more lines of the diff not shown (143 added, 0 removed)\n" in out
    assert "+line 58" not in out
    assert "→ Always reject Edit(./big.txt)" in out
    assert not (project / "big.txt").exists()


def test_counts_agree_with_their_nouns(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    env = environment(tmp_path, [{"text": "Hello."}])
    done = run("--no-daemon", "hi", cwd=project, env=env)
    assert done.returncode == 0, done.stderr
    assert "[end_turn after 1 model call, " in done.stdout


@pytest.mark.parametrize("mode", ["warm", "in process"])
@pytest.mark.parametrize("scope", [None, "project"])
def test_always_allow_goes_to_the_local_file_or_where_the_command_line_says(
    tmp_path: Path, mode: str, scope: str | None
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    write = {"name": "Write", "input": {"file_path": "new.txt", "content": "x\n"}}
    env = environment(tmp_path, [{"tool_calls": [write]}, {"text": "Written."}], idle="3")
    extra = ["--no-daemon"] if mode == "in process" else []
    extra += ["--permission-rules-scope", scope] if scope else []
    code, out, shown = on_a_terminal([*extra, "write it"], "a", project, env, False)
    assert code == 0, shown
    assert "→ Always allow Edit(./new.txt)" in out
    saved = project / ".agentls" / ("settings.json" if scope else "settings.local.json")
    assert json.loads(saved.read_text()) == {"permissions": {"allow": ["Edit(./new.txt)"]}}
    assert [p.name for p in (project / ".agentls").glob("settings*.json")] == [saved.name]


@pytest.mark.parametrize("mode", ["warm", "in process"])
def test_a_resumed_session_takes_the_command_lines_rules_scope(tmp_path: Path, mode: str) -> None:
    # Through the warm daemon, agent/resumeSession used to take no settings: the scope of
    # `--continue --permission-rules-scope project` was dropped and the rule went to the
    # local file.
    project = tmp_path / "proj"
    project.mkdir()
    write = {"name": "Write", "input": {"file_path": "new.txt", "content": "x\n"}}
    env = environment(tmp_path, [{"tool_calls": [write]}, {"text": "Done."}], idle="3")
    extra = ["--no-daemon"] if mode == "in process" else []
    code, _out, shown = on_a_terminal([*extra, "write it"], "n", project, env, False)
    assert code == 0, shown
    assert not (project / ".agentls").exists()
    resumed = [*extra, "--continue", "--permission-rules-scope", "project", "write it now"]
    code, out, shown = on_a_terminal(resumed, "a", project, env, False)
    assert code == 0, shown
    assert "→ Always allow Edit(./new.txt)" in out
    saved = project / ".agentls" / "settings.json"
    assert json.loads(saved.read_text()) == {"permissions": {"allow": ["Edit(./new.txt)"]}}
    assert [p.name for p in (project / ".agentls").glob("settings*.json")] == [saved.name]
