"""`agentls sessions delete ID`: asks y/N on a terminal (a pseudo-terminal here) unless
`--yes`, and deletes the session's transcript, listing entry and folder."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from test_cli_sessions import agentls


def saved_session(tmp_path: Path) -> tuple[Path, Path, str]:
    """A session saved by a real `agentls run` (its own process, scripted model)."""
    root, home = tmp_path / "proj", tmp_path / "home"
    root.mkdir()
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"text": "Noted."}) + "\n", encoding="utf-8")
    done = agentls("run", "--no-daemon", "hello", cwd=root, home=home, AGENTLS_SCRIPT=str(script))
    assert done.returncode == 0, done.stderr
    listed = json.loads(agentls("sessions", "list", "--json", cwd=root, home=home).stdout)
    return root, home, listed[0]["sessionId"]


def on_a_terminal(root: Path, home: Path, typed: str, *args: str) -> tuple[int, str]:
    """`agentls sessions ARGS` with a pseudo-terminal for stdin and stdout, `typed` typed."""
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    process = subprocess.Popen(
        [sys.executable, "-m", "agentls", "sessions", *args],
        cwd=root,
        env={**env, "AGENTLS_HOME": str(home)},
        stdin=follower,
        stdout=follower,
        stderr=follower,
    )
    os.close(follower)
    os.write(leader, typed.encode())
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    return process.wait(timeout=60), shown.decode(errors="replace")


def files_of(home: Path, session_id: str) -> list[str]:
    return [p.name for p in (home / "sessions").iterdir() if p.name.startswith(session_id)]


def test_a_terminal_is_asked_first_and_no_keeps_the_session(tmp_path: Path) -> None:
    root, home, session_id = saved_session(tmp_path)
    code, shown = on_a_terminal(root, home, "n\n", "delete", session_id)
    assert f"Delete session {session_id}" in shown and "[y/N]" in shown
    assert code == 1 and "not deleted" in shown
    assert f"{session_id}.jsonl" in files_of(home, session_id)

    code, shown = on_a_terminal(root, home, "y\n", "delete", session_id[:12])
    assert code == 0 and f"deleted {session_id}" in shown
    assert files_of(home, session_id) == []
    assert session_id not in agentls("sessions", "list", "--all", cwd=root, home=home).stdout
    assert session_id not in (home / "sessions" / "index.json").read_text(encoding="utf-8")


def test_yes_deletes_without_a_question_even_on_a_terminal(tmp_path: Path) -> None:
    root, home, session_id = saved_session(tmp_path)
    code, shown = on_a_terminal(root, home, "", "delete", "--yes", session_id)
    assert code == 0 and "[y/N]" not in shown and f"deleted {session_id}" in shown
    assert files_of(home, session_id) == []
    again = agentls("sessions", "delete", "--yes", session_id, cwd=root, home=home)
    assert again.returncode == 2 and "no session" in again.stderr
