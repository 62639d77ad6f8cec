"""Positions in the client's encoding, and the smallest edits that turn one text into another.

LSP counts a column in the code units of the negotiated encoding: UTF-16 for VS Code,
UTF-8 for Neovim, UTF-32 (code points) for some. The core counts code points (Python
string indexes); this module converts at the edge, both ways. Edits go to the editor as
the changed ranges only, so the user's cursor, folds, marks and undo history survive.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

Encoding = Literal["utf-8", "utf-16", "utf-32"]
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
# Above this many changed lines, one replacement is cheaper than a line diff.
MAX_DIFF_LINES: Final = 5_000


def encoding_of(name: object) -> Encoding:
    """The encoding for a negotiated `positionEncoding` (UTF-16 when none was)."""
    value = getattr(name, "value", name)
    if value == "utf-8":
        return "utf-8"
    return "utf-32" if value == "utf-32" else "utf-16"


def units(text: str, encoding: Encoding) -> int:
    """How long `text` is in the encoding's code units."""
    if encoding == "utf-32" or text.isascii():
        return len(text)
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


def column_to_index(line: str, column: int, encoding: Encoding) -> int:
    """The code point index in `line` of a column counted in `encoding` (clamped to the line)."""
    if encoding == "utf-32" or line.isascii():
        return min(column, len(line))
    count = 0
    for index, char in enumerate(line):
        if count >= column:
            return index
        count += units(char, encoding)
    return len(line)


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace the text between two (line, column) positions, columns in the client's units."""

    start: tuple[int, int]
    end: tuple[int, int]
    new_text: str


def lsp_lines(text: str) -> list[str]:
    """`text` split into lines as LSP counts them, each with its line break."""
    return _LINE.findall(text)


def smallest_edits(old: str, new: str, encoding: Encoding) -> list[Edit]:
    """Non-overlapping edits, all relative to `old`, that turn it into `new`."""
    old_lines, new_lines = lsp_lines(old), lsp_lines(new)
    starts = _starts(old_lines)
    edits = []
    for lo, hi, replacement in _changed_blocks(old_lines, new_lines):
        begin, end = starts[lo], starts[hi]
        begin, end, replacement = _trim(old, begin, end, replacement)
        start = _position(old_lines, starts, begin, encoding)
        edits.append(Edit(start, _position(old_lines, starts, end, encoding), replacement))
    return edits


def _changed_blocks(old: Sequence[str], new: Sequence[str]) -> list[tuple[int, int, str]]:
    """(first old line, end old line, new text) for every run of changed lines."""
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    old_mid, new_mid = old[head : len(old) - tail], new[head : len(new) - tail]
    if not old_mid and not new_mid:
        return []
    if len(old_mid) + len(new_mid) > MAX_DIFF_LINES:
        return [(head, len(old) - tail, "".join(new_mid))]
    matcher = difflib.SequenceMatcher(None, old_mid, new_mid, autojunk=False)
    return [
        (head + i1, head + i2, "".join(new_mid[j1:j2]))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def _trim(old: str, begin: int, end: int, replacement: str) -> tuple[int, int, str]:
    """Shrink a replacement by what it shares with the old text at both ends."""
    segment = old[begin:end]
    prefix = 0
    limit = min(len(segment), len(replacement))
    while prefix < limit and segment[prefix] == replacement[prefix]:
        prefix += 1
    suffix = 0
    while (
        suffix < limit - prefix
        and segment[len(segment) - 1 - suffix] == replacement[len(replacement) - 1 - suffix]
    ):
        suffix += 1
    # Never cut between the \r and \n of one line break.
    while prefix and segment[prefix - 1] == "\r" and segment[prefix : prefix + 1] == "\n":
        prefix -= 1
    while (
        suffix
        and segment[len(segment) - suffix] == "\n"
        and (segment[len(segment) - suffix - 1 : len(segment) - suffix] == "\r")
    ):
        suffix -= 1
    return (
        begin + prefix,
        end - suffix,
        replacement[prefix : len(replacement) - suffix],
    )


def _starts(lines: Sequence[str]) -> list[int]:
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    return starts


def _position(
    lines: Sequence[str], starts: Sequence[int], offset: int, encoding: Encoding
) -> tuple[int, int]:
    """The (line, column) of a code point offset; the end of the text after a final break."""
    line = max(0, _line_of(starts, offset))
    if line >= len(lines):
        last = lines[-1] if lines else "\n"
        if last.endswith(("\n", "\r")):
            return (len(lines), 0)
        return (len(lines) - 1, units(last, encoding))
    return (line, units(lines[line][: offset - starts[line]], encoding))


def _line_of(starts: Sequence[int], offset: int) -> int:
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo
