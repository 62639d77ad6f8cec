"""Path confinement: file tools stay inside the workspace roots (plus configured extra dirs)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path


class PathOutsideWorkspace(Exception):
    """The path leaves every workspace root (through `..`, an absolute path or a symlink)."""


class PathPolicy:
    """Resolves model-given paths against cwd and refuses those that leave the roots."""

    def __init__(self, roots: Sequence[Path]) -> None:
        if not roots:
            raise ValueError("at least one workspace root is required")
        self.roots: tuple[Path, ...] = tuple(Path(os.path.realpath(r)) for r in roots)

    def contains(self, path: Path) -> bool:
        """True when the fully resolved `path` lies inside a root."""
        real = Path(os.path.realpath(path))
        return any(real == root or real.is_relative_to(root) for root in self.roots)

    def resolve(self, raw: str, cwd: Path) -> Path:
        """An absolute, symlink-free path for `raw`, or PathOutsideWorkspace."""
        if not raw or "\x00" in raw:
            raise PathOutsideWorkspace(f"invalid path {raw!r}")
        candidate = Path(os.path.expanduser(raw)) if raw.startswith("~") else Path(raw)
        if not candidate.is_absolute():
            candidate = cwd / candidate
        real = Path(os.path.realpath(candidate))
        if not any(real == root or real.is_relative_to(root) for root in self.roots):
            roots = ", ".join(str(r) for r in self.roots)
            raise PathOutsideWorkspace(
                f"{raw} is outside the workspace ({roots}); file tools may only touch "
                "files inside the workspace roots"
            )
        return real
