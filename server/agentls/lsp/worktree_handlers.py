"""The agent/* handlers of isolated agents' worktrees: list, diff, merge or discard.

A mixin of AgentHandlers (whose dispatch table finds them by name), kept apart so the
handlers module stays small; each converts params, calls the session layer, converts back.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentls import api
from agentls.api_worktrees import MergeConflictEntry
from agentls.lsp.editor_link import editor_link
from agentls.lsp.hub import Hub
from agentls.lsp.server import AgentServer
from agentls.session.manager import SessionManager
from agentls.session.rewind import FileChange
from agentls.session.worktree_requests import (
    entry_of,
    list_worktrees,
    resolve_worktree,
    worktree_diff,
)


class WorktreeHandlers:
    manager: SessionManager
    hub: Hub

    async def list_worktrees(
        self, p: api.SessionParams, _client: AgentServer
    ) -> api.ListWorktreesResult:
        states = await list_worktrees(self.manager.get(p.session_id))
        return api.ListWorktreesResult(worktrees=[entry_of(s) for s in states])

    async def worktree_diff(
        self, p: api.WorktreeDiffParams, _client: AgentServer
    ) -> api.TurnDiffResult:
        changes = await worktree_diff(self.manager.get(p.session_id), p.agent_id)
        return diff_result(changes)

    async def resolve_worktree(
        self, p: api.ResolveWorktreeParams, client: AgentServer
    ) -> api.ResolveWorktreeResult:
        # A merge's writes go to the editor the request came from, as the agent's edits do.
        session = self.manager.attach(p.session_id, editor_link(client))
        self.hub.attach(session.id, client)
        done = await resolve_worktree(session, p.agent_id, p.action)
        return api.ResolveWorktreeResult(
            action=p.action,
            resolved=not done.conflicts,
            merged=[str(path) for path in done.merged],
            conflicts=[MergeConflictEntry(path=str(f), reason=r) for f, r in done.conflicts],
        )


def diff_result(changes: Iterable[FileChange]) -> api.TurnDiffResult:
    """Files changed, as agent/turnDiff and agent/worktreeDiff both answer them."""
    return api.TurnDiffResult(
        files=[
            api.FileChangeInfo(
                path=str(c.path),
                diff=c.diff,
                added=c.added,
                removed=c.removed,
                created=c.created,
                deleted=c.deleted,
            )
            for c in changes
        ]
    )
