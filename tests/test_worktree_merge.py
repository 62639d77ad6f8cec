"""Worktrees and their merge, on real git repositories in tmp (no daemon): the cases the
end-to-end tests leave out."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentls.session.worktree_git import WorktreeGitError
from agentls.session.worktree_merge import MergeOutcome, merge_worktree
from agentls.session.worktrees import SessionWorktrees, WorktreeLease, isolated_context
from agentls.tools.base import NoCheckpoints, ToolContext
from agentls.tools.read_cache import FileReadCache
from agentls.workspace.view import WorkspaceView
from test_e2e_worktrees import git, make_repo


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    repo = tmp_path / "repo"
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    make_repo(repo)
    return repo.resolve()


def _worktree(tmp_path: Path, cwd: Path) -> tuple[SessionWorktrees, WorktreeLease]:
    worktrees = SessionWorktrees(tmp_path / "session" / "worktrees")
    lease = asyncio.run(worktrees.create(cwd, "agent_1", "test", "turn_1"))
    return worktrees, lease


def _merge(worktrees: SessionWorktrees, lease: WorktreeLease, repo: Path) -> MergeOutcome:
    return asyncio.run(merge_worktree(worktrees, lease, WorkspaceView([repo]), NoCheckpoints()))


def test_a_deletion_merges_and_a_file_the_user_deleted_conflicts(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"gone.txt": "old\n", "kept.txt": "a\n", "same.txt": "x\n"})
    worktrees, lease = _worktree(tmp_path, repo)
    (Path(lease.path) / "gone.txt").unlink()
    (Path(lease.path) / "kept.txt").write_text("b\n", encoding="utf-8")
    (Path(lease.path) / "same.txt").write_text("y\n", encoding="utf-8")
    (repo / "kept.txt").unlink()
    (repo / "same.txt").write_text("y\n", encoding="utf-8")
    outcome = _merge(worktrees, lease, repo)
    assert outcome.merged == []
    assert outcome.conflicts == [
        (repo / "kept.txt", "changed by the agent, deleted in your working tree")
    ]
    assert (repo / "gone.txt").exists()

    (repo / "kept.txt").write_text("a\n", encoding="utf-8")
    outcome = _merge(worktrees, lease, repo)
    # same.txt already holds the agent's version: nothing to write there.
    assert outcome.merged == [repo / "gone.txt", repo / "kept.txt"]
    assert not (repo / "gone.txt").exists()
    assert (repo / "kept.txt").read_text(encoding="utf-8") == "b\n"


def test_a_session_in_a_subdirectory_works_in_that_directory_of_the_worktree(
    tmp_path: Path,
) -> None:
    repo = _repo(tmp_path, {"pkg/mod.py": "x = 1\n", "top.txt": "t\n"})
    _worktrees, lease = _worktree(tmp_path, repo / "pkg")
    assert lease.subdir == "pkg" and lease.cwd == Path(lease.path) / "pkg"
    parent = ToolContext(WorkspaceView([repo / "pkg"]), FileReadCache(), repo / "pkg")
    child = isolated_context(parent, lease)
    assert child.cwd == lease.cwd
    assert child.workspace.roots == (Path(lease.path).resolve() / "pkg",)
    assert git(Path(lease.path), "rev-parse", "--abbrev-ref", "HEAD").strip() == "agentls/agent_1"


def test_a_repository_without_a_commit_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "empty"
    repo.mkdir()
    git(repo, "init", "-q")
    with pytest.raises(WorktreeGitError, match="has no commit yet"):
        _worktree(tmp_path, repo)


def test_without_git_on_the_path_the_error_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    with pytest.raises(WorktreeGitError, match="git is not installed"):
        _worktree(tmp_path, tmp_path)
