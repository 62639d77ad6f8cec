"""Apply one Update's hunks to a file's text: locate every hunk first, then splice.

A hunk is found by its old lines (context and removed), searched from where the previous
hunk ended: exactly, then ignoring trailing whitespace, then ignoring whitespace around
each line (Codex's order). Its `@@` headers narrow the search: each is a line found (the
same way) after the one before, and the hunk lies after the last. Without a header a hunk
must match in one place only; with one, the first match after it is the one meant.
`*** End of File` anchors the hunk at the end. Context lines keep the file's own text
(a tolerant match never rewrites them), and lines keep the file's line endings. Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from agentls.tools.patch_format import Hunk

# From strict to lenient; the first level that finds the lines decides.
# Exactly, then ignoring trailing whitespace, then ignoring whitespace around the line.
_LEVELS: tuple[Callable[[str], str], ...] = (lambda line: line, str.rstrip, str.strip)


class HunkFailed(ValueError):
    """A hunk that does not apply: which one and why."""

    def __init__(self, hunk: Hunk, reason: str) -> None:
        super().__init__(
            f"hunk {hunk.number} (patch line {hunk.line}, {hunk.first_lines()}): {reason}"
        )
        self.hunk = hunk


@dataclass(frozen=True, slots=True)
class _Splice:
    start: int
    hunk: Hunk


def apply_hunks(text: str, hunks: Sequence[Hunk]) -> str:
    """`text` with every hunk applied, or HunkFailed for the first that does not apply
    (then nothing is applied)."""
    lines = text.split("\n")
    ending = "\r" if lines[0].endswith("\r") else ""
    final_newline = lines[-1] == ""
    if final_newline:
        lines.pop()
    bare = [line.removesuffix("\r") for line in lines]
    splices: list[_Splice] = []
    cursor = 0
    for hunk in hunks:
        splice = _located(bare, hunk, cursor)
        splices.append(splice)
        cursor = splice.start + len(splice.hunk.old)
    if lines and not final_newline and cursor >= len(lines):
        # A hunk changed the last line: the patch's lines are whole lines, so it ends one.
        final_newline = True
        lines[-1] += ending
    out = list(lines)
    for splice in reversed(splices):
        end = splice.start + len(splice.hunk.old)
        out[splice.start : end] = _replacement(lines, splice, ending)
    return "\n".join(out) + ("\n" if final_newline and out else "")


def _located(lines: list[str], hunk: Hunk, cursor: int) -> _Splice:
    try:
        return _Splice(_locate(lines, hunk, cursor), hunk)
    except HunkFailed:
        trimmed = _without_final_blank(hunk)
        if trimmed is None:
            raise
    # A blank line the model left before the next hunk is not part of this one.
    try:
        return _Splice(_locate(lines, trimmed, cursor), trimmed)
    except HunkFailed:
        pass
    return _Splice(_locate(lines, hunk, cursor), hunk)


def _without_final_blank(hunk: Hunk) -> Hunk | None:
    if len(hunk.lines) < 2 or hunk.lines[-1] != (" ", ""):
        return None
    return replace(hunk, lines=hunk.lines[:-1])


def _locate(lines: list[str], hunk: Hunk, cursor: int) -> int:
    """Where the hunk's old lines start, searched from `cursor`; HunkFailed if not once."""
    for header in hunk.headers:
        found = _starts(lines, [header], cursor, most=1)
        if not found:
            raise HunkFailed(hunk, f"its @@ line {header!r} was not found {_after(cursor)}.")
        cursor = found[0] + 1
    old = hunk.old
    if not old:
        # Only added lines: after the headers, or else at the end of the file.
        return cursor if hunk.headers and not hunk.end_of_file else len(lines)
    if hunk.end_of_file:
        start = len(lines) - len(old)
        if start >= cursor and _starts(lines, old, start, most=1):
            return start
        raise HunkFailed(hunk, "its lines are not the last lines of the file (*** End of File).")
    # After an @@ line the first match is the one meant; without one it must be the only.
    found = _starts(lines, old, cursor, most=1 if hunk.headers else 6)
    if not found:
        raise HunkFailed(
            hunk,
            f"its context and removed lines were not found {_after(cursor)}. They must match "
            "the file's current lines, in order; read the file again and rewrite the hunk.",
        )
    if len(found) > 1:
        where = ", ".join(str(n + 1) for n in found[:5])
        raise HunkFailed(
            hunk,
            f"its lines match {len(found) if len(found) < 6 else 'more than 5'} places (lines "
            f"{where}). Add an @@ line naming the function or class it is in, or more context "
            "lines, so that it matches one place.",
        )
    return found[0]


def _starts(lines: list[str], wanted: list[str], cursor: int, most: int) -> list[int]:
    """Up to `most` starts of `wanted` in `lines` from `cursor`, at the strictest level
    that finds any."""
    last = len(lines) - len(wanted)
    for norm in _LEVELS:
        pattern = [norm(line) for line in wanted]
        starts = []
        for start in range(cursor, last + 1):
            if all(norm(lines[start + i]) == p for i, p in enumerate(pattern)):
                starts.append(start)
                if len(starts) == most:
                    return starts
        if starts:
            return starts
    return []


def _after(cursor: int) -> str:
    return "in the file" if cursor == 0 else f"after line {cursor} (where the hunk before ended)"


def _replacement(lines: list[str], splice: _Splice, ending: str) -> list[str]:
    """The hunk's new lines: context lines as the file has them, added lines in its endings."""
    out = []
    at = splice.start
    for op, text in splice.hunk.lines:
        if op == "+":
            out.append(text + ending)
            continue
        if op == " ":
            out.append(lines[at])
        at += 1
    return out
