"""How the file tools find a file and read its text: the workspace's path policy as tool
errors, a missing file with the names it may have meant, the editor's buffer before the
disk, and numbered lines as Read shows them.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from agentls.plural import counted
from agentls.textfile import BinaryContent, decode_bytes
from agentls.tools.base import ToolContext, ToolError, display_path
from agentls.workspace.paths import PathOutsideWorkspace

DEFAULT_READ_LIMIT = 2000
MAX_LINE_CHARS = 2000
READ_REFUSAL = "Read shows text files and images (PNG, JPEG, GIF, WebP) only."


def resolve_in_workspace(ctx: ToolContext, raw: str) -> Path:
    """Resolve a model-given path through the workspace policy, as a ToolError if refused."""
    try:
        return ctx.workspace.policy.resolve(raw, ctx.cwd)
    except PathOutsideWorkspace as exc:
        raise ToolError(str(exc)) from exc


def _similar_names(path: Path) -> list[str]:
    try:
        names = os.listdir(path.parent)
    except OSError:
        return []
    return difflib.get_close_matches(path.name, names, n=3, cutoff=0.6)


def missing_file_error(path: Path, cwd: Path) -> ToolError:
    """A 'does not exist' error that suggests similarly named files in the same directory."""
    message = f"File does not exist: {display_path(path, cwd)}."
    similar = [display_path(path.parent / name, cwd) for name in _similar_names(path)]
    if similar:
        message += " Did you mean " + " or ".join(similar) + "?"
    return ToolError(f"{message} Current working directory: {cwd}")


def disk_bytes(ctx: ToolContext, path: Path) -> bytes:
    """The bytes of a file on disk; a directory, a missing file or an OSError as a ToolError."""
    if path.is_dir():
        raise ToolError(
            f"{display_path(path, ctx.cwd)} is a directory, not a file. "
            "Use Glob, or `ls` with Bash, to list it."
        )
    if not path.exists():
        raise missing_file_error(path, ctx.cwd)
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ToolError(f"Cannot read {display_path(path, ctx.cwd)}: {exc.strerror}") from exc


def decoded(data: bytes, path: Path, cwd: Path, refusal: str) -> str:
    try:
        return decode_bytes(data).text
    except BinaryContent as exc:
        raise ToolError(f"{display_path(path, cwd)} is a binary file ({exc}). {refusal}") from exc


def read_current_text(ctx: ToolContext, path: Path, refusal: str = READ_REFUSAL) -> str:
    """The text the model would see for an existing file (buffer first), as a ToolError.

    `refusal` finishes the error for a binary file: what the calling tool handles instead.
    """
    if path in ctx.workspace.documents:
        return ctx.workspace.read_text(path)
    return decoded(disk_bytes(ctx, path), path, ctx.cwd, refusal)


def split_lines(text: str) -> list[str]:
    """Lines as an editor numbers them: split on \\n only, a final newline ends the last line."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _numbered(line_number: int, line: str) -> str:
    if len(line) > MAX_LINE_CHARS:
        line = line[:MAX_LINE_CHARS] + " [... line truncated]"
    return f"{line_number:>6}\t{line}"


def format_numbered(text: str, offset: int | None, limit: int | None) -> tuple[str, bool]:
    """`cat -n` style text for a window of lines, and whether lines were left out."""
    lines = split_lines(text)
    start = max(offset or 1, 1)
    count = limit or DEFAULT_READ_LIMIT
    if start > len(lines):
        return (
            f"(The file has {counted(len(lines), 'line')}; offset {start} is past the end.)",
            False,
        )
    window = lines[start - 1 : start - 1 + count]
    body = "\n".join(_numbered(start + i, line) for i, line in enumerate(window))
    end = start + len(window) - 1
    if end < len(lines):
        body += (
            f"\n\n(Showing lines {start}-{end} of {len(lines)}. Use offset={end + 1} to read more.)"
        )
        return body, True
    return body, False
