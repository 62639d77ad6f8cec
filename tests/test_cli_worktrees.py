"""`agentls run` with isolated agents (Task `isolation: "worktree"`): at the end it shows
each worktree's diff summary and asks, on a terminal, to merge, discard or keep it; with no
terminal it keeps them and says how to deal with them later."""

from __future__ import annotations

from pathlib import Path

import pytest

from terminal_run import run_on_a_terminal
from test_cli_warm import environment, run
from test_e2e_worktrees import git, isolated, make_repo, write

SCRIPT = [
    {"tool_calls": [isolated("a", "Write alpha"), isolated("b", "Write beta")]},
    {"for": "Write alpha", "tool_calls": [write("wa", "alpha.txt", "alpha\n")]},
    {"for": "Write beta", "tool_calls": [write("wb", "beta.txt", "beta\n")]},
    {"for": "Write alpha", "text": "Wrote alpha."},
    {"for": "Write beta", "text": "Wrote beta."},
    {"text": "Both agents are done."},
]


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "README.md").write_text("hello\n", encoding="utf-8")
    make_repo(project)
    return project


@pytest.mark.parametrize("mode", ["warm", "in process"])
def test_a_terminal_merges_one_worktree_and_discards_the_other(tmp_path: Path, mode: str) -> None:
    project = _project(tmp_path)
    env = environment(tmp_path, SCRIPT, idle="3")
    replies = ["m", "d"]

    def answer(shown: str) -> str | None:
        if replies and shown.rstrip(" ").endswith("[k] Keep for later:"):
            return replies.pop(0)
        return None

    extra = ["--no-daemon"] if mode == "in process" else []
    args = [*extra, "--permission-mode", "acceptEdits", "write both"]
    code, _out, shown = run_on_a_terminal(args, answer, project, env)
    assert code == 0, shown
    assert "A alpha.txt (+1 -0)" in shown and "A beta.txt (+1 -0)" in shown
    assert shown.count("[m] Merge into the working tree") == 2
    assert "merged into the working tree (worktree and branch removed)" in shown
    assert "discarded (worktree and branch removed)" in shown
    # Which agent came first is the daemon's order; exactly one file was merged.
    merged = sorted(p.name for p in project.iterdir() if p.name.endswith(".txt"))
    assert len(merged) == 1
    assert git(project, "branch", "--list", "agentls/*") == ""


def test_without_a_terminal_the_worktrees_are_kept_and_explained(tmp_path: Path) -> None:
    project = _project(tmp_path)
    env = environment(tmp_path, SCRIPT, idle="3")
    done = run(
        "--no-daemon", "--permission-mode", "acceptEdits", "write both", cwd=project, env=env
    )
    assert done.returncode == 0, done.stderr
    assert "A alpha.txt (+1 -0)" in done.stderr
    assert done.stderr.count("git merge --squash agentls/agent_") == 2
    assert not (project / "alpha.txt").exists()
    assert git(project, "branch", "--list", "agentls/*").count("agentls/") == 2

    # A later run of the session offers them again at its end.
    session = done.stderr.split("agentls run --resume ")[-1].split(" ")[0].rstrip(")\n")
    later = tmp_path / "later.jsonl"
    later.write_text('{"text": "Nothing to do."}\n', encoding="utf-8")
    env["AGENTLS_SCRIPT"] = str(later)
    again = run("--no-daemon", "--resume", session, "anything left?", cwd=project, env=env)
    assert again.returncode == 0, again.stderr
    assert again.stderr.count("git merge --squash agentls/agent_") == 2
