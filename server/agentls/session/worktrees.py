"""A session's isolated worktrees: each `Task` with `isolation: "worktree"` runs its agent
in a `git worktree` of the repository's HEAD, on a branch of its own (`agentls/<agentId>`),
and the user later merges the branch's changes into the working tree or discards them.

The worktrees live in the session's folder under AGENTLS_HOME
(`sessions/<sessionId>/worktrees/<agentId>/`), beside a `<agentId>.json` that says which
repository, branch and base commit each belongs to: never inside the user's working tree,
where Grep, Glob, builds and the editor would see a second copy of the project, and found
again from that folder after a daemon restart or a resume.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from agentls.events import WorktreeFileStat, WorktreeSummary
from agentls.session.worktree_git import (
    BranchChange,
    WorktreeGitError,
    add_worktree,
    blob_bytes,
    branch_changes,
    commit_all,
    find_repository,
    remove_worktree,
)
from agentls.tools.base import NoCheckpoints, ToolContext
from agentls.tools.read_cache import FileReadCache
from agentls.workspace.view import WorkspaceView

log = logging.getLogger(__name__)
BRANCH_PREFIX = "agentls/"


@dataclass(frozen=True, slots=True)
class WorktreeLease:
    """One agent's worktree: where it is, what it came from, and which turn made it."""

    agent_id: str
    description: str
    # The repository's top level (the user's working tree) and the worktree's.
    repo: str
    path: str
    branch: str
    base_commit: str
    # The session's directory relative to the repository's top ("." at the top).
    subdir: str
    turn_id: str | None = None

    @property
    def cwd(self) -> Path:
        """Where the agent works: the session's directory, in the worktree."""
        return Path(self.path) / self.subdir

    def user_path(self, relative: str) -> Path:
        """A file of the branch, where it lies in the user's working tree."""
        return Path(self.repo) / relative


class SessionWorktrees:
    """The worktrees of one session, kept as files in its folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        # Agents whose loop still runs: their worktree is not theirs to merge yet.
        self.running: set[str] = set()
        # `git worktree add` and `remove` change the repository's worktree list: one at a time.
        self._admin = asyncio.Lock()

    async def create(
        self, cwd: Path, agent_id: str, description: str, turn_id: str | None
    ) -> WorktreeLease:
        """A new worktree of `cwd`'s repository at HEAD for `agent_id` (WorktreeGitError)."""
        repo = await find_repository(cwd)
        lease = WorktreeLease(
            agent_id,
            description,
            str(repo.top),
            str(self.folder / agent_id),
            BRANCH_PREFIX + agent_id,
            repo.head,
            repo.subdir,
            turn_id,
        )
        async with self._admin:
            await add_worktree(repo.top, Path(lease.path), lease.branch, lease.base_commit)
        self._meta(agent_id).parent.mkdir(parents=True, exist_ok=True)
        self._meta(agent_id).write_text(json.dumps(asdict(lease)), encoding="utf-8")
        return lease

    def find(self, agent_id: str) -> WorktreeLease | None:
        """The agent's worktree as recorded; None when it has none (or it was resolved)."""
        if "/" in agent_id or agent_id.startswith("."):
            return None
        try:
            data = json.loads(self._meta(agent_id).read_text(encoding="utf-8"))
            return WorktreeLease(**data)
        except (OSError, ValueError, TypeError):
            return None

    def all(self) -> list[WorktreeLease]:
        """Every worktree of the session not yet merged or discarded, oldest first."""
        metas = sorted(self.folder.glob("*.json"), key=lambda p: p.stat().st_mtime)
        found = (self.find(meta.stem) for meta in metas)
        return [lease for lease in found if lease is not None]

    async def settle(self, lease: WorktreeLease) -> WorktreeSummary:
        """Commit what the agent left on its branch; what the branch changed."""
        if Path(lease.path).is_dir():
            await commit_all(Path(lease.path), f"agentls: {lease.description}")
        return summary(lease, await self.changes(lease))

    async def changes(self, lease: WorktreeLease) -> list[BranchChange]:
        """What the branch changed against its base (WorktreeGitError when it is gone)."""
        if not Path(lease.path).is_dir():
            raise WorktreeGitError(f"the worktree {lease.path} no longer exists")
        return await branch_changes(Path(lease.path), lease.base_commit)

    async def contents(
        self, lease: WorktreeLease, change: BranchChange
    ) -> tuple[bytes | None, bytes | None]:
        """A changed file's content at the base and on the branch (None: absent)."""
        repo = Path(lease.repo)
        old = await blob_bytes(repo, change.old_blob, change.path)
        new = await blob_bytes(repo, change.new_blob, change.path)
        return old, new

    async def discard(self, lease: WorktreeLease) -> None:
        """The worktree, its branch and its record gone."""
        async with self._admin:
            try:
                await remove_worktree(Path(lease.repo), Path(lease.path), lease.branch)
            except WorktreeGitError:
                if Path(lease.repo).is_dir():
                    raise
                # The repository itself is gone: only the files are left to remove.
                shutil.rmtree(lease.path, ignore_errors=True)
        self._meta(lease.agent_id).unlink(missing_ok=True)

    def _meta(self, agent_id: str) -> Path:
        return self.folder / f"{agent_id}.json"


def summary(lease: WorktreeLease, changes: list[BranchChange]) -> WorktreeSummary:
    """The event's summary of a branch's changes."""
    files = tuple(WorktreeFileStat(c.path, c.status, c.added, c.removed) for c in changes)
    return WorktreeSummary(
        lease.path,
        lease.branch,
        lease.base_commit,
        files,
        sum(f.added for f in files),
        sum(f.removed for f in files),
    )


def summary_text(lease: WorktreeLease, worktree: WorktreeSummary) -> str:
    """What the model is told of the worktree after the agent's report."""
    if not worktree.files:
        return (
            f"[worktree: the agent changed no file; its worktree {lease.path} (branch "
            f"{lease.branch}) is left for the user to discard]"
        )
    lines = [
        f"[worktree: branch {lease.branch} at {lease.path} changed {len(worktree.files)} "
        f"file(s), +{worktree.added} -{worktree.removed}:"
    ]
    marks = {"added": "A", "modified": "M", "deleted": "D"}
    lines += [f"  {marks[f.status]} {f.path} (+{f.added} -{f.removed})" for f in worktree.files]
    lines.append(
        "These changes are NOT in the user's working tree: the user reviews them and merges "
        "or discards them. Do not redo them there.]"
    )
    return "\n".join(lines)


def isolated_context(ctx: ToolContext, lease: WorktreeLease) -> ToolContext:
    """The tools' context for an agent in `lease`'s worktree: its cwd, and workspace roots
    moved into the worktree (roots outside the repository are left out), written on disk
    (the editor shows the user's tree, not this one), with no checkpoints (a rewind of the
    user's tree leaves the worktree alone) and no editor diagnostics."""
    top = Path(os.path.realpath(lease.repo))
    roots = [
        Path(lease.path) / root.relative_to(top)
        for root in ctx.workspace.roots
        if root == top or root.is_relative_to(top)
    ]
    return replace(
        ctx,
        workspace=WorkspaceView(roots or [lease.cwd]),
        read_cache=FileReadCache(),
        cwd=lease.cwd,
        checkpoints=NoCheckpoints(),
        diagnostics_wait=0.0,
    )


def worktree_note(lease: WorktreeLease) -> str:
    """What an isolated agent is told of where it works."""
    return (
        f"<worktree>You work in your own git worktree, {lease.cwd}, on the branch "
        f"{lease.branch}: a checkout of the repository's last commit ({lease.base_commit[:12]}), "
        "without the user's uncommitted changes. Change files only there. Your changes are "
        "committed on the branch when you finish, and the user merges or discards them; "
        "do not commit, merge or push yourself.</worktree>"
    )
