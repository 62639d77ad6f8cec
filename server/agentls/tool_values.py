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
        if diff.kind == "delete":
            continue
        old = (diff.old_text or "").splitlines()
        new = diff.new_text.splitlines()
        # No differing line: one side is the other plus lines at its end.
        pairs = enumerate(zip(old, new, strict=False))
        line = next((n for n, (a, b) in pairs if a != b), len(old))
        places.append(Location(diff.path, min(line, max(len(new) - 1, 0))))
    return tuple(places)


PlanStatus = Literal["pending", "in_progress", "completed"]
PlanPriority = Literal["high", "medium", "low"]


@dataclass(frozen=True, slots=True)
class PlanEntry:
    """One item of the model's plan (TodoWrite), as clients show it."""

    content: str
    status: PlanStatus
    priority: PlanPriority = "medium"
