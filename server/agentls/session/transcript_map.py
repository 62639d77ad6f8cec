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

The map is saved in the session's folder (`transcript-map.json`) with a digest of the
bytes it ends on, so the next resume maps only what was appended since; a map that does
not fit the file (cut, replaced, edited by hand) is ignored and made again.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from agentls.messages import Message, ToolResultBlock
from agentls.pairing import repair_pairing
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
)
from agentls.session.store import LoadedSession, SessionMeta, read_meta
from agentls.workspace.view import write_atomically

log = logging.getLogger(__name__)
# How `Transcript.write` lays out a message line: the type and turn first, the copy flag
# and the time stamp last.
MESSAGE_HEAD = b'{"type": "message", "turnId": '
BODY_KEY = b', "message": '
NULL_TURN = b"null" + BODY_KEY
TS_KEY = b', "ts": '
COPY_KEY = b', "copy": true'
TAIL_BYTES = 40
# The saved map's format, and how many bytes before its end tie it to the file.
MAP_VERSION = 1
CHECK_BYTES = 256
# Records the fold has no use for, known by how the writer starts them.
SKIPPED_HEADS = (b'{"type": "turn", ', b'{"type": "turn_start", ')


@dataclass(slots=True)
class TranscriptMap:
    """Byte offsets of a transcript's message lines, folded as `loaded_from` folds them."""

    head: SessionStarted
    # How much of the file is mapped: the end of its last complete line.
    size: int = 0
    history: list[int] = field(default_factory=list)
    display: list[int] = field(default_factory=list)
    display_turns: list[str | None] = field(default_factory=list)
    # Where the session state was last saved (None: the empty state).
    state_at: int | None = None

    def add_message(self, offset: int, turn_id: str | None, copy: bool) -> None:
        self.history.append(offset)
        if not copy:
            self.display.append(offset)
            self.display_turns.append(turn_id)

    def add_record(self, record: TranscriptRecord, offset: int) -> None:
        if isinstance(record, CompactBoundary):
            self.history = []
        elif isinstance(record, HistoryCleared):
            self.history, self.display, self.display_turns = [], [], []
            self.state_at = None
        elif isinstance(record, StateSaved):
            self.state_at = offset
        elif isinstance(record, Rewound) and record.conversation:
            self.history = []
            turns = self.display_turns
            cut = turns.index(record.turn_id) if record.turn_id in turns else len(turns)
            del self.display[cut:], self.display_turns[cut:]


def map_transcript(path: Path, known: TranscriptMap | None = None) -> TranscriptMap:
    """One pass over a transcript, or over what follows the part `known` maps already;
    ValueError when it is not a transcript."""
    with path.open("rb") as handle:
        if known is None:
            first = handle.readline()
            head = _parsed(first, path, 1)
            if not isinstance(head, SessionStarted):
                raise ValueError(f"{path} is not an agentls transcript")
            known = TranscriptMap(head, len(first))
        handle.seek(known.size)
        _map_lines(handle, path, known)
    return known


def _map_lines(handle: BinaryIO, path: Path, found: TranscriptMap) -> None:
    offset = found.size
    for line in handle:
        start, offset = offset, offset + len(line)
        if line.endswith(b"\n"):
            found.size = offset
        if line.startswith(SKIPPED_HEADS):
            continue
        shape = _message_shape(line)
        if shape is not None:
            found.add_message(start, *shape)
            continue
        record = _parsed(line, path, start)
        if isinstance(record, MessageRecord):
            found.add_message(start, record.turn_id, record.copy)
        elif record is not None:
            found.add_record(record, start)


def mapped(path: Path) -> TranscriptMap:
    """The transcript's map: the saved one, brought up to date with what was appended
    since (the whole file is mapped when there is none, or it does not fit the file)."""
    saved = _read_saved(path)
    saved_size = saved.size if saved is not None else None
    found = map_transcript(path, saved)
    if found.size != saved_size:
        _save(path, found)
    return found


def saved_map_path(transcript: Path) -> Path:
    """Where a transcript's map is kept: in the session's own folder."""
    return transcript.with_suffix("") / "transcript-map.json"


def _save(path: Path, found: TranscriptMap) -> None:
    turn_ids = list(dict.fromkeys(t for t in found.display_turns if t is not None))
    number = {t: n for n, t in enumerate(turn_ids)}
    body = {
        "version": MAP_VERSION,
        "size": found.size,
        "check": _check(path, found.size),
        "history": found.history,
        "display": found.display,
        "turnIds": turn_ids,
        "turns": [-1 if t is None else number[t] for t in found.display_turns],
        "stateAt": found.state_at,
    }
    try:
        write_atomically(saved_map_path(path), json.dumps(body, separators=(",", ":")))
    except OSError as exc:
        log.warning("%s cannot be written: %s", saved_map_path(path), exc)


def _read_saved(path: Path) -> TranscriptMap | None:
    """The saved map if it maps the start of this very file; else None (mapped afresh)."""
    try:
        body = json.loads(saved_map_path(path).read_text(encoding="utf-8"))
        if body["version"] != MAP_VERSION or body["check"] != _check(path, body["size"]):
            return None
        with path.open("rb") as handle:
            head = _parsed(handle.readline(), path, 0)
        if not isinstance(head, SessionStarted):
            return None
        turn_ids = [str(t) for t in body["turnIds"]]
        return TranscriptMap(
            head,
            int(body["size"]),
            [int(n) for n in body["history"]],
            [int(n) for n in body["display"]],
            [None if n < 0 else turn_ids[n] for n in body["turns"]],
            None if body["stateAt"] is None else int(body["stateAt"]),
        )
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None


def _check(path: Path, size: int) -> str | None:
    """A digest of the bytes just before `size`: a map fits a file that still has them."""
    if not isinstance(size, int) or size <= 0:
        return None
    with path.open("rb") as handle:
        if handle.seek(0, 2) < size:
            return None
        handle.seek(max(0, size - CHECK_BYTES))
        return hashlib.sha256(handle.read(min(size, CHECK_BYTES))).hexdigest()


def load_tail(path: Path, limit: int) -> LoadedSession:
    """The session as `load_transcript` gives it, but with only the last `limit` messages
    of the display parsed; `display_start` says where they begin."""
    found = mapped(path)
    with path.open("rb") as handle:
        history = [m for m in read_messages(handle, found.history, path) if m is not None]
        shown, start = _page(handle, found.display, len(found.display), limit, path)
        state = _state_at(handle, found.state_at, path)
    repaired = repair_pairing(history)
    known = {m.id for m in history}
    added = [m for m in repaired if m.id not in known]
    turns = found.display_turns[start:]
    firsts = first_of_turn(found.display_turns)[start:]
    kept = [(m, t) for m, t in zip(shown, turns, strict=True) if m is not None]
    return LoadedSession(
        _meta(path, found.head),
        repaired,
        [m for m, _ in kept] + added,
        state,
        added,
        dict(found.head.settings),
        [t for _, t in kept] + [None] * len(added),
        start,
        turn_starts(shown, turns, firsts),
    )


def display_page(path: Path, before: int | None, limit: int) -> tuple[DisplayHistory, int]:
    """Up to `limit` messages of the display that come before position `before` (the end
    when None), oldest first, and the position of the first one."""
    found = mapped(path)
    end = len(found.display) if before is None else min(before, len(found.display))
    with path.open("rb") as handle:
        page, start = _page(handle, found.display, end, limit, path)
    turns = found.display_turns[start : start + len(page)]
    firsts = first_of_turn(found.display_turns)[start : start + len(page)]
    messages = [m for m in page if m is not None]
    return DisplayHistory(messages, turn_starts(page, turns, firsts)), start


def read_messages(handle: BinaryIO, offsets: Sequence[int], path: Path) -> list[Message | None]:
    """The messages on the lines at `offsets` (None for a line that cannot be read)."""
    messages: list[Message | None] = []
    for offset in offsets:
        handle.seek(offset)
        record = _parsed(handle.readline(), path, offset)
        messages.append(record.message if isinstance(record, MessageRecord) else None)
    return messages


def _page(
    handle: BinaryIO, offsets: list[int], end: int, limit: int, path: Path
) -> tuple[list[Message | None], int]:
    """The messages at `offsets[end - limit:end]` and where they start; a page that would
    start with tool results starts one message earlier, with the calls they answer."""
    start = max(0, end - limit)
    page = read_messages(handle, offsets[start:end], path)
    while start > 0 and page and _answers_calls(page[0]):
        start -= 1
        page = read_messages(handle, offsets[start : start + 1], path) + page
    return page, start


def _answers_calls(message: Message | None) -> bool:
    return (
        message is not None
        and message.role == "user"
        and any(isinstance(b, ToolResultBlock) for b in message.content)
    )


def _state_at(handle: BinaryIO, offset: int | None, path: Path) -> StateSaved:
    if offset is None:
        return StateSaved()
    handle.seek(offset)
    record = _parsed(handle.readline(), path, offset)
    return record if isinstance(record, StateSaved) else StateSaved()


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
        log.warning("%s (byte %d): torn record skipped", path, where)
        return None
    if not isinstance(data, dict):
        return None
    try:
        return record_from_json(data)
    except (KeyError, TypeError, ValueError) as exc:
        kind = data.get("type")
        log.warning("%s (byte %d): an unreadable %s record was skipped: %s", path, where, kind, exc)
        return None


def _meta(path: Path, head: SessionStarted) -> SessionMeta:
    return read_meta(path) or SessionMeta(
        head.session_id or path.stem, head.cwd, provider=head.provider, model=head.model
    )
