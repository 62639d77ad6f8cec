"""Memory files: the user's and the project's standing instructions, read into the prompt.

Users keep instructions in `AGENTS.md` (or `CLAUDE.md`, so files written for Claude Code
work unchanged): one in AGENTLS_HOME for every project, and any number in the workspace,
where a deeper directory refines a more general one. They go into the system prompt's
dynamic part, so the rendering must be byte-stable for the same files: the prefix cache
of every request in a session depends on it.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Sequence
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

MEMORY_NAMES = ("AGENTS.md", "CLAUDE.md")
MAX_CHARS = 40_000
# UTF-8 needs at most 4 bytes a character, so this many bytes always hold MAX_CHARS + 1.
_READ_BYTES = (MAX_CHARS + 1) * 4
PREAMBLE = (
    "These are the user's and the project's standing instructions: follow them, and where "
    "they conflict, a file in a deeper directory overrides a more general one."
)


def find_memory_files(workspace_root: Path, cwd: Path, home: Path) -> list[Path]:
    """The memory files in prompt order: user-level first, then the workspace root down to cwd."""
    found: list[Path] = []
    seen: set[Path] = set()
    for directory in [home, *_directories(workspace_root, cwd)]:
        for name in MEMORY_NAMES:
            path = directory / name
            real = _real(path)
            if real is None or real in seen or read_memory(path) is None:
                continue
            seen.add(real)
            found.append(path)
    return found


def memory_prompt(files: Sequence[Path]) -> str:
    """The memory files rendered for the dynamic system prompt; "" when there are none."""
    sections = []
    for path in files:
        text = read_memory(path)
        if text is not None:
            sections.append(f"<memory path={quoteattr(str(path))}>\n{escape(text)}\n</memory>")
    if not sections:
        return ""
    return "\n\n".join([PREAMBLE, *sections])


def read_memory(path: Path) -> str | None:
    """The file's text, capped at MAX_CHARS; None if unreadable, binary, not UTF-8 or blank."""
    # Only regular files: opening a FIFO named AGENTS.md would block the daemon.
    if not path.is_file():
        return None
    try:
        with path.open("rb") as handle:
            data = handle.read(_READ_BYTES)
            complete = handle.read(1) == b""
    except OSError:
        return None
    if b"\0" in data:
        return None
    try:
        # Incremental, so a character cut by the byte limit is held back, not an error.
        text = codecs.getincrementaldecoder("utf-8")().decode(data, final=complete)
    except UnicodeDecodeError:
        return None
    text = text.strip()
    if not text:
        return None
    if len(text) > MAX_CHARS or not complete:
        return text[:MAX_CHARS] + f"\n… (truncated: only the first {MAX_CHARS} characters shown)"
    return text


def _directories(workspace_root: Path, cwd: Path) -> list[Path]:
    """The workspace root and each directory below it down to cwd; only cwd if it is outside."""
    root, here = _absolute(workspace_root), _absolute(cwd)
    if not here.is_relative_to(root):
        root, here = root.resolve(), here.resolve()
        if not here.is_relative_to(root):
            return [here]
    chain = [here, *here.parents]
    return list(reversed(chain[: chain.index(root) + 1]))


def _absolute(path: Path) -> Path:
    return Path(os.path.abspath(path))


def _real(path: Path) -> Path | None:
    try:
        return path.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
