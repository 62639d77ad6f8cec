"""Append-only JSONL transcripts, one file per session, flushed after every record.

A record is written whole with one `write` and flushed, so a daemon killed with SIGKILL
loses at most the record it was writing; on load such a torn last line is skipped (with a
warning in the log) and a tool call left without its result is paired with an
"interrupted" one. Reopened for appending, the file loses that torn line first, so the
next record starts on a line of its own.

The records are the typed values of `session.records`: the session head (first line),
messages, turn ends, session state, and compaction boundaries, after which the messages
the model sees are written again (`copy`), so a resume reads only what follows the last one
(`transcript_map` finds it without parsing the messages before it). Beside each transcript,
`<id>.meta.json` holds what `agent/listSessions` shows (cached for all in `index.py`).
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from agentls.events import Compaction
from agentls.messages import Message, is_id
from agentls.pairing import repair_pairing
from agentls.redact import Masker
from agentls.session.display import DisplayHistory, first_of_turn, turn_starts
from agentls.session.records import (
    CompactBoundary,
    HistoryCleared,
    MessageRecord,
    Rewound,
    SessionStarted,
    StateSaved,
    TranscriptRecord,
    record_from_json,
    record_to_json,
)
from agentls.usage import Usage
from agentls.workspace.view import write_atomically

log = logging.getLogger(__name__)
TITLE_LENGTH = 80
# How much of a transcript's end is read at a time when looking for its last newline.
TAIL_BLOCK = 65536


class Transcript:
    """One session's transcript file and its listing entry: the only writer of records."""

    def __init__(self, path: Path, meta: SessionMeta, masker: Masker | None = None) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        # A record appended after a line a crash tore would be glued to it and lost too.
        cut = cut_torn_tail(path)
        if cut:
            log.warning("%s: a last line torn by a crash (%d bytes) was cut off", path, cut)
        self.path = path
        self.meta = meta
        self._masker = masker or Masker()
        # A lone surrogate (which JSON allows in a string) is written as its backslash
        # escape (`\ud800`), so no input can make a record unwritable; it reads back the same.
        self._handle: IO[str] | None = path.open("a", encoding="utf-8", errors="backslashreplace")

    @property
    def meta_path(self) -> Path:
        return meta_path(self.path)

    @property
    def spill_dir(self) -> Path:
        """Where the session's oversized tool results are written (readable by Read)."""
        return self.path.with_suffix("") / "tool-results"

    def write(self, record: TranscriptRecord) -> None:
        """Write one record as a line, stamped with the time, and flush it."""
        if self._handle is None:
            return
        body = {**record_to_json(record), "ts": round(time.time(), 3)}
        self._handle.write(self._masker.mask(json.dumps(body, ensure_ascii=False)) + "\n")
        self._handle.flush()

    def record_message(self, message: Message, turn_id: str | None) -> None:
        """The loop's Journal seam: persist one complete message of the history."""
        self.write(MessageRecord(message, turn_id))

    def record_compaction(
        self, history: Sequence[Message], event: Compaction, steps: Sequence[str]
    ) -> None:
        """A compaction: the boundary, then the whole history the model sees from now on."""
        self.write(
            CompactBoundary(event.trigger, event.tokens_before, event.tokens_after, tuple(steps))
        )
        for message in history:
            self.write(MessageRecord(message, None, copy=True))

    def record_rewind(self, record: Rewound, history: Sequence[Message]) -> None:
        """A rewind; after one of the conversation, the history the model sees from now on."""
        self.write(record)
        if record.conversation:
            for message in history:
                self.write(MessageRecord(message, None, copy=True))

    def touch(
        self,
        *,
        title: str | None = None,
        turn_done: bool = False,
        spent: Usage | None = None,
        cost: float | None = None,
    ) -> None:
        """Update the listing entry (title, last activity, turn count, what was spent)."""
        meta = self.meta
        if title and not meta.title:
            meta.title = title
        meta.updated_at = time.time()
        if turn_done:
            meta.turns += 1
        if spent is not None:
            meta.input_tokens += spent.input_tokens + spent.cache_read_tokens
            meta.input_tokens += spent.cache_write_tokens
            meta.output_tokens += spent.output_tokens
        if cost is not None:
            meta.cost_usd = round((meta.cost_usd or 0.0) + cost, 6)
        write_meta(self.meta_path, meta)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


@dataclass(slots=True)
class SessionMeta:
    session_id: str
    cwd: str
    title: str = ""
    created_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)
    turns: int = 0
    provider: str | None = None
    model: str | None = None
    # What the session's turns (and their sub-agents) spent, summed.
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "sessionId": self.session_id,
            "cwd": self.cwd,
            "title": self.title,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "turns": self.turns,
            "provider": self.provider,
            "model": self.model,
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "costUsd": self.cost_usd,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SessionMeta:
        return cls(
            str(data["sessionId"]),
            str(data["cwd"]),
            str(data.get("title") or ""),
            float(data.get("createdAt") or 0),
            float(data.get("updatedAt") or 0),
            int(data.get("turns") or 0),
            data.get("provider"),
            data.get("model"),
            int(data.get("inputTokens") or 0),
            int(data.get("outputTokens") or 0),
            None if data.get("costUsd") is None else float(data["costUsd"]),
        )


def sessions_dir(home: Path) -> Path:
    return home / "sessions"


def transcript_path(home: Path, session_id: str) -> Path:
    """Where a session's transcript lives under AGENTLS_HOME (ValueError for a non-id)."""
    if not is_id(session_id, "sess"):
        raise ValueError(f"not a session id: {session_id[:80]!r}")
    return sessions_dir(home) / f"{session_id}.jsonl"


def meta_path(transcript: Path) -> Path:
    return transcript.with_suffix(".meta.json")


def write_meta(path: Path, meta: SessionMeta) -> None:
    """Replace the listing entry atomically."""
    write_atomically(path, json.dumps(meta.to_json()))


def title_from(text: str) -> str:
    """A session title: the first line of the user's first message, shortened."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= TITLE_LENGTH else line[: TITLE_LENGTH - 1] + "…"


def list_metas(home: Path) -> list[SessionMeta]:
    """Every session's listing entry, newest activity first."""
    metas = []
    for path in sessions_dir(home).glob("*.meta.json"):
        try:
            meta = SessionMeta.from_json(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("session listing %s skipped: %s", path, exc)
            continue
        # Its id names its files: a listing with another shape would point elsewhere.
        if is_id(meta.session_id, "sess"):
            metas.append(meta)
        else:
            log.warning("session listing %s skipped: its id is not a session id", path)
    metas.sort(key=lambda m: (m.updated_at, m.session_id), reverse=True)
    return metas


@dataclass(slots=True)
class LoadedSession:
    meta: SessionMeta
    history: list[Message]
    display: list[Message]
    state: StateSaved
    repaired: list[Message]
    # The session's own settings (its agent/newSession params), applied again on resume.
    overrides: dict[str, Any]
    # The turn each message of `display` belongs to (None outside a turn).
    display_turns: list[str | None] = field(default_factory=list)
    # Where `display` starts in the whole conversation (0: it is all there; more when only
    # its last page was read, see `transcript_map.load_tail`).
    display_start: int = 0
    # The user messages of `display` that began a turn: message id -> turn id.
    turn_starts: dict[str, str] = field(default_factory=dict)

    def shown(self) -> DisplayHistory:
        """The display, with the turn each user message began."""
        return DisplayHistory(self.display, self.turn_starts)


def load_transcript(path: Path) -> LoadedSession:
    """Rebuild a session from its transcript; ValueError when it is not a transcript."""
    return loaded_from(read_records(path), path)


def loaded_from(records: Sequence[TranscriptRecord], path: Path) -> LoadedSession:
    """The session a transcript's records (read from `path`) hold; ValueError if none."""
    head = records[0] if records else None
    if not isinstance(head, SessionStarted):
        raise ValueError(f"{path} is not an agentls transcript")
    history: list[Message] = []
    display: list[Message] = []
    turns: list[str | None] = []
    state = StateSaved()
    for record in records[1:]:
        if isinstance(record, CompactBoundary):
            history = []
        elif isinstance(record, HistoryCleared):
            history, display, turns, state = [], [], [], StateSaved()
        elif isinstance(record, StateSaved):
            state = record
        elif isinstance(record, MessageRecord):
            history.append(record.message)
            if not record.copy:
                display.append(record.message)
                turns.append(record.turn_id)
        elif isinstance(record, Rewound) and record.conversation:
            # The conversation goes back to before the turn: its copies follow.
            history = []
            cut = turns.index(record.turn_id) if record.turn_id in turns else len(turns)
            del display[cut:], turns[cut:]
    repaired = repair_pairing(history)
    added = _added_messages(history, repaired)
    return LoadedSession(
        _meta(path, head),
        repaired,
        display + added,
        state,
        added,
        dict(head.settings),
        turns + [None] * len(added),
        turn_starts=turn_starts(display, turns, first_of_turn(turns)),
    )


def cut_torn_tail(path: Path) -> int:
    """Cut the last line of `path` if a crash left it without its newline (it cannot be
    read); the number of bytes cut."""
    try:
        handle = path.open("rb+")
    except FileNotFoundError:
        return 0
    with handle:
        size = handle.seek(0, os.SEEK_END)
        end = size
        while end > 0:
            start = max(0, end - TAIL_BLOCK)
            handle.seek(start)
            block = handle.read(end - start)
            if end == size and block.endswith(b"\n"):
                return 0
            newline = block.rfind(b"\n")
            if newline >= 0:
                end = start + newline + 1
                break
            end = start
        handle.truncate(end)
        return size - end


def read_records(path: Path) -> list[TranscriptRecord]:
    """Every readable record of a transcript, in order (torn and unknown lines skipped)."""
    records = []
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError:
                # A line torn by a crash mid-write: everything before it is complete.
                log.warning("%s:%d: torn record skipped", path, number)
                continue
            record = _parse(data, path, number)
            if record is not None:
                records.append(record)
    return records


def _parse(data: Any, path: Path, number: int) -> TranscriptRecord | None:
    if not isinstance(data, dict):
        return None
    try:
        return record_from_json(data)
    except (KeyError, TypeError, ValueError) as exc:
        log.warning(
            "%s:%d: an unreadable %s record was skipped: %s", path, number, data.get("type"), exc
        )
        return None


def _added_messages(before: list[Message], after: list[Message]) -> list[Message]:
    """Messages the repair appended at the end (results for calls a crash interrupted)."""
    known = {m.id for m in before}
    return [m for m in after if m.id not in known]


def read_meta(transcript: Path) -> SessionMeta | None:
    """The listing entry beside a transcript; None when it is missing or unreadable."""
    try:
        data = json.loads(meta_path(transcript).read_text(encoding="utf-8"))
        return SessionMeta.from_json(data)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _meta(path: Path, head: SessionStarted) -> SessionMeta:
    return read_meta(path) or SessionMeta(
        head.session_id or path.stem, head.cwd, provider=head.provider, model=head.model
    )
