"""Which files a search looks at: glob patterns and ripgrep's ignore rules, in Python.

Glob and the Python Grep backend share these, so they agree with ripgrep on hidden files,
.gitignore/.ignore/.rgignore files and VCS directories.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

VCS_DIRS = frozenset({".git", ".hg", ".svn", ".bzr", ".jj", "_darcs"})
# Same precedence as ripgrep: an .rgignore beats an .ignore beats a .gitignore, at any depth.
IGNORE_FILES = (".rgignore", ".ignore", ".gitignore")


def _glob_class(pattern: str, start: int) -> tuple[str, int] | None:
    first = start + 1
    if pattern[first : first + 1] in ("!", "^"):
        first += 1
    # The first member may be `]` itself, as in `[]a]`.
    end = pattern.find("]", first + 1)
    if end < 0:
        return None
    body = pattern[start + 1 : end].replace("\\", "\\\\").replace("[", "\\[")
    if body.startswith(("!", "^")):
        # A negated class still never matches the separator.
        return "[^" + body[1:] + "/]", end + 1
    return "[" + body + "]", end + 1


def _glob_braces(pattern: str, start: int) -> tuple[str, int] | None:
    depth = 0
    for end in range(start, len(pattern)):
        depth += {"{": 1, "}": -1}.get(pattern[end], 0)
        if depth == 0:
            alternatives = _split_top_level(pattern[start + 1 : end])
            return "(?:" + "|".join(glob_regex(a) for a in alternatives) + ")", end + 1
    return None


def _split_top_level(body: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current = ""
    for char in body:
        depth += {"{": 1, "}": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current]


def _glob_stars(pattern: str, i: int) -> tuple[str, int]:
    if not pattern.startswith("**", i):
        return "[^/]*", i + 1
    after = i + 2
    whole_segment = (i == 0 or pattern[i - 1] == "/") and (
        after == len(pattern) or pattern[after] == "/"
    )
    if not whole_segment:
        return "[^/]*", after
    if after == len(pattern):
        return ".*", after
    return "(?:[^/]*/)*", after + 1


def glob_regex(pattern: str) -> str:
    """A regex source for a glob: `*` and `?` stay within a segment, `**/` spans segments,
    `[...]` classes and `{a,b}` alternatives as ripgrep's globs have them."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        piece: tuple[str, int] | None = None
        if char == "*":
            piece = _glob_stars(pattern, i)
        elif char == "?":
            piece = "[^/]", i + 1
        elif char == "[":
            piece = _glob_class(pattern, i)
        elif char == "{":
            piece = _glob_braces(pattern, i)
        elif char == "\\" and i + 1 < len(pattern):
            piece = re.escape(pattern[i + 1]), i + 2
        text, i = piece or (re.escape(char), i + 1)
        out.append(text)
    return "".join(out)


def _has_magic(segment: str) -> bool:
    return any(char in segment for char in "*?[{")


def split_glob(pattern: str) -> tuple[str, str]:
    """The pattern's literal leading directories, and the part that needs matching."""
    parts = pattern.split("/")
    literal: list[str] = []
    for part in parts[:-1]:
        if _has_magic(part):
            break
        literal.append(part)
    prefix = "/".join(literal)
    if pattern.startswith("/") and prefix == "":
        prefix = "/"
    return prefix, "/".join(parts[len(literal) :])


def walk_files(
    root: Path, enter: Callable[[Path, int], bool], keep: Callable[[Path], bool]
) -> Iterator[Path]:
    """The regular files under `root` that `keep` accepts, in the directories `enter` lets
    the walk into (given each one's depth below `root`, counting from 1). Symlinks are
    never followed: a link to a directory could loop or leave the workspace."""
    stack: list[tuple[Path, int]] = [(root, 0)]
    while stack:
        directory, depth = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            path = Path(entry.path)
            if entry.is_dir(follow_symlinks=False):
                if enter(path, depth + 1):
                    stack.append((path, depth + 1))
            elif entry.is_file(follow_symlinks=False) and keep(path):
                yield path


def glob_walk(base: Path, matcher: re.Pattern[str], max_depth: int | None) -> list[Path]:
    """Files under `base` whose relative path matches, skipping VCS dirs and symlinked dirs."""

    def enter(directory: Path, depth: int) -> bool:
        return directory.name not in VCS_DIRS and (max_depth is None or depth <= max_depth)

    def keep(path: Path) -> bool:
        return matcher.fullmatch(path.relative_to(base).as_posix()) is not None

    return list(walk_files(base, enter, keep))


def newest_first(paths: list[Path]) -> list[Path]:
    """`paths` by modification time, newest first (then by name, for a stable order)."""

    def key(path: Path) -> tuple[float, str]:
        try:
            return -path.stat().st_mtime, path.as_posix()
        except OSError:
            return 0.0, path.as_posix()

    return sorted(paths, key=key)


@dataclass(frozen=True, slots=True)
class _IgnorePattern:
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool

    def matches(self, relative: str, is_dir: bool) -> bool:
        return (is_dir or not self.dir_only) and self.regex.fullmatch(relative) is not None


def parse_ignore_line(line: str) -> _IgnorePattern | None:
    """One gitignore-style line as a pattern, or None for blanks and comments."""
    line = line.rstrip("\r").rstrip(" ")
    if not line or line.startswith("#"):
        return None
    negated = line.startswith("!")
    if negated or line.startswith(("\\!", "\\#")):
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    body = glob_regex(line.lstrip("/"))
    return _IgnorePattern(re.compile(body if anchored else "(?:.*/)?" + body), negated, dir_only)


def _last_verdict(patterns: list[_IgnorePattern], relative: str, is_dir: bool) -> bool | None:
    """True when ignored, False when re-included by a `!` line, None when no line matches."""
    for pattern in reversed(patterns):
        if pattern.matches(relative, is_dir):
            return not pattern.negated
    return None


@dataclass(frozen=True, slots=True)
class _IgnoreFile:
    # The directory holding the file, with a trailing slash, to cut relative paths from.
    prefix: str
    patterns: list[_IgnorePattern]

    def verdict(self, path: str, is_dir: bool) -> bool | None:
        return _last_verdict(self.patterns, path[len(self.prefix) :], is_dir)


def _read_ignore_file(path: Path) -> list[_IgnorePattern]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    parsed = (parse_ignore_line(line) for line in text.split("\n"))
    return [pattern for pattern in parsed if pattern is not None]


class FileFilter:
    """Which files a search visits: ripgrep's rules for globs, ignore files and dotfiles."""

    def __init__(self, root: Path, glob: str | None) -> None:
        self.root = root
        self._override = parse_ignore_line(glob) if glob else None
        self._by_name: dict[Path, dict[str, list[_IgnoreFile]]] = {}
        self._governing: dict[Path, list[_IgnoreFile]] = {}

    def _ignore_files_by_name(self, directory: Path) -> dict[str, list[_IgnoreFile]]:
        """For each ignore-file name, the files of that name in `directory` and above it."""
        if directory not in self._by_name:
            parent = directory.parent
            inherited = {} if parent == directory else self._ignore_files_by_name(parent)
            prefix = str(directory).rstrip("/") + "/"
            found: dict[str, list[_IgnoreFile]] = {}
            for name in IGNORE_FILES:
                patterns = _read_ignore_file(directory / name)
                own = [_IgnoreFile(prefix, patterns)] if patterns else []
                found[name] = own + inherited.get(name, [])
            self._by_name[directory] = found
        return self._by_name[directory]

    def _governing_files(self, directory: Path) -> list[_IgnoreFile]:
        """The ignore files that rule on entries of `directory`, in ripgrep's order."""
        if directory not in self._governing:
            by_name = self._ignore_files_by_name(directory)
            self._governing[directory] = [f for name in IGNORE_FILES for f in by_name[name]]
        return self._governing[directory]

    def _override_verdict(self, path: Path, is_dir: bool) -> bool | None:
        glob = self._override
        if glob is None:
            return None
        if glob.matches(path.relative_to(self.root).as_posix(), is_dir):
            return not glob.negated
        # A positive glob rules out every file it does not match, but no directory.
        return False if not glob.negated and not is_dir else None

    def _ignore_verdict(self, path: Path, is_dir: bool) -> bool | None:
        text = str(path)
        for ignore_file in self._governing_files(path.parent):
            verdict = ignore_file.verdict(text, is_dir)
            if verdict is not None:
                return verdict
        return None

    def include(self, path: Path, is_dir: bool) -> bool:
        """Whether the walk visits `path` (a child of an included directory)."""
        override = self._override_verdict(path, is_dir)
        if override is not None:
            return override
        ignored = self._ignore_verdict(path, is_dir)
        if ignored is not None:
            return not ignored
        return not path.name.startswith(".")

    def reaches(self, path: Path) -> bool:
        """Whether a walk from the root would visit the file at `path`."""
        parents = path.relative_to(self.root).parents
        directories = [self.root / parent for parent in reversed(parents) if str(parent) != "."]
        return all(self.include(d, True) for d in directories) and self.include(path, False)

    def walk(self) -> Iterator[Path]:
        """Every regular file under the root the filter lets through (symlinks not followed)."""
        return walk_files(
            self.root, lambda directory, _depth: self.include(directory, True), self.include_file
        )

    def include_file(self, path: Path) -> bool:
        return self.include(path, False)
