"""A transcript read without parsing every message: where each line is, and what it is.

A resume needs the model's history (the messages after the last compaction boundary, a
rewind of the conversation or a /clear), the last session state, and a page of what the
conversation shows: not the 50,000 messages that came before. `map_transcript` passes over
the file once, reading only the start and end of each message line (its turn id and
whether it is a `copy`, which the writer puts in fixed places) and parsing the other,
small records in full; it keeps byte offsets. Only the messages the caller asks for are
then parsed. The fold is `store.loaded_from`'s, on offsets instead of messages, so what a
resume shows and continues from is the same as a full load's. A line of another shape
(an older writer, a hand edit) is parsed in full, as `read_records` would.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from agentls.messages import Message
from agentls.pairing import repair_pairing
from agentls.session.records import (
    CompactBoundary,
    HistoryCleared,
    MessageRecord,
    Rewound,
    SessionStarted,
    StateSaved,
    TranscriptRecord,
    record_from_json,
)
from agentls.session.store import LoadedSession, SessionMeta, read_meta

log = logging.getLogger(__name__)
# How `Transcript.write` lays out a message line: the type and turn first, the copy flag
# and the time stamp last.
MESSAGE_HEAD = b'{"type": "message", "turnId": '
BODY_KEY = b', "message": '
NULL_TURN = b"null" + BODY_KEY
TS_KEY = b', "ts": '
COPY_KEY = b', "copy": true'
TAIL_BYTES = 40
# Records the fold has no use for, known by how the writer starts them.
SKIPPED_HEADS = (b'{"type": "turn", ', b'{"type": "turn_start", ')


@dataclass(slots=True)
class TranscriptMap:
    """Byte offsets of a transcript's message lines, folded as `loaded_from` folds them."""

    head: SessionStarted
    history: list[int] = field(default_factory=list)
    display: list[int] = field(default_factory=list)
    display_turns: list[str | None] = field(default_factory=list)
    state: StateSaved = field(default_factory=StateSaved)

    def add_message(self, offset: int, turn_id: str | None, copy: bool) -> None:
        self.history.append(offset)
        if not copy:
            self.display.append(offset)
            self.display_turns.append(turn_id)

    def add_record(self, record: TranscriptRecord) -> None:
        if isinstance(record, CompactBoundary):
            self.history = []
        elif isinstance(record, HistoryCleared):
            self.history, self.display, self.display_turns = [], [], []
            self.state = StateSaved()
        elif isinstance(record, StateSaved):
            self.state = record
        elif isinstance(record, Rewound) and record.conversation:
            self.history = []
            turns = self.display_turns
            cut = turns.index(record.turn_id) if record.turn_id in turns else len(turns)
            del self.display[cut:], self.display_turns[cut:]


def map_transcript(path: Path) -> TranscriptMap:
    """One pass over a transcript; ValueError when it is not one."""
    with path.open("rb") as handle:
        first = handle.readline()
        head = _parsed(first, path, 1)
        if not isinstance(head, SessionStarted):
            raise ValueError(f"{path} is not an agentls transcript")
        found = TranscriptMap(head)
        offset = len(first)
        for number, line in enumerate(handle, 2):
            start, offset = offset, offset + len(line)
            if line.startswith(SKIPPED_HEADS):
                continue
            shape = _message_shape(line)
            if shape is not None:
                found.add_message(start, *shape)
                continue
            record = _parsed(line, path, number)
            if isinstance(record, MessageRecord):
                found.add_message(start, record.turn_id, record.copy)
            elif record is not None:
                found.add_record(record)
    return found


def load_tail(path: Path, limit: int) -> LoadedSession:
    """The session as `load_transcript` gives it, but with only the last `limit` messages
    of the display parsed; `display_start` says where they begin."""
    found = map_transcript(path)
    with path.open("rb") as handle:
        history = [m for m in read_messages(handle, found.history, path) if m is not None]
        start = max(0, len(found.display) - limit)
        shown = read_messages(handle, found.display[start:], path)
    repaired = repair_pairing(history)
    known = {m.id for m in history}
    added = [m for m in repaired if m.id not in known]
    turns = found.display_turns[start:]
    kept = [(m, t) for m, t in zip(shown, turns, strict=True) if m is not None]
    return LoadedSession(
        _meta(path, found.head),
        repaired,
        [m for m, _ in kept] + added,
        found.state,
        added,
        dict(found.head.settings),
        [t for _, t in kept] + [None] * len(added),
        start,
    )


def display_page(path: Path, before: int | None, limit: int) -> tuple[list[Message], int]:
    """Up to `limit` messages of the display that come before position `before` (the end
    when None), oldest first, and the position of the first one."""
    found = map_transcript(path)
    end = len(found.display) if before is None else min(before, len(found.display))
    start = max(0, end - limit)
    with path.open("rb") as handle:
        page = read_messages(handle, found.display[start:end], path)
    return [m for m in page if m is not None], start


def read_messages(handle: BinaryIO, offsets: Sequence[int], path: Path) -> list[Message | None]:
    """The messages on the lines at `offsets` (None for a line that cannot be read)."""
    messages: list[Message | None] = []
    for offset in offsets:
        handle.seek(offset)
        record = _parsed(handle.readline(), path, offset)
        messages.append(record.message if isinstance(record, MessageRecord) else None)
    return messages


def _message_shape(line: bytes) -> tuple[str | None, bool] | None:
    """A message line's turn id and copy flag, read from where the writer puts them; None
    for a line of any other shape (it is parsed in full)."""
    if not line.startswith(MESSAGE_HEAD):
        return None
    at = len(MESSAGE_HEAD)
    turn: str | None
    if line.startswith(NULL_TURN, at):
        turn = None
    elif line.startswith(b'"', at):
        close = line.find(b'"', at + 1, at + 200)
        if (
            close < 0
            or line.find(b"\\", at, close) >= 0
            or not line.startswith(BODY_KEY, close + 1)
        ):
            return None
        turn = line[at + 1 : close].decode("utf-8", "replace")
    else:
        return None
    # The time stamp is last; a copy's flag comes just before it.
    stamp = line.rfind(TS_KEY, len(line) - TAIL_BYTES)
    if stamp < 0 or not line.endswith(b"}\n"):
        return None
    if line.endswith(COPY_KEY, 0, stamp):
        return turn, True
    if line.endswith(b"}", 0, stamp):
        return turn, False
    return None


def _parsed(line: bytes, path: Path, where: int) -> TranscriptRecord | None:
    """One line's record, as `read_records` reads it (None, with a warning, if torn)."""
    if not line.strip():
        return None
    try:
        data = json.loads(line.decode("utf-8", "replace"))
    except json.JSONDecodeError:
        log.warning("%s:%d: torn record skipped", path, where)
        return None
    if not isinstance(data, dict):
        return None
    try:
        return record_from_json(data)
    except (KeyError, TypeError, ValueError) as exc:
        log.warning("%s:%d: an unreadable %s record was skipped", path, where, data.get("type"))
        log.debug("%s", exc)
        return None


def _meta(path: Path, head: SessionStarted) -> SessionMeta:
    return read_meta(path) or SessionMeta(
        head.session_id or path.stem, head.cwd, provider=head.provider, model=head.model
    )
