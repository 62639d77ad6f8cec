"""Deleting a saved session for good: its transcript, listing entry and folder (logs,
checkpoints, spilled results), and the worktrees and branches its isolated agents left in
the user's repository.

The transcript goes first: once it is gone the session is no longer listed or resumable,
so a failure later (a worktree git will not remove, a file still held) leaves leftovers
reported as warnings, never a session that is half there.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from agentls.errors import InvalidParams, UnknownSession
from agentls.messages import is_id
from agentls.session.store import meta_path, transcript_path
from agentls.session.worktree_git import WorktreeGitError
from agentls.session.worktrees import SessionWorktrees

log = logging.getLogger(__name__)


def check_deletable(home: Path, session_id: str) -> Path:
    """The transcript of a saved session to delete: -32602 (field sessionId) for an id
    that could leave the sessions folder, UnknownSession (1001) for one with no transcript."""
    if any(bad in session_id for bad in ("/", "\\", "\0", "..")):
        raise InvalidParams(
            f"sessionId {session_id[:80]!r} is not a session id", {"field": "sessionId"}
        )
    shown = repr(session_id if len(session_id) <= 80 else session_id[:80] + "…")
    if not is_id(session_id, "sess") or not transcript_path(home, session_id).is_file():
        raise UnknownSession(f"No session {shown} to delete under {home}.")
    return transcript_path(home, session_id)


async def delete_saved(transcript: Path) -> list[str]:
    """Remove a closed session's files and its agents' worktrees; the warnings of what
    could not be removed (the session itself is gone either way)."""
    folder = transcript.with_suffix("")
    leases = SessionWorktrees(folder / "worktrees").all() if folder.is_dir() else []
    warnings: list[str] = []
    for path in (transcript, meta_path(transcript)):
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            warnings.append(f"{path} was not removed: {exc}")
    for lease in leases:
        try:
            await SessionWorktrees(folder / "worktrees").discard(lease)
        except WorktreeGitError as exc:
            warnings.append(
                f"the worktree {lease.path} (branch {lease.branch}) of {lease.repo} was not "
                f"removed by git: {exc}"
            )

    def failed(_function: object, path: str, info: tuple[type, BaseException, object]) -> None:
        warnings.append(f"{path} was not removed: {info[1]}")

    if folder.is_dir():
        # `onerror` (not 3.12's `onexc`): the daemon runs on 3.11 too.
        shutil.rmtree(folder, onerror=failed)
    for warning in warnings:
        log.warning("deleting %s: %s", transcript.stem, warning)
    return warnings
