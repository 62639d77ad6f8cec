"""The values that describe a tool call to everyone who shows or records it: its kind, the
places it touches, the change it proposes, the plan it left. A leaf, so events, the
transcript and the front ends can name them without importing the Tool seam."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]


@dataclass(frozen=True, slots=True)
class Location:
    path: str
    line: int | None = None


@dataclass(frozen=True, slots=True)
class FileDiff:
    path: str
    old_text: str | None
    new_text: str


PlanStatus = Literal["pending", "in_progress", "completed"]
PlanPriority = Literal["high", "medium", "low"]


@dataclass(frozen=True, slots=True)
class PlanEntry:
    """One item of the model's plan (TodoWrite), as clients show it."""

    content: str
    status: PlanStatus
    priority: PlanPriority = "medium"
