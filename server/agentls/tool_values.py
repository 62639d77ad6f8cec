"""The values that describe a tool call to everyone who shows or records it: its kind, the
places it touches, the change it proposes, the plan it left. A leaf, so events, the
transcript and the front ends can name them without importing the Tool seam."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]
# What a multi-file change (apply_patch) does to one file.
FileChangeKind = Literal["add", "update", "delete", "move"]


@dataclass(frozen=True, slots=True)
class Location:
    path: str
    line: int | None = None


@dataclass(frozen=True, slots=True)
class FileDiff:
    path: str
    old_text: str | None
    new_text: str
    # Set for one file of a multi-file change; a delete's new_text is "", a move's `path`
    # is where the file goes and `moved_from` where it was.
    kind: FileChangeKind | None = None
    moved_from: str | None = None


def diffs_of(diff: FileDiff | None, diffs: Sequence[FileDiff] | None) -> list[FileDiff]:
    """A patch's every file, or the one file's change (none: no change)."""
    if diffs:
        return list(diffs)
    return [diff] if diff is not None else []


def changed_places(diffs: Sequence[FileDiff]) -> tuple[Location, ...]:
    """Where each change starts, to follow it in an editor: the file, and the 0-based line
    of its first changed line (0 for a new file); a deleted file is nowhere to go."""
    places = []
    for diff in diffs:
        if diff.kind != "delete":
            line = _first_changed_line(diff.old_text or "", diff.new_text)
            places.append(Location(diff.path, line))
    return tuple(places)


def _first_changed_line(old: str, new: str) -> int:
    """The first line (str.splitlines) at which the texts differ; past the end of `new`,
    its last line. Every completed edit asks it, on the event loop: the shared head is
    skipped up to its last "\n" (a line's end in both texts alike), so a big file's lines
    are not compared one by one."""
    cut = old.rfind("\n", 0, _shared_prefix(old, new)) + 1
    skipped = len(old[:cut].splitlines())
    old_rest, new_rest = old[cut:].splitlines(), new[cut:].splitlines()
    # No differing line: one side is the other plus lines at its end.
    pairs = enumerate(zip(old_rest, new_rest, strict=False), start=skipped)
    line = next((n for n, (a, b) in pairs if a != b), skipped + len(old_rest))
    return min(line, max(skipped + len(new_rest) - 1, 0))


def _shared_prefix(old: str, new: str) -> int:
    """How many characters the texts share at their start (compared by blocks, then by
    halves of the block that differs)."""
    size, block, start = min(len(old), len(new)), 4096, 0
    while start < size and old[start : start + block] == new[start : start + block]:
        start += block
    low, high = min(start, size), min(start + block, size)
    while low < high:
        middle = (low + high + 1) // 2
        if old[low:middle] == new[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


PlanStatus = Literal["pending", "in_progress", "completed"]
PlanPriority = Literal["high", "medium", "low"]


@dataclass(frozen=True, slots=True)
class PlanEntry:
    """One item of the model's plan (TodoWrite), as clients show it."""

    content: str
    status: PlanStatus
    priority: PlanPriority = "medium"
