"""What a user of `agentls run` sees when a change needs permission: the diff before the
question, the answer in words, and no question at all for a change that cannot apply."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
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
