"""The session index: every session's listing entry in one file beside the transcripts.

Listing 2,000 sessions by reading 2,000 `<id>.meta.json` files costs a file open and a JSON
parse each; `sessions/index.json` holds them all, each with the stamp (inode, mtime and size)
of the file it was read from. A listing makes one `os.scandir` of the folder and compares
what it finds with the index: an entry whose file changed (a turn ended, a rename) is read
again, a transcript added by hand gets an entry (from its meta file, or from its first
line when it has none), a transcript deleted by hand loses its entry. The index is then
written back atomically when anything changed. A missing, torn or older-version index is
simply rebuilt, so nothing but the transcripts and their meta files is ever authoritative,
and any number of daemons (and `agentls sessions`) may share the folder.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentls.messages import is_id
from agentls.session.records import SessionStarted, record_from_json
from agentls.session.store import SessionMeta, sessions_dir
from agentls.workspace.view import write_atomically

log = logging.getLogger(__name__)
INDEX_NAME = "index.json"
# Bumped when an entry's shape changes: an index of another version is rebuilt.
INDEX_VERSION = 1
TRANSCRIPT_SUFFIX = ".jsonl"
META_SUFFIX = ".meta.json"
# The first line of a transcript is its head; more than this is not a transcript's head.
HEAD_LIMIT = 1 << 20


@dataclass(frozen=True, slots=True)
class _Found:
    """What one scan of the folder saw of a session: the file its entry comes from."""

    source: str  # "meta" or "head" (no meta file: the transcript's first line)
    # (inode, mtime_ns, size) of that file: an atomic replace makes a new inode, so two
    # writes within one clock tick still differ.
    stamp: tuple[int, int, int]


def index_path(home: Path) -> Path:
    return sessions_dir(home) / INDEX_NAME


@dataclass(slots=True)
class _Entry:
    """One session's listing entry and the stamp of the file it was read from."""

    source: str
    stamp: tuple[int, int, int]
    meta: SessionMeta

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "stamp": list(self.stamp), "meta": self.meta.to_json()}


class SessionIndex:
    """The index of one home's sessions, kept in memory between listings: the index file
    is parsed again only when another process rewrote it."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self._entries: dict[str, _Entry] = {}
        self._file_stamp: tuple[int, int, int] | None = None
        self._newest_first: list[SessionMeta] | None = None

    def metas(self) -> list[SessionMeta]:
        """Every session with a transcript, newest activity first (shared: not to be
        changed by the caller)."""
        folder = sessions_dir(self.home)
        found = _scan(folder)
        self._load()
        changed = False
        for session_id in set(self._entries) - set(found):
            del self._entries[session_id]
            changed = True
        for session_id, seen in found.items():
            entry = self._entries.get(session_id)
            if entry is not None and (entry.source, entry.stamp) == (seen.source, seen.stamp):
                continue
            changed = True
            fresh = _fresh_entry(folder, session_id, seen)
            if fresh is None:
                self._entries.pop(session_id, None)
            else:
                self._entries[session_id] = fresh
        if changed or self._newest_first is None:
            if changed:
                self._file_stamp = _write_index(index_path(self.home), self._entries)
            metas = [e.meta for e in self._entries.values()]
            metas.sort(key=lambda m: (m.updated_at, m.session_id), reverse=True)
            self._newest_first = metas
        return list(self._newest_first)

    def _load(self) -> None:
        """Take the index file's entries if it is not the one these came from."""
        path = index_path(self.home)
        stamp = _stamp_of(path)
        if stamp is not None and stamp == self._file_stamp:
            return
        self._entries = _read_index(path)
        self._file_stamp = stamp
        self._newest_first = None


def indexed_metas(home: Path) -> list[SessionMeta]:
    """Every session with a transcript, newest activity first, read through the index."""
    return SessionIndex(home).metas()


def _scan(folder: Path) -> dict[str, _Found]:
    """One pass over the folder: each transcript's id and the file its entry comes from."""
    transcripts: dict[str, os.DirEntry[str]] = {}
    metas: dict[str, os.DirEntry[str]] = {}
    try:
        with os.scandir(folder) as listing:
            for item in listing:
                if item.name.endswith(META_SUFFIX):
                    metas[item.name[: -len(META_SUFFIX)]] = item
                elif item.name.endswith(TRANSCRIPT_SUFFIX):
                    transcripts[item.name[: -len(TRANSCRIPT_SUFFIX)]] = item
    except FileNotFoundError:
        return {}
    found = {}
    for session_id, transcript in transcripts.items():
        if not is_id(session_id, "sess"):
            continue
        meta = metas.get(session_id)
        try:
            source = meta if meta is not None else transcript
            info = source.stat()
        except OSError:
            continue
        kind = "meta" if meta is not None else "head"
        found[session_id] = _Found(kind, (info.st_ino, info.st_mtime_ns, info.st_size))
    return found


def _fresh_entry(folder: Path, session_id: str, seen: _Found) -> _Entry | None:
    """An index entry read from the session's files (None when they cannot be read)."""
    try:
        if seen.source == "meta":
            data = json.loads((folder / f"{session_id}{META_SUFFIX}").read_text("utf-8"))
            meta = SessionMeta.from_json(data)
        else:
            meta = _meta_from_head(folder / f"{session_id}{TRANSCRIPT_SUFFIX}", seen)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("session listing %s skipped: %s", session_id, exc)
        return None
    # Its id names its files: an entry with another id would point elsewhere.
    if meta.session_id != session_id:
        log.warning("session listing %s skipped: its entry names %s", session_id, meta.session_id)
        return None
    return _Entry(seen.source, seen.stamp, meta)


def _meta_from_head(path: Path, seen: _Found) -> SessionMeta:
    """A listing entry for a transcript without a meta file: its head, its file's times."""
    with path.open("rb") as handle:
        line = handle.readline(HEAD_LIMIT)
    head = record_from_json(json.loads(line))
    if not isinstance(head, SessionStarted):
        raise ValueError("not an agentls transcript")
    when = seen.stamp[1] / 1e9
    return SessionMeta(
        head.session_id,
        head.cwd,
        created_at=when,
        updated_at=when,
        provider=head.provider,
        model=head.model,
    )


def _read_index(path: Path) -> dict[str, _Entry]:
    """The entries of the index on disk; empty (so rebuilt) when missing, torn or old."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("%s cannot be read (%s); it is rebuilt", path, exc)
        return {}
    if not isinstance(data, dict) or data.get("version") != INDEX_VERSION:
        return {}
    stored = data.get("sessions")
    entries = {}
    for session_id, item in stored.items() if isinstance(stored, dict) else ():
        entry = _entry_of(item)
        if entry is not None:
            entries[session_id] = entry
    return entries


def _entry_of(item: Any) -> _Entry | None:
    """A stored entry; None for one a hand or another version garbled (it is read again)."""
    try:
        stamp = item["stamp"]
        if item["source"] not in ("meta", "head") or len(stamp) != 3:
            return None
        return _Entry(
            item["source"],
            (int(stamp[0]), int(stamp[1]), int(stamp[2])),
            SessionMeta.from_json(item["meta"]),
        )
    except (KeyError, TypeError, ValueError):
        return None


def _write_index(path: Path, entries: dict[str, _Entry]) -> tuple[int, int, int] | None:
    """Write the index atomically; the stamp of the file written (None if it was not)."""
    try:
        body = {"version": INDEX_VERSION, "sessions": {k: e.to_json() for k, e in entries.items()}}
        write_atomically(path, json.dumps(body, ensure_ascii=False, separators=(",", ":")))
    except OSError as exc:
        # A read-only home still lists; the next listing tries again.
        log.warning("%s cannot be written: %s", path, exc)
        return None
    return _stamp_of(path)


def _stamp_of(path: Path) -> tuple[int, int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_ino, info.st_mtime_ns, info.st_size)
