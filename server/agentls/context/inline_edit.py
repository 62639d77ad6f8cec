"""What the model reads in an agent/inlineEdit turn: the file with the selected region
marked, and how to change it.

The user selected a region in the editor and typed an instruction; the instruction is the
turn's user text, and this block (in its `<userContext>`) gives the model the file as it
is now, numbered like Read's output, so it can Edit at once. A long file is shown around
the selection only (the model may Read the rest).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from agentls.context.editor_context import display_path
from agentls.events import InlineEditTarget
from agentls.workspace.view import Range

# Lines shown before and after the selection when the file is longer than SHOWN_LINES.
CONTEXT_LINES = 300
SHOWN_LINES = 2_000
MAX_LINE_CHARS = 2_000


@dataclass(frozen=True, slots=True)
class InlineEdit:
    """The region of an inline edit: the file (absolute, symlink-free), the range in code
    point columns, and the client's own URI and range (echoed in `turn_started`)."""

    path: Path
    range: Range
    target: InlineEditTarget


def inline_edit_block(edit: InlineEdit, text: str, cwd: Path, tools: str) -> str:
    """The `<inlineEdit>` element: the task's rules, then the file with the region marked."""
    shown = display_path(edit.path, cwd)
    first, last = edit.range.start.line + 1, edit.range.end.line + 1
    lines = f"{first}-{last}" if last != first else str(first)
    rules = (
        f"The user selected lines {lines} of {shown} in the editor (the region between the "
        "`selection starts` and `selection ends` marks below) and asks for the change in "
        "their message. Change only "
        "that region of that file, with Edit or MultiEdit; the file below counts as read, so "
        "no Read call is needed first. The user reviews each change in the editor, hunk by "
        "hunk. When you are done, answer in one short sentence. Tools in this turn: "
        f"{tools}."
    )
    # The code as it is, not XML-escaped: the model copies Edit strings from it.
    listing = _numbered(text, edit.range)
    head = f"<inlineEdit path={quoteattr(shown)} lines={quoteattr(lines)}>"
    return f"{head}\n{escape(rules)}\n<file>\n{listing}\n</file>\n</inlineEdit>"


def _numbered(text: str, region: Range) -> str:
    """The file's lines as `cat -n` numbers them, with the selection's start and end marked
    (columns 1-based, in characters); around the selection only when the file is long."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    start, end = region.start, region.end
    low, high = 0, len(lines)
    if len(lines) > SHOWN_LINES:
        low = max(0, start.line - CONTEXT_LINES)
        high = min(len(lines), end.line + 1 + CONTEXT_LINES)
    out = [f"… lines 1-{low} not shown (Read them if needed)"] if low else []
    for index in range(low, high):
        if index == start.line:
            out.append(_mark("starts", index, start.character))
        line = lines[index].removesuffix("\r")
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + " [... line truncated]"
        out.append(f"{index + 1:>6}\t{line}")
        if index == end.line:
            out.append(_mark("ends", index, end.character))
    # A region at the very end of the file (after its last newline).
    if start.line >= len(lines):
        out.append(_mark("starts", start.line, start.character))
    if end.line >= len(lines):
        out.append(_mark("ends", end.line, end.character))
    if high < len(lines):
        out.append(f"… lines {high + 1}-{len(lines)} not shown (Read them if needed)")
    return "\n".join(out)


def _mark(which: str, line: int, character: int) -> str:
    """A line of its own marking where the selection starts or ends (1-based)."""
    return f"----- selection {which} (line {line + 1}, column {character + 1}) -----"
