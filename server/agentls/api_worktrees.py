"""The wire models of isolated agents' worktrees: agent/listWorktrees,
agent/worktreeDiff (its result is agent/turnDiff's) and agent/resolveWorktree."""

from __future__ import annotations

from typing import Literal

from agentls.api_base import ParamsModel, WireModel


class WorktreeFileEntry(WireModel):
    # Relative to the repository's top level.
    path: str
    status: Literal["added", "modified", "deleted"]
    added: int
    removed: int


class WorktreeEntry(WireModel):
    agent_id: str
    description: str
    # The worktree's folder, its branch, the commit it started from, and the user's tree.
    path: str
    branch: str
    base_commit: str
    repository: str
    turn_id: str | None = None
    status: Literal["running", "ready", "missing"]
    # What the branch changed (absent while the agent runs, or when the folder is gone).
    files: list[WorktreeFileEntry] | None = None
    added: int | None = None
    removed: int | None = None


class ListWorktreesResult(WireModel):
    worktrees: list[WorktreeEntry]


class WorktreeDiffParams(ParamsModel):
    session_id: str
    agent_id: str


class ResolveWorktreeParams(ParamsModel):
    session_id: str
    agent_id: str
    action: Literal["merge", "discard"]


class MergeConflictEntry(WireModel):
    path: str
    reason: str


class ResolveWorktreeResult(WireModel):
    action: Literal["merge", "discard"]
    # True when done (the worktree and branch are gone); false when conflicts kept a merge
    # from writing anything.
    resolved: bool
    merged: list[str]
    conflicts: list[MergeConflictEntry]
