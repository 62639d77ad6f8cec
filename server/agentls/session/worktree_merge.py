"""Merging an isolated agent's branch into the user's working tree, all or nothing.

Each file the branch changed is merged three ways: its content at the worktree's base
commit, on the branch, and in the user's tree as the user has it now (an editor's unsaved
buffer, else the disk; uncommitted changes included). A file the user left as it was
takes the branch's version; one both changed is merged line by line (`git merge-file`).
Every file is worked out before any is written: one conflict and nothing is written, the
conflicts are reported, and the branch stays for another try. The writes go through the
session's workspace (an open buffer changes in the editor) and its checkpoints, as the
tools' writes do, so `agent/rewind` of the turn that ran the agent takes them back. The
user's index, HEAD and history are not touched: the changes arrive uncommitted.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from agentls.session.worktree_git import BranchChange, merge_texts
from agentls.session.worktrees import SessionWorktrees, WorktreeLease
from agentls.textfile import BinaryContent, UnencodableText, binary_reason, decode_bytes
from agentls.tools.base import Checkpoints
from agentls.workspace.view import EditRejected, WorkspaceView, write_bytes_atomically

# Modes a file-by-file merge cannot write: a symbolic link and a submodule.
_UNMERGEABLE_MODES = ("120000", "160000")


@dataclass(slots=True)
class MergeOutcome:
    merged: list[Path] = field(default_factory=list)
    conflicts: list[tuple[Path, str]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Planned:
    """One file's write: what it holds now and what the merge leaves in it."""

    path: Path
    old: bytes | None
    new: bytes | None
    executable: bool


async def merge_worktree(
    worktrees: SessionWorktrees,
    lease: WorktreeLease,
    workspace: WorkspaceView,
    checkpoints: Checkpoints,
) -> MergeOutcome:
    """Bring the branch's changes into the user's tree, or report why not and write nothing."""
    await worktrees.settle(lease)
    planned: list[_Planned] = []
    outcome = MergeOutcome()
    with tempfile.TemporaryDirectory(prefix="agentls-merge-") as scratch:
        for change in await worktrees.changes(lease):
            path = lease.user_path(change.path)
            result = await _plan(worktrees, lease, change, workspace, Path(scratch))
            if isinstance(result, str):
                outcome.conflicts.append((path, result))
            elif result is not None:
                planned.append(result)
    if outcome.conflicts:
        return outcome
    failure = await _apply(planned, workspace, checkpoints)
    if failure is not None:
        outcome.conflicts.append(failure)
        return outcome
    outcome.merged = [p.path for p in planned]
    return outcome


async def _plan(
    worktrees: SessionWorktrees,
    lease: WorktreeLease,
    change: BranchChange,
    workspace: WorkspaceView,
    scratch: Path,
) -> _Planned | str | None:
    """The file's write, None when the tree has the branch's version already, or why the
    file conflicts."""
    path = lease.user_path(change.path)
    if change.old_mode in _UNMERGEABLE_MODES or change.new_mode in _UNMERGEABLE_MODES:
        return f"a symbolic link or submodule: bring it over by hand from {lease.branch}"
    if not workspace.policy.contains(path):
        return "outside the session's workspace"
    base, theirs = await worktrees.contents(lease, change)
    ours = workspace.current_bytes(path)
    executable = change.new_mode == "100755" and change.old_mode != "100755"
    if ours == theirs:
        return None
    if ours == base:
        return _Planned(path, ours, theirs, executable)
    if ours is None:
        return "changed by the agent, deleted in your working tree"
    if base is None:
        return "created by the agent, and a different file of that name is in your working tree"
    if theirs is None:
        return "deleted by the agent, changed in your working tree"
    if any(binary_reason(data) is not None for data in (ours, base, theirs)):
        return "a binary file changed both by the agent and in your working tree"
    merged = await merge_texts(scratch, ours, base, theirs)
    if merged is None:
        return "the agent and your working tree changed the same lines"
    return _Planned(path, ours, merged, executable)


async def _apply(
    planned: list[_Planned], workspace: WorkspaceView, checkpoints: Checkpoints
) -> tuple[Path, str] | None:
    """Write every planned file; on a failure put back those written and say which failed."""
    done: list[_Planned] = []
    for plan in planned:
        try:
            await _write(plan, plan.new, workspace, checkpoints)
        except (OSError, EditRejected, UnencodableText) as exc:
            for written in reversed(done):
                with contextlib.suppress(OSError, EditRejected, UnencodableText):
                    await _write(written, written.old, workspace, checkpoints)
            return (
                plan.path,
                f"could not be written ({exc}); the files merged before it were put back",
            )
        done.append(plan)
    return None


async def _write(
    plan: _Planned, data: bytes | None, workspace: WorkspaceView, checkpoints: Checkpoints
) -> None:
    """Leave `data` in the file (None: delete it), through the workspace and checkpoints."""
    checkpoints.before_write(plan.path)
    if data is None:
        await workspace.delete(plan.path)
        checkpoints.deleted(plan.path)
        return
    try:
        decoded = decode_bytes(data)
    except BinaryContent:
        write_bytes_atomically(plan.path, data)
    else:
        edit = await workspace.write(plan.path, decoded.text, decoded.encoding)
        checkpoints.written(edit)
    if plan.executable and data is plan.new:
        mode = os.stat(plan.path).st_mode
        os.chmod(plan.path, mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
