"""Stale-write protection: the model may only change a file as it last read it."""

from __future__ import annotations

import hashlib
from pathlib import Path


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


class FileReadCache:
    """Digests of file texts as the model last saw them (read or written by the agent)."""

    def __init__(self) -> None:
        self._seen: dict[Path, str] = {}

    def record(self, path: Path, text: str) -> None:
        """Remember the text the model now knows for `path`."""
        self._seen[path] = _digest(text)

    def has_read(self, path: Path) -> bool:
        """Whether the model has seen some text of `path`."""
        return path in self._seen

    def stale_reason(self, path: Path, current_text: str) -> str | None:
        """Why writing `path` now would clobber unseen changes, or None when it is safe."""
        seen = self._seen.get(path)
        if seen is None:
            return (
                f"File {path} has not been read yet. Read it first with the Read tool "
                "before editing or overwriting it."
            )
        if seen != _digest(current_text):
            return (
                f"File {path} has been modified since it was last read (by the user or "
                "another process). Read it again with the Read tool before editing it."
            )
        return None
