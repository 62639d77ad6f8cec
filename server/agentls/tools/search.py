"""Glob and Grep: finding files by name and by content, as the editor sees them.

Grep uses ripgrep when it is installed and a pure-Python search otherwise; both feed the
same structured hits to one formatter, and both apply the same filters (hidden files,
.gitignore, binary files, the glob), so a model gets the same answer on any machine.
Open editor buffers are searched in place of their files on disk, so Grep sees the user's
unsaved text just as Read does.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentls.textfile import BinaryContent, decode_bytes
from agentls.tool_values import ToolKind
from agentls.tools.base import (
    PathTool,
    ReadOnlyTool,
    ToolContext,
    ToolError,
    ToolOutput,
    display_path,
)
from agentls.tools.file_text import resolve_in_workspace
from agentls.tools.filters import FileFilter, glob_regex, glob_walk, newest_first, split_glob
from agentls.tools.run_to_end import run_to_end
from agentls.workspace.view import OpenDocument

GLOB_LIMIT = 100
GREP_MAX_LINES = 250
GREP_MAX_CHARS = 30_000
GREP_LINE_CHARS = 500


class GlobInput(BaseModel):
    pattern: str = Field(description="The glob to match file paths against, e.g. `**/*.py`")
    path: str | None = Field(
        default=None, description="The directory to search in (default: the working directory)"
    )


class GlobTool(ReadOnlyTool[GlobInput], PathTool[GlobInput]):
    """Lists files whose paths match a glob, newest first."""

    name: str = "Glob"
    description: str = (
        "Finds files by path with a glob pattern such as `**/*.py` or `src/**/*.{ts,tsx}`. "
        "`*` and `?` match within one path segment and `**/` matches any number of "
        "directories, so `*.py` finds only files directly in the search directory. Searches "
        "the working directory, or `path`. Hidden and git-ignored files are included; .git "
        "is not. Returns matching file paths, most recently modified first, at most 100. Use "
        "Grep to search file contents."
    )
    input_model: type[BaseModel] = GlobInput
    kind: ToolKind = "search"

    def target(self, args: GlobInput) -> str:
        """The directory (or file) searched: cwd unless `path` names one."""
        return args.path or "."

    def title(self, args: GlobInput) -> str:
        """`Glob <pattern>` and the directory when one is given."""
        return f"Glob {args.pattern}" + (f" in {args.path}" if args.path else "")

    async def run(self, args: GlobInput, ctx: ToolContext) -> ToolOutput:
        """Walk the directory and list the matching files."""
        start = resolve_in_workspace(ctx, args.path or ".")
        if not start.is_dir():
            raise ToolError(f"{display_path(start, ctx.cwd)} is not a directory.")
        prefix, rest = split_glob(args.pattern)
        base = resolve_in_workspace(ctx, str(start / prefix)) if prefix else start
        matcher = re.compile(glob_regex(rest))
        max_depth = None if "**" in rest else rest.count("/")
        ordered = await asyncio.to_thread(lambda: newest_first(glob_walk(base, matcher, max_depth)))
        if not ordered:
            return ToolOutput("No files found")
        lines = [display_path(path, ctx.cwd) for path in ordered[:GLOB_LIMIT]]
        if len(ordered) <= GLOB_LIMIT:
            return ToolOutput("\n".join(lines))
        note = (
            f"(Results are truncated: showing {GLOB_LIMIT} of {len(ordered)} files, newest "
            "first. Use a more specific path or pattern.)"
        )
        return ToolOutput("\n".join([*lines, note]), truncated=True)


OutputMode = Literal["content", "files_with_matches", "count"]


class GrepInput(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    pattern: str = Field(description="The regular expression to search for (ripgrep syntax)")
    path: str | None = Field(
        default=None, description="The file or directory to search (default: working directory)"
    )
    glob: str | None = Field(
        default=None, description="Only search files matching this glob, e.g. `*.py`, `*.{ts,tsx}`"
    )
    output_mode: OutputMode = Field(
        default="files_with_matches",
        description="content: matching lines; files_with_matches: file paths; count: per file",
    )
    case_insensitive: bool = Field(default=False, alias="-i", description="Ignore case")
    line_numbers: bool | None = Field(
        default=None, alias="-n", description="Show line numbers (content mode; default true)"
    )
    after_context: int | None = Field(
        default=None, ge=0, alias="-A", description="Lines to show after each match (content)"
    )
    before_context: int | None = Field(
        default=None, ge=0, alias="-B", description="Lines to show before each match (content)"
    )
    context: int | None = Field(
        default=None, ge=0, alias="-C", description="Lines to show around each match (content)"
    )
    head_limit: int | None = Field(
        default=None, ge=1, description="Show only the first N result lines or files"
    )


@dataclass(frozen=True, slots=True)
class GrepQuery:
    """A Grep call with its defaults settled, as both backends take it."""

    pattern: str
    target: Path
    glob: str | None
    mode: OutputMode
    ignore_case: bool
    before: int
    after: int
    # The target is one file (searched whatever the filters say), not a directory to walk.
    explicit_file: bool

    @property
    def root(self) -> Path:
        return self.target.parent if self.explicit_file else self.target


@dataclass(frozen=True, slots=True)
class GrepLine:
    number: int
    text: str
    is_match: bool


@dataclass(slots=True)
class FileHits:
    """One file's matching line count, and its matching and context lines in content mode."""

    count: int = 0
    lines: list[GrepLine] = field(default_factory=list)


Hits = dict[Path, FileHits]

_POSIX_CLASSES = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "lower": "a-z",
    "upper": "A-Z",
    "space": r"\s",
    "word": r"\w",
    "xdigit": "0-9A-Fa-f",
}
_POSIX_CLASS = re.compile(r"\[:([a-z]+):\]")


def python_regex(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    """Compile a ripgrep (Rust) regex with Python's `re`, translating the common differences."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        posix = _POSIX_CLASS.match(pattern, i)
        if pattern[i] == "\\" and i + 1 < len(pattern):
            out.append(r"\Z" if pattern[i + 1] == "z" else pattern[i : i + 2])
            i += 2
        elif posix and posix.group(1) in _POSIX_CLASSES:
            out.append(_POSIX_CLASSES[posix.group(1)])
            i = posix.end()
        elif pattern.startswith("(?<", i) and pattern[i + 3 : i + 4] not in ("=", "!"):
            out.append("(?P<")
            i += 3
        else:
            out.append(pattern[i])
            i += 1
    try:
        return re.compile("".join(out), re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise ToolError(f"Invalid regular expression {pattern!r}: {exc}") from exc


def search_text(text: str, regex: re.Pattern[str], query: GrepQuery) -> FileHits | None:
    """Search one text line by line, as ripgrep does; None when nothing matches."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    matched = [i for i, line in enumerate(lines) if regex.search(line)]
    if not matched:
        return None
    if query.mode != "content":
        return FileHits(len(matched))
    shown: set[int] = set()
    for i in matched:
        shown.update(range(max(i - query.before, 0), min(i + query.after + 1, len(lines))))
    match_set = set(matched)
    return FileHits(
        len(matched), [GrepLine(i + 1, lines[i], i in match_set) for i in sorted(shown)]
    )


def _decode(data: bytes, explicit: bool) -> str | None:
    """File bytes as text, as Read shows them, or None for a binary file (ripgrep skips
    those when walking)."""
    try:
        return decode_bytes(data).text
    except BinaryContent:
        return data.decode("utf-8", errors="replace") if explicit else None


def _text_of(data: bytes) -> str:
    """A line ripgrep could not give as UTF-8, decoded as Read decodes its file."""
    try:
        return decode_bytes(data).text
    except BinaryContent:
        return data.decode("utf-8", errors="replace")


def python_search(query: GrepQuery, regex: re.Pattern[str]) -> Hits:
    """The fallback backend: walk with ripgrep's filters and search with `re`."""
    files = [query.target] if query.explicit_file else FileFilter(query.root, query.glob).walk()
    hits: Hits = {}
    for path in files:
        try:
            text = _decode(path.read_bytes(), query.explicit_file)
        except OSError:
            continue
        found = None if text is None else search_text(text, regex, query)
        if found is not None:
            hits[path] = found
    return hits


def _ripgrep_args(rg: str, query: GrepQuery) -> list[str]:
    args = [rg, "--no-config", "--no-require-git", "--no-messages", "--with-filename"]
    if query.mode == "content":
        args += ["--json", "-B", str(query.before), "-A", str(query.after)]
    else:
        args += ["--count", "--null"]
    if query.ignore_case:
        args.append("-i")
    if query.glob and not query.explicit_file:
        args += ["--glob", query.glob]
    target = query.target.name if query.explicit_file else "."
    return [*args, "-e", query.pattern, "--", target]


def _json_text(value: Mapping[str, Any]) -> str:
    if "text" in value:
        return str(value["text"])
    return _text_of(base64.b64decode(value["bytes"]))


def _json_path(value: Mapping[str, Any]) -> str:
    if "text" in value:
        return str(value["text"])
    return os.fsdecode(base64.b64decode(value["bytes"]))


def parse_ripgrep_json(output: bytes, root: Path) -> Hits:
    """Hits from `rg --json` lines (paths relative to `root`, where rg ran)."""
    hits: Hits = {}
    for raw in output.splitlines():
        event = json.loads(raw)
        if event["type"] not in ("match", "context"):
            continue
        data = event["data"]
        file_hits = hits.setdefault(root / _json_path(data["path"]), FileHits())
        is_match = event["type"] == "match"
        text = _json_text(data["lines"]).removesuffix("\n")
        file_hits.lines.append(GrepLine(data["line_number"], text, is_match))
        file_hits.count += is_match
    return hits


def parse_ripgrep_counts(output: bytes, root: Path) -> Hits:
    """Hits from `rg --count --null`: each path, a NUL, its count and a newline."""
    hits: Hits = {}
    position = 0
    while (nul := output.find(b"\x00", position)) >= 0:
        newline = output.find(b"\n", nul)
        end = len(output) if newline < 0 else newline
        hits[root / os.fsdecode(output[position:nul])] = FileHits(int(output[nul + 1 : end]))
        position = end + 1
    return hits


async def ripgrep_search(rg: str, query: GrepQuery) -> Hits:
    """The ripgrep backend, run in the search root so globs anchor where the walk starts."""
    finished = await run_to_end(_ripgrep_args(rg, query), query.root)
    # Exit 1 means no match; 2 means an error, which with no output is fatal (a bad regex).
    if finished.returncode == 2 and not finished.stdout:
        message = finished.stderr.decode("utf-8", errors="replace").strip() or "ripgrep failed"
        raise ToolError(f"Grep failed: {message}")
    parse = parse_ripgrep_json if query.mode == "content" else parse_ripgrep_counts
    return parse(finished.stdout, query.root)


def _in_scope(path: Path, query: GrepQuery) -> bool:
    if query.explicit_file:
        return path == query.target
    return path.is_relative_to(query.target)


def overlay_documents(hits: Hits, query: GrepQuery, documents: Mapping[Path, OpenDocument]) -> None:
    """Replace disk results for open files with results from their unsaved buffer text."""
    in_scope = [doc for path, doc in documents.items() if _in_scope(path, query)]
    if not in_scope:
        return
    regex = python_regex(query.pattern, query.ignore_case)
    file_filter = FileFilter(query.root, query.glob)
    for doc in in_scope:
        hits.pop(doc.path, None)
        if query.explicit_file or file_filter.reaches(doc.path):
            found = search_text(doc.text, regex, query)
            if found is not None:
                hits[doc.path] = found


def _clip(text: str) -> str:
    text = text.removesuffix("\r")
    if len(text) <= GREP_LINE_CHARS:
        return text
    return text[:GREP_LINE_CHARS] + " [... line truncated]"


def _content_lines(hits: Hits, paths: list[Path], cwd: Path, numbers: bool, sep: bool) -> list[str]:
    out: list[str] = []
    for path in paths:
        shown = display_path(path, cwd)
        previous: int | None = None
        for line in hits[path].lines:
            if sep and out and (previous is None or line.number != previous + 1):
                out.append("--")
            mark = ":" if line.is_match else "-"
            number = f"{line.number}{mark}" if numbers else ""
            out.append(f"{shown}{mark}{number}{_clip(line.text)}")
            previous = line.number
    return out


def _cap(lines: list[str], head_limit: int | None) -> tuple[list[str], int]:
    """The lines that fit the head limit and the output budget, and how many were dropped."""
    limit = min(head_limit or GREP_MAX_LINES, GREP_MAX_LINES)
    kept: list[str] = []
    size = 0
    for line in lines[:limit]:
        size += len(line) + 1
        if size > GREP_MAX_CHARS:
            break
        kept.append(line)
    return kept, len(lines) - len(kept)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def format_hits(
    hits: Hits, query: GrepQuery, cwd: Path, numbers: bool, head_limit: int | None
) -> ToolOutput:
    """The model-facing text for a search's hits, sorted by path and capped."""
    if not hits:
        return ToolOutput("No matches found")
    paths = sorted(hits, key=lambda path: path.as_posix())
    header: list[str] = []
    if query.mode == "files_with_matches":
        header = [f"Found {_plural(len(paths), 'file')}"]
        lines = [display_path(path, cwd) for path in paths]
    elif query.mode == "count":
        total = sum(hits[path].count for path in paths)
        header = [f"Found {_plural(total, 'matching line')} in {_plural(len(paths), 'file')}"]
        lines = [f"{display_path(path, cwd)}:{hits[path].count}" for path in paths]
    else:
        separate = query.before > 0 or query.after > 0
        lines = _content_lines(hits, paths, cwd, numbers, separate)
    kept, dropped = _cap(lines, head_limit)
    if dropped:
        kept.append(
            f"[... {dropped} more result lines truncated; narrow the pattern, path or glob, "
            "or set head_limit ...]"
        )
    return ToolOutput("\n".join(header + kept), truncated=dropped > 0)


def _query(args: GrepInput, target: Path) -> GrepQuery:
    context = args.context or 0
    before = args.before_context if args.before_context is not None else context
    after = args.after_context if args.after_context is not None else context
    return GrepQuery(
        pattern=args.pattern,
        target=target,
        glob=args.glob,
        mode=args.output_mode,
        ignore_case=args.case_insensitive,
        before=before,
        after=after,
        explicit_file=not target.is_dir(),
    )


class GrepTool(ReadOnlyTool[GrepInput], PathTool[GrepInput]):
    """Searches file contents (and open buffers) with a regular expression."""

    name: str = "Grep"
    description: str = (
        "Searches file contents with a regular expression (ripgrep syntax, e.g. `log.*Error`, "
        "`function\\s+\\w+`; escape literal braces: `interface\\{\\}`). Searches the working "
        "directory, or `path` (a directory or one file). Respects .gitignore and skips hidden "
        "and binary files; sees unsaved editor buffers. output_mode: `files_with_matches` "
        "(default) lists matching files; `content` shows matching lines as path:line:text, "
        "with -A/-B/-C context lines and -n line numbers (default on); `count` shows matching "
        "lines per file. glob filters files (e.g. `*.py`, `*.{ts,tsx}`); -i ignores case; "
        "head_limit keeps only the first N results. Use this rather than grep or rg in Bash."
    )
    input_model: type[BaseModel] = GrepInput
    kind: ToolKind = "search"

    def __init__(self, use_ripgrep: bool | None = None) -> None:
        """`use_ripgrep`: True requires rg, False forces the Python search, None picks."""
        self._rg = shutil.which("rg") if use_ripgrep is not False else None
        if use_ripgrep and self._rg is None:
            raise ValueError("ripgrep (rg) is not installed")

    def target(self, args: GrepInput) -> str:
        """The directory (or file) searched: cwd unless `path` names one."""
        return args.path or "."

    def title(self, args: GrepInput) -> str:
        """`Grep <pattern>` and the path when one is given."""
        return f"Grep {args.pattern}" + (f" in {args.path}" if args.path else "")

    async def _search(self, query: GrepQuery) -> Hits:
        if self._rg is not None:
            return await ripgrep_search(self._rg, query)
        regex = python_regex(query.pattern, query.ignore_case)
        return await asyncio.to_thread(python_search, query, regex)

    async def run(self, args: GrepInput, ctx: ToolContext) -> ToolOutput:
        """Search the disk, then the open buffers in place of their files."""
        target = resolve_in_workspace(ctx, args.path or ".")
        if not target.exists() and target not in ctx.workspace.documents:
            raise ToolError(f"Path does not exist: {display_path(target, ctx.cwd)}")
        query = _query(args, target)
        hits = await self._search(query) if target.exists() else {}
        overlay_documents(hits, query, ctx.workspace.documents)
        numbers = args.line_numbers if args.line_numbers is not None else True
        return format_hits(hits, query, ctx.cwd, numbers, args.head_limit)
