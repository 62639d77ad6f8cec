"""Checkpoints: what each file held before the agent changed it, kept per turn outside the
project, so agent/rewind can put it back and agent/turnDiff can show what a turn did,
also after the daemon restarted.

They live in the session's folder under AGENTLS_HOME (`sessions/<id>/checkpoints/`):
`index.jsonl`, one entry per line, appended and flushed (a `before` per file and turn, an
`after` for each content the agent left, a `restored` for each content a rewind left),
and `blobs/<sha256>`, each content once. Bash's changes are found by a GitWatch.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentls.session.git_watch import GitError, GitWatch, changed_files
from agentls.session.store import cut_torn_tail
from agentls.textfile import UTF8, encode_text
from agentls.workspace.view import FileEdit, WorkspaceView, write_bytes_atomically

log = logging.getLogger(__name__)
EntryKind = Literal["before", "after", "restored"]


@dataclass(frozen=True, slots=True)
class Entry:
    """One line of the index; `blob` None means the file did not exist."""

    kind: EntryKind
    path: Path
    blob: str | None
    turn_id: str | None = None


class CheckpointStore:
    """One session's checkpoints: the index, the contents, and its Bash watch."""

    def __init__(self, root: Path, home: Path) -> None:
        self.root = root
        self._home = home
        # (turn, path) pairs whose `before` is kept: once per file per turn.
        self._kept: set[tuple[str, Path]] = set()
        self._watch: GitWatch | None = None
        self._watch_looked = False
        self._tail_checked = False

    @property
    def index_path(self) -> Path:
        return self.root / "index.jsonl"

    def keep(self, data: bytes | None) -> str | None:
        """Store a content (once) and return its id; None stays None (no file)."""
        if data is None:
            return None
        blob = hashlib.sha256(data).hexdigest()
        path = self.root / "blobs" / blob
        if not path.exists():
            write_bytes_atomically(path, data)
        return blob

    def content(self, blob: str | None) -> bytes | None:
        """The content a blob id stands for (None: no file)."""
        return None if blob is None else (self.root / "blobs" / blob).read_bytes()

    def add(self, entry: Entry) -> None:
        """Append one entry to the index."""
        self.root.mkdir(parents=True, exist_ok=True)
        if not self._tail_checked:
            # An entry appended after a line a crash tore would be glued to it and lost too.
            self._tail_checked = True
            cut = cut_torn_tail(self.index_path)
            if cut:
                log.warning(
                    "%s: a last line torn by a crash (%d bytes) was cut off", self.index_path, cut
                )
        line = {
            "kind": entry.kind,
            "path": str(entry.path),
            "blob": entry.blob,
            "turnId": entry.turn_id,
        }
        with self.index_path.open("a", encoding="utf-8", errors="surrogateescape") as handle:
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")

    def entries(self) -> list[Entry]:
        """Every entry, in the order written (a line torn by a crash is skipped)."""
        try:
            text = self.index_path.read_text(encoding="utf-8", errors="surrogateescape")
        except (FileNotFoundError, NotADirectoryError):
            return []
        return [e for e in map(_entry, text.splitlines()) if e is not None]

    def first_befores(self) -> dict[Path, str | None]:
        """Each file's content before the agent first changed it (blob id; None: absent)."""
        first: dict[Path, str | None] = {}
        for entry in self.entries():
            if entry.kind == "before":
                first.setdefault(entry.path, entry.blob)
        return first

    def keep_before(self, turn_id: str, path: Path, read: Callable[[], bytes | None]) -> None:
        """Keep the content `read()` gives as `path`'s before-turn content, once a turn."""
        if (turn_id, path) in self._kept:
            return
        self.add(Entry("before", path, self.keep(read()), turn_id))
        self._kept.add((turn_id, path))

    def left(self, turn_id: str, path: Path, data: bytes | None) -> None:
        """The content the agent left in `path` (after a write or a command)."""
        self.add(Entry("after", path, self.keep(data), turn_id))

    async def watch(self, cwd: Path) -> GitWatch | None:
        """The session's Bash watch, found once; None outside a git work tree."""
        if not self._watch_looked:
            self._watch_looked = True
            self._watch = await GitWatch.find(cwd, self.root / "git" / "objects", self._home)
        return self._watch

    def for_turn(self, turn_id: str, workspace: WorkspaceView, cwd: Path) -> TurnCheckpoints:
        return TurnCheckpoints(self, turn_id, workspace, cwd)


def checkpoints_root(transcript: Path) -> Path:
    """Where the session whose transcript is `transcript` keeps its checkpoints."""
    return transcript.with_suffix("") / "checkpoints"


class TurnCheckpoints:
    """The tools' Checkpoints seam for one turn (tools.base.Checkpoints)."""

    def __init__(
        self, store: CheckpointStore, turn_id: str, workspace: WorkspaceView, cwd: Path
    ) -> None:
        self._store = store
        self._turn_id = turn_id
        self._workspace = workspace
        self._cwd = cwd

    def before_write(self, path: Path) -> None:
        try:
            read = functools.partial(self._workspace.current_bytes, path)
            self._store.keep_before(self._turn_id, path, read)
        except OSError as exc:
            # The agent's work goes on; only its undo is lost.
            log.warning("no checkpoint of %s: %s", path, exc)

    def written(self, edit: FileEdit) -> None:
        data = encode_text(edit.new_text, edit.encoding or UTF8)
        try:
            self._store.left(self._turn_id, edit.path, data)
        except OSError as exc:
            log.warning("what the agent left in %s was not recorded: %s", edit.path, exc)

    def deleted(self, path: Path) -> None:
        try:
            self._store.left(self._turn_id, path, None)
        except OSError as exc:
            log.warning("the deletion of %s was not recorded: %s", path, exc)

    @contextlib.asynccontextmanager
    async def command(self) -> AsyncIterator[object]:
        """Snapshot the work tree before the command and keep what it changed after."""
        watch = await self._store.watch(self._cwd)
        before = await _snapshot(watch) if watch is not None else None
        try:
            yield None
        finally:
            if watch is not None and before is not None:
                # Also after an abort: what the command changed before it was killed counts.
                try:
                    await asyncio.shield(self._keep_changes(watch, before))
                except OSError as exc:
                    log.warning("the files Bash changed were not all checkpointed: %s", exc)

    async def _keep_changes(self, watch: GitWatch, before: dict[str, str]) -> None:
        after = await _snapshot(watch)
        if after is None:
            return
        changed = changed_files(before, after)
        try:
            olds = await watch.contents([before[n] for n in changed if n in before])
        except GitError as exc:
            log.warning("no checkpoint of the files Bash changed: %s", exc)
            return
        for name in changed:
            path = watch.cwd / name
            now = await asyncio.to_thread(_disk_bytes, path)
            old = olds[before[name]] if name in before else None
            if old != now:
                self._store.keep_before(self._turn_id, path, _given(old))
                self._store.left(self._turn_id, path, now)


async def _snapshot(watch: GitWatch) -> dict[str, str] | None:
    try:
        return await watch.snapshot()
    except (GitError, OSError) as exc:
        log.warning("the files Bash changes in %s cannot be checkpointed: %s", watch.cwd, exc)
        return None


def _given(data: bytes | None) -> Callable[[], bytes | None]:
    return lambda: data


def _disk_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def _entry(line: str) -> Entry | None:
    try:
        data = json.loads(line)
        kind = data["kind"]
        if kind not in ("before", "after", "restored"):
            return None
        blob = data.get("blob")
        turn = data.get("turnId")
        return Entry(
            kind,
            Path(data["path"]),
            None if blob is None else str(blob),
            None if turn is None else str(turn),
        )
    except (ValueError, KeyError, TypeError):
        return None
