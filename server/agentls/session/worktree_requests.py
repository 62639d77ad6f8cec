"""agent/listWorktrees, agent/worktreeDiff and agent/resolveWorktree: what a session's
isolated agents changed, and the user's merge or discard of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from agentls.api_worktrees import WorktreeEntry, WorktreeFileEntry
from agentls.errors import AgentError, InvalidParams, SessionBusy
from agentls.events import WorktreeResolved, WorktreeSummary
from agentls.session.rewind import FileChange, file_change
from agentls.session.worktree_git import WorktreeGitError
from agentls.session.worktree_merge import merge_worktree
from agentls.session.worktrees import WorktreeLease
from agentls.tools.base import NoCheckpoints

if TYPE_CHECKING:
    from agentls.session.session import AgentSession

WorktreeAction = Literal["merge", "discard"]


@dataclass(frozen=True, slots=True)
class WorktreeState:
    """One worktree as agent/listWorktrees shows it."""

    lease: WorktreeLease
    # `running` while its agent works, `ready` when it can be merged, `missing` when its
    # folder is gone (only a discard is left to do).
    status: Literal["running", "ready", "missing"]
    summary: WorktreeSummary | None


@dataclass(slots=True)
class Resolution:
    action: WorktreeAction
    # The files a merge wrote; the files that kept it from merging (nothing was written).
    merged: list[Path] = field(default_factory=list)
    conflicts: list[tuple[Path, str]] = field(default_factory=list)


async def list_worktrees(session: AgentSession) -> list[WorktreeState]:
    """The session's worktrees not yet merged or discarded, with what each changed."""
    states = []
    for lease in session.worktrees.all():
        if lease.agent_id in session.worktrees.running:
            states.append(WorktreeState(lease, "running", None))
            continue
        try:
            # Settled first: an agent stopped mid-work (an abort, a restart) left its
            # changes uncommitted.
            found = await session.worktrees.settle(lease)
        except (WorktreeGitError, OSError):
            states.append(WorktreeState(lease, "missing", None))
            continue
        states.append(WorktreeState(lease, "ready", found))
    return states


async def worktree_diff(session: AgentSession, agent_id: str) -> list[FileChange]:
    """Every file the agent's branch changed, as a unified diff against its base (paths
    as they lie in the user's tree; the agent's uncommitted work is committed first)."""
    lease = _idle_lease(session, agent_id)
    try:
        await session.worktrees.settle(lease)
        changes = []
        for change in await session.worktrees.changes(lease):
            old, new = await session.worktrees.contents(lease, change)
            changes.append(file_change(lease.user_path(change.path), old, new, change.path))
    except WorktreeGitError as exc:
        raise AgentError(f"The worktree of {agent_id} cannot be read: {exc}") from None
    return changes


async def resolve_worktree(
    session: AgentSession, agent_id: str, action: WorktreeAction
) -> Resolution:
    """Merge the agent's changes into the user's tree (all or nothing) or discard them;
    either way, once done, its worktree and branch are removed."""
    lease = _idle_lease(session, agent_id)
    done = Resolution(action)
    try:
        if action == "merge":
            checkpoints = (
                session.checkpoints.for_turn(lease.turn_id, session.workspace, session.cwd)
                if lease.turn_id is not None
                else NoCheckpoints()
            )
            outcome = await merge_worktree(session.worktrees, lease, session.workspace, checkpoints)
            done.merged, done.conflicts = outcome.merged, outcome.conflicts
            if done.conflicts:
                return done
        await session.worktrees.discard(lease)
    except WorktreeGitError as exc:
        raise AgentError(f"The worktree of {agent_id} cannot be {action}d: {exc}") from None
    resolved = WorktreeResolved(
        agent_id,
        "merged" if action == "merge" else "discarded",
        lease.branch,
        tuple(str(p) for p in done.merged),
    )
    session.events.emit(resolved, None)
    return done


def _idle_lease(session: AgentSession, agent_id: str) -> WorktreeLease:
    lease = session.worktrees.find(agent_id)
    if lease is None:
        raise InvalidParams(
            f"Session {session.id} has no worktree of agent {agent_id[:80]!r} (never made, "
            "or already merged or discarded).",
            {"field": "agentId"},
        )
    if agent_id in session.worktrees.running:
        raise SessionBusy(f"Agent {agent_id} is still working in its worktree; wait for it.")
    return lease


def entry_of(state: WorktreeState) -> WorktreeEntry:
    """A worktree as agent/listWorktrees sends it."""
    lease, found = state.lease, state.summary
    return WorktreeEntry(
        agent_id=lease.agent_id,
        description=lease.description,
        path=lease.path,
        branch=lease.branch,
        base_commit=lease.base_commit,
        repository=lease.repo,
        turn_id=lease.turn_id,
        status=state.status,
        files=None
        if found is None
        else [
            WorktreeFileEntry(path=f.path, status=f.status, added=f.added, removed=f.removed)
            for f in found.files
        ],
        added=None if found is None else found.added,
        removed=None if found is None else found.removed,
    )
