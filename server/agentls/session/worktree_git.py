"""The git commands an isolated sub-agent's worktree needs: find the repository, add a
worktree on a new branch, commit what the agent left, list what its branch changed, read
a file as a commit holds it, merge three versions of a text, and remove it all again.

Every command runs with the daemon's own GIT_* variables left out (a daemon started from
a git hook must not aim at that hook's repository) and a time limit.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

GIT_TIMEOUT_SECONDS = 60.0
# Who commits an agent's work when the user has no git identity configured.
FALLBACK_IDENTITY = {
    "GIT_AUTHOR_NAME": "agentls",
    "GIT_AUTHOR_EMAIL": "agentls@localhost",
    "GIT_COMMITTER_NAME": "agentls",
    "GIT_COMMITTER_EMAIL": "agentls@localhost",
}
ChangeStatus = Literal["added", "modified", "deleted"]


class WorktreeGitError(Exception):
    """A git command failed, timed out, or git is missing; the message says which."""


@dataclass(frozen=True, slots=True)
class Repository:
    """The repository around a directory: its top level and the directory inside it."""

    top: Path
    # The directory relative to the top level ("." at the top).
    subdir: str
    head: str


@dataclass(frozen=True, slots=True)
class BranchChange:
    """One file a branch changed against its base, as `git diff --raw --numstat` says."""

    path: str
    status: ChangeStatus
    old_mode: str
    new_mode: str
    old_blob: str | None
    new_blob: str | None
    added: int
    removed: int


async def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> bytes:
    """Run git in `cwd`; its stdout, or WorktreeGitError with its stderr."""
    code, out, err = await git_status(cwd, *args, env=env)
    if code != 0:
        raise WorktreeGitError(f"git {args[0]} failed: {err.decode(errors='replace').strip()}")
    return out


async def git_status(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[int, bytes, bytes]:
    """Run git in `cwd`: its exit code, stdout and stderr."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    try:
        process = await asyncio.create_subprocess_exec(
            "git",
            *args,
            cwd=cwd,
            env={**base, **(env or {})},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except FileNotFoundError:
        raise WorktreeGitError("git is not installed (no `git` on the PATH)") from None
    except NotADirectoryError:
        raise WorktreeGitError(f"{cwd} is not a directory") from None
    try:
        out, err = await asyncio.wait_for(process.communicate(), GIT_TIMEOUT_SECONDS)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise WorktreeGitError(f"git {args[0]} took more than {GIT_TIMEOUT_SECONDS:g} s") from None
    assert process.returncode is not None
    return process.returncode, out, err


async def find_repository(cwd: Path) -> Repository:
    """The repository `cwd` lies in, with its HEAD commit; WorktreeGitError outside one."""
    code, out, err = await git_status(cwd, "rev-parse", "--show-toplevel", "--show-prefix")
    if code != 0:
        said = err.decode(errors="replace").strip()
        raise WorktreeGitError(f"{cwd} is not in a git repository ({said})")
    lines = out.decode("utf-8", "surrogateescape").splitlines()
    top = Path(lines[0])
    prefix = lines[1].rstrip("/") if len(lines) > 1 and lines[1] else "."
    code, head, _err = await git_status(cwd, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    if code != 0:
        raise WorktreeGitError(f"the repository {top} has no commit yet to start a worktree from")
    return Repository(top, prefix, head.decode().strip())


async def add_worktree(repo: Path, path: Path, branch: str, commit: str) -> None:
    """A new worktree at `path` on a new branch `branch` at `commit`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    await git(repo, "worktree", "add", "--quiet", "-b", branch, str(path), commit)


async def commit_all(worktree: Path, message: str) -> bool:
    """Commit everything the agent left in `worktree` (ignored files aside); False when
    there was nothing to commit. Hooks are skipped: this commit is bookkeeping, not the
    user's commit (a merge brings the changes into the user's tree uncommitted)."""
    await git(worktree, "add", "--all")
    code, _out, _err = await git_status(worktree, "diff", "--cached", "--quiet")
    if code == 0:
        return False
    identity = await _identity(worktree)
    await git(worktree, "commit", "--quiet", "--no-verify", "-m", message, env=identity)
    return True


async def _identity(worktree: Path) -> dict[str, str]:
    """No extra variables when the user has a git identity; else a fallback one."""
    code, _out, _err = await git_status(worktree, "var", "GIT_COMMITTER_IDENT")
    code_author, _o, _e = await git_status(worktree, "var", "GIT_AUTHOR_IDENT")
    return {} if code == 0 and code_author == 0 else FALLBACK_IDENTITY


async def branch_changes(worktree: Path, base: str) -> list[BranchChange]:
    """What the worktree's HEAD changed against `base`, file by file (renames as a deletion
    and an addition), with line counts (0 for binary files)."""
    raw = await git(worktree, "diff", "--raw", "-z", "--no-renames", "--no-abbrev", base, "HEAD")
    counts = await _numstat(worktree, base)
    fields = raw.decode("utf-8", "surrogateescape").split("\0")
    changes = []
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        if not meta.startswith(":"):
            continue
        old_mode, new_mode, old_blob, new_blob, letter = meta[1:].split(" ")[:5]
        status: ChangeStatus = (
            "added" if letter == "A" else "deleted" if letter == "D" else "modified"
        )
        added, removed = counts.get(path, (0, 0))
        changes.append(
            BranchChange(
                path,
                status,
                old_mode,
                new_mode,
                None if status == "added" else old_blob,
                None if status == "deleted" else new_blob,
                added,
                removed,
            )
        )
    return changes


async def _numstat(worktree: Path, base: str) -> dict[str, tuple[int, int]]:
    out = await git(worktree, "diff", "--numstat", "-z", "--no-renames", base, "HEAD")
    counts = {}
    for entry in out.decode("utf-8", "surrogateescape").split("\0"):
        parts = entry.split("\t", 2)
        if len(parts) == 3:
            added, removed, path = parts
            counts[path] = (
                int(added) if added.isdigit() else 0,
                int(removed) if removed.isdigit() else 0,
            )
    return counts


async def blob_bytes(repo: Path, blob: str | None, path: str) -> bytes | None:
    """A blob's content as a checkout of `path` would write it (its filters applied)."""
    if blob is None:
        return None
    return await git(repo, "cat-file", "--filters", f"--path={path}", blob)


async def merge_texts(folder: Path, ours: bytes, base: bytes, theirs: bytes) -> bytes | None:
    """`git merge-file` of three versions of a file; None when they conflict."""
    names = []
    for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
        file = folder / name
        file.write_bytes(data)
        names.append(str(file))
    code, out, _err = await git_status(folder, "merge-file", "-p", "--quiet", *names)
    return out if code == 0 else None


async def remove_worktree(repo: Path, path: Path, branch: str) -> None:
    """The worktree and its branch gone (a worktree already deleted by hand is pruned)."""
    if path.exists():
        await git(repo, "worktree", "remove", "--force", str(path))
    await git(repo, "worktree", "prune")
    code, _out, _err = await git_status(
        repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"
    )
    if code == 0:
        await git(repo, "branch", "-D", "--quiet", branch)
