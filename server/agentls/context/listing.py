"""A directory the user attached, as the model gets it: a listing of what is in it.

In a git work tree the listing is git's (tracked files and untracked ones git does not
ignore), so build output and dependencies stay out as the user's own tools leave them
out; elsewhere a walk skips the usual generated and vendored folders. Either way it goes
at most three levels down (a deeper folder is shown, its contents are not) and holds at
most 500 entries, with a note saying what was cut.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

MAX_DEPTH = 3
MAX_ENTRIES = 500
# Folders no one means when they attach a directory: VCS data, caches, dependencies,
# build output.
JUNK_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".cache",
        ".gradle",
        ".idea",
        ".next",
        "dist",
        "build",
        "target",
        ".eggs",
    }
)


@dataclass(frozen=True, slots=True)
class Listing:
    """What a directory holds: relative paths (folders end in `/`), and how it was read."""

    entries: list[str]
    source: str
    # Entries there were in all (more than `entries` when cut); None when uncounted.
    total: int | None
    cut: bool

    def text(self) -> str:
        """The entries one a line, with a note when the listing was cut."""
        lines = list(self.entries) or ["(empty)"]
        if self.cut:
            of = f" of {self.total:,}" if self.total is not None else ""
            lines.append(f"… (listing cut: {len(self.entries)}{of} entries shown)")
        return "\n".join(lines)


def list_directory(path: Path) -> Listing:
    """`path`'s listing: git's when it is in a work tree and git lists anything, else a walk.
    A cut listing keeps the shallowest entries."""
    files = _git_files(path)
    if files:
        entries = _entries_of_files(files)
        kept = sorted(entries, key=_depth_first)[:MAX_ENTRIES]
        return Listing(sorted(kept), "git", len(entries), len(entries) > MAX_ENTRIES)
    walked, cut = _walk(path)
    return Listing(sorted(walked), "walk", None, cut)


def _depth_first(entry: str) -> tuple[int, str]:
    return entry.rstrip("/").count("/"), entry


def _git_files(path: Path) -> list[str]:
    """The files git knows under `path` and does not ignore, relative to it ([] outside a
    work tree, or when git is missing or slow)."""
    try:
        done = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", "."],
            cwd=path,
            capture_output=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    if done.returncode != 0:
        return []
    names = done.stdout.decode("utf-8", "replace").split("\0")
    return sorted({name for name in names if name})


def _entries_of_files(files: list[str]) -> set[str]:
    """Files up to the depth limit and the folders above them; a deeper file only shows
    its folder at the limit."""
    entries: set[str] = set()
    for name in files:
        parts = name.split("/")
        for depth in range(1, min(len(parts), MAX_DEPTH + 1)):
            entries.add("/".join(parts[:depth]) + "/")
        if len(parts) <= MAX_DEPTH:
            entries.add(name)
    return entries


def _walk(root: Path) -> tuple[list[str], bool]:
    """The entries a breadth-first walk finds (junk folders and symlinked folders not
    entered, nor any below the depth limit); whether it stopped at the cap."""
    entries: list[str] = []
    level = [""]
    for _depth in range(MAX_DEPTH):
        below: list[str] = []
        for prefix in level:
            try:
                found = sorted(os.scandir(root / prefix), key=lambda e: e.name)
            except OSError:
                continue
            for entry in found:
                folder = entry.is_dir(follow_symlinks=False)
                if folder and entry.name in JUNK_DIRS:
                    continue
                if len(entries) == MAX_ENTRIES:
                    return entries, True
                name = prefix + entry.name + ("/" if folder else "")
                entries.append(name)
                if folder:
                    below.append(name)
        level = below
    return entries, False
