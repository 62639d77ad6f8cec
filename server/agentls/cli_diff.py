"""The change a permission request would make, as `agentls run` prints it before asking.

A unified diff of the request's `diff` (`oldText` → `newText`), coloured on a terminal,
cut to a size a terminal shows at once, with a note of what was cut. Standard library
only: the warm client prints it without importing the core.
"""

from __future__ import annotations

import os

from agentls.plural import counted

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Enough to read a typical edit without scrolling; a bigger change says how much more.
MAX_DIFF_LINES = 60
MAX_LINE_CHARS = 200
_RED, _GREEN, _CYAN, _BOLD, _DIM, _RESET = (
    "\x1b[31m",
    "\x1b[32m",
    "\x1b[36m",
    "\x1b[1m",
    "\x1b[2m",
    "\x1b[0m",
)


def wants_colour(out: Any) -> bool:
    """Colour on a terminal, unless NO_COLOR is set (https://no-color.org)."""
    isatty = getattr(out, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("NO_COLOR")


def diff_lines(diff: dict[str, Any], cwd: str | None = None) -> list[str]:
    """The whole unified diff (3 lines of context), headers first; a deleted file's goes to
    /dev/null and a moved file's comes from where it was (`movedFrom`)."""
    import difflib

    path = _shown(str(diff.get("path", "file")), cwd)
    # git's a/ and b/ for a path in the workspace; a path outside it stays as it is.
    after = path if path.startswith("/") else f"b/{path}"
    source = _shown(str(diff.get("movedFrom") or path), cwd)
    old, new = diff.get("oldText"), str(diff.get("newText", ""))
    before = "/dev/null" if old is None else (source if source.startswith("/") else f"a/{source}")
    if diff.get("kind") == "delete":
        after = "/dev/null"
    lines = list(
        difflib.unified_diff((old or "").splitlines(), new.splitlines(), before, after, lineterm="")
    )
    if not lines and diff.get("movedFrom"):
        return [f"rename {before} → {after} (no change to its text)"]
    return lines


def _shown(path: str, cwd: str | None) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path


def render_diff(diff: dict[str, Any], colour: bool, cwd: str | None = None) -> str:
    """The diff to print, at most MAX_DIFF_LINES lines, each at most MAX_LINE_CHARS wide."""
    return _render(diff_lines(diff, cwd), colour)


def render_diffs(diffs: list[dict[str, Any]], colour: bool, cwd: str | None = None) -> str:
    """Every file's diff of a multi-file change (apply_patch), one after the other, cut
    as one diff is."""
    return _render([line for diff in diffs for line in diff_lines(diff, cwd)], colour)


def _render(lines: list[str], colour: bool) -> str:
    if not lines:
        return _paint("(no change to the file's text)", _DIM, colour) + "\n"
    shown = [_paint(_cut(line), _colour_of(line), colour) for line in lines[:MAX_DIFF_LINES]]
    hidden = lines[MAX_DIFF_LINES:]
    if hidden:
        added = sum(1 for line in hidden if line.startswith("+"))
        removed = sum(1 for line in hidden if line.startswith("-"))
        note = (
            f"… {counted(len(hidden), 'more line')} of the diff not shown "
            f"({added:,} added, {removed:,} removed)"
        )
        shown.append(_paint(note, _DIM, colour))
    return "\n".join(shown) + "\n"


def _cut(line: str) -> str:
    if len(line) <= MAX_LINE_CHARS:
        return line
    return line[:MAX_LINE_CHARS] + f"… ({counted(len(line) - MAX_LINE_CHARS, 'more character')})"


def _colour_of(line: str) -> str | None:
    if line.startswith(("+++", "---", "rename ")):
        return _BOLD
    if line.startswith("@@"):
        return _CYAN
    if line.startswith("+"):
        return _GREEN
    if line.startswith("-"):
        return _RED
    return None


def _paint(text: str, code: str | None, colour: bool) -> str:
    return f"{code}{text}{_RESET}" if colour and code else text
