"""Append-only JSONL transcripts, one file per session, flushed after every record.

A record is written whole with one `write` and flushed, so a daemon killed with SIGKILL
loses at most the record it was writing.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import IO, Any

from agentls.messages import Message, message_to_dict


class Transcript:
    """One session's transcript file."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._handle: IO[str] | None = path.open("a", encoding="utf-8")

    def append(self, record: dict[str, Any]) -> None:
        """Write one record as a line, stamped with the time."""
        if self._handle is None:
            return
        line = json.dumps({**record, "ts": round(time.time(), 3)}, ensure_ascii=False)
        self._handle.write(line + "\n")
        self._handle.flush()

    def append_message(self, message: Message, turn_id: str | None) -> None:
        """Persist one complete message of the history."""
        self.append({"type": "message", "turnId": turn_id, "message": message_to_dict(message)})

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def transcript_path(home: Path, session_id: str) -> Path:
    """Where a session's transcript lives under AGENTLS_HOME."""
    return home / "sessions" / f"{session_id}.jsonl"
