"""Which files of a git work tree a shell command changed, and what they held before.

A Bash command can change any file, and nothing tells the daemon which. In a git work
tree the files worth undoing are the tracked ones and the untracked ones git does not
ignore: before and after each command they are listed (`git ls-files`), stat'ed, and the
ones whose stat changed are hashed byte for byte (`hash-object --no-filters`, so no
line-ending or attribute filter alters them) into an object store of the session's own.
That store borrows the repository's objects (alternates), so a file the repository holds
already costs nothing, and neither the work tree, the index nor the repository's object
store is written to (git may only refresh the time stamp of an object it reuses).
Comparing two snapshots gives the changed files; the first one's objects give their
content before the command.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)
# Bigger files are left out: a checkpoint is for source, not build output or data sets.
MAX_FILE_BYTES = 16 * 1024 * 1024
GIT_TIMEOUT_SECONDS = 60.0
StatKey = tuple[int, int, int, int]


class GitError(Exception):
    """A git command failed or timed out; the message has its stderr."""


class GitWatch:
    """Snapshots of one work tree's files (under `cwd`), by content id."""

    def __init__(self, cwd: Path, objects: Path, repo_objects: Path, exclude: Path) -> None:
        self.cwd = cwd
        self._objects = objects
        self._repo_objects = repo_objects
        # The daemon's own folder, when it lies inside the work tree.
        self._exclude = exclude
        # path -> (stat when hashed, object id): only files whose stat moved are hashed again.
        self._hashed: dict[str, tuple[StatKey, str]] = {}

    @classmethod
    async def find(cls, cwd: Path, objects: Path, exclude: Path) -> GitWatch | None:
        """A watch of the git work tree around `cwd`; None outside one (or without git)."""
        try:
            out = await _git(cwd, ("rev-parse", "--is-inside-work-tree", "--git-common-dir"))
        except (GitError, OSError):
            return None
        lines = out.decode("utf-8", "surrogateescape").splitlines()
        if len(lines) < 2 or lines[0] != "true":
            return None
        repo_objects = (cwd / lines[1] / "objects").resolve()
        return cls(cwd, objects, repo_objects, exclude)

    async def snapshot(self) -> dict[str, str]:
        """Every watched file (relative to cwd) with its content's object id."""
        listed = await _git(
            self.cwd, ("ls-files", "-z", "--cached", "--others", "--exclude-standard")
        )
        names = {os.fsdecode(n) for n in listed.split(b"\0") if n and b"\n" not in n}
        stats = await asyncio.to_thread(self._stat_all, names)
        stale = [n for n, key in stats.items() if self._hashed.get(n, ((), ""))[0] != key]
        if stale:
            self._objects.mkdir(parents=True, exist_ok=True)
            paths = b"".join(os.fsencode(n) + b"\n" for n in stale)
            out = await _git(
                self.cwd,
                ("hash-object", "--no-filters", "-w", "--stdin-paths"),
                paths,
                self._object_env(),
            )
            for name, oid in zip(stale, out.decode().split(), strict=True):
                self._hashed[name] = (stats[name], oid)
        return {name: self._hashed[name][1] for name in stats}

    async def contents(self, oids: list[str]) -> dict[str, bytes]:
        """The bytes each object id of a snapshot stands for, read in one git call."""
        if not oids:
            return {}
        request = "".join(f"{oid}\n" for oid in oids).encode()
        out = await _git(self.cwd, ("cat-file", "--batch"), request, self._object_env())
        found: dict[str, bytes] = {}
        at = 0
        while at < len(out):
            end = out.index(b"\n", at)
            oid, kind, *size = out[at:end].decode().split()
            if kind != "blob" or not size:
                raise GitError(f"git cat-file: object {oid} is {kind}")
            found[oid] = out[end + 1 : end + 1 + int(size[0])]
            at = end + 2 + int(size[0])
        return found

    def _object_env(self) -> dict[str, str]:
        return {
            "GIT_OBJECT_DIRECTORY": str(self._objects),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(self._repo_objects),
        }

    def _stat_all(self, names: set[str]) -> dict[str, StatKey]:
        """The regular files among `names` that are small enough, with their stat keys."""
        keys: dict[str, StatKey] = {}
        for name in names:
            path = self.cwd / name
            try:
                info = path.lstat()
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
                continue
            if path.is_relative_to(self._exclude):
                continue
            # ctime too: any write moves it, and no tool sets it back.
            keys[name] = (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino)
        return keys


def changed_files(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """The files two snapshots disagree on: changed, created or gone."""
    return sorted(
        name for name in before.keys() | after.keys() if before.get(name) != after.get(name)
    )


async def _git(
    cwd: Path, args: tuple[str, ...], stdin: bytes | None = None, env: dict[str, str] | None = None
) -> bytes:
    """Run git in `cwd` (the daemon's own GIT_* variables left out); its stdout."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    process = await asyncio.create_subprocess_exec(
        "git",
        *args,
        cwd=cwd,
        env={**base, **(env or {})},
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(stdin), GIT_TIMEOUT_SECONDS)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise GitError(f"git {args[0]} took more than {GIT_TIMEOUT_SECONDS:g} s") from None
    if process.returncode != 0:
        raise GitError(f"git {args[0]} failed: {err.decode(errors='replace').strip()}")
    return out
