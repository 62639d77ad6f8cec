"""agent/rewind and agent/turnDiff: a session's files and conversation back to before a
turn, and what a turn changed, from its checkpoints and its transcript.

Files go back through the workspace's edit path, as the tools' writes do: an open buffer
changes in the editor (`workspace/applyEdit`), not behind it. A file the user changed
since the agent (or a rewind) last left it is reported, not overwritten, unless forced.
The conversation is cut before the turn's first message; the transcript records the cut
and the history that remains, as it does a compaction, so a resume sees the cut history.
"""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentls.errors import InvalidParams, SessionBusy
from agentls.messages import Message
from agentls.names import RewindWhat
from agentls.pairing import repair_pairing
from agentls.session.checkpoints import CheckpointStore, Entry
from agentls.session.records import (
    MessageRecord,
    Rewound,
    StateSaved,
    TranscriptRecord,
    TurnBegan,
    TurnEnded,
)
from agentls.session.store import loaded_from, read_records
from agentls.textfile import BinaryContent, UnencodableText, decode_bytes
from agentls.tools.base import display_path
from agentls.tools.read_cache import FileReadCache
from agentls.workspace.view import EditRejected, WorkspaceView, write_bytes_atomically

if TYPE_CHECKING:
    from agentls.session.session import AgentSession


@dataclass(slots=True)
class RewindOutcome:
    restored: list[Path] = field(default_factory=list)
    deleted: list[Path] = field(default_factory=list)
    # Files left alone: changed by the user since the agent left them, or failed to restore.
    conflicts: list[tuple[Path, str]] = field(default_factory=list)
    failed: list[tuple[Path, str]] = field(default_factory=list)
    removed_messages: list[str] = field(default_factory=list)
    # What the files go (or would go) back to: from their current content to the restored.
    changes: list[FileChange] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file's change in a turn, as a unified diff."""

    path: Path
    diff: str
    added: int
    removed: int
    created: bool
    deleted: bool


@dataclass(frozen=True, slots=True)
class _Cut:
    history: list[Message]
    state: StateSaved
    removed: list[str]


async def rewind(
    session: AgentSession,
    turn_id: str,
    what: RewindWhat,
    force: bool = False,
    dry_run: bool = False,
) -> RewindOutcome:
    """Files and/or conversation back to before `turn_id` (and every later turn).

    With `dry_run`, the same outcome is computed and nothing changes: no file, no
    history, no transcript record.
    """
    _check_idle(session)
    records = await asyncio.to_thread(read_records, session.transcript.path)
    turns = _turns_from(records, turn_id)
    cut = None
    if what != "files":
        cut = _conversation_cut(records, session.transcript.path, session.history, turn_id)
    # A turn may have started while the transcript was read.
    _check_idle(session)
    if dry_run:
        return _preview(session, turns, cut, what, force)
    outcome = RewindOutcome()
    record = Rewound(turn_id, what, len(cut.removed) if cut else 0)
    session.transcript.record_rewind(record, cut.history if cut else ())
    if cut is not None:
        session.conversation.adopt(cut.history, cut.state, save=True)
        # The model no longer remembers the reads of the removed turns.
        session.read_cache = FileReadCache()
        session.context.compacted()
        session.events.last_stop = None
        outcome.removed_messages = cut.removed
    if what != "conversation":
        await restore_files(
            session.checkpoints, session.workspace, turns, force, outcome, session.cwd
        )
    if cut is None and (outcome.restored or outcome.deleted):
        # The conversation still holds the changes the files no longer have.
        session.intake.note_user_action(_files_note(outcome, session.cwd))
    return outcome


def _preview(
    session: AgentSession,
    turns: Sequence[str],
    cut: _Cut | None,
    what: RewindWhat,
    force: bool,
) -> RewindOutcome:
    """What a rewind would do, read from the checkpoints and the disk alone."""
    outcome = RewindOutcome()
    if cut is not None:
        outcome.removed_messages = cut.removed
    if what != "conversation":
        plan = _restore_plan(session.checkpoints, session.workspace, turns, force, outcome)
        outcome.changes = _plan_changes(plan, session.cwd)
        outcome.restored = [step.path for step in plan if step.wanted is not None]
        outcome.deleted = [step.path for step in plan if step.wanted is None]
    return outcome


def _files_note(outcome: RewindOutcome, cwd: Path) -> str:
    names = ", ".join(display_path(p, cwd) for p in [*outcome.restored, *outcome.deleted])
    return (
        f"The user rewound files to how they were before some of your changes: {names}. "
        "Your changes to them since are gone; read them again before changing them."
    )


def turn_diff(session: AgentSession, turn_id: str) -> list[FileChange]:
    """The files `turn_id` changed: from before the turn to what the agent left at its end."""
    _turns_from(read_records(session.transcript.path), turn_id)
    befores: dict[Path, str | None] = {}
    afters: dict[Path, str | None] = {}
    for entry in session.checkpoints.entries():
        if entry.turn_id != turn_id:
            continue
        if entry.kind == "before":
            befores.setdefault(entry.path, entry.blob)
        elif entry.kind == "after":
            afters[entry.path] = entry.blob
    store = session.checkpoints
    changes = []
    for path, blob in befores.items():
        old = store.content(blob)
        if path in afters:
            new = store.content(afters[path])
        else:
            new = session.workspace.current_bytes(path)
        if old != new:
            changes.append(file_change(path, old, new, display_path(path, session.cwd)))
    return changes


@dataclass(frozen=True, slots=True)
class _Restore:
    """One file a rewind would put back: the checkpoint it goes back to, and its bytes."""

    path: Path
    blob: str | None
    wanted: bytes | None
    current: bytes | None


def _restore_plan(
    store: CheckpointStore,
    workspace: WorkspaceView,
    turns: Sequence[str],
    force: bool,
    outcome: RewindOutcome,
) -> list[_Restore]:
    """The files the turns changed that would go back; conflicts noted in `outcome`."""
    rank = {turn: i for i, turn in enumerate(turns)}
    targets: dict[Path, tuple[int, str | None]] = {}
    left: dict[Path, str | None] = {}
    for entry in store.entries():
        if entry.kind != "before":
            left[entry.path] = entry.blob
        elif entry.turn_id in rank:
            order = rank[entry.turn_id]
            if entry.path not in targets or order < targets[entry.path][0]:
                targets[entry.path] = (order, entry.blob)
    plan = []
    for path, (_order, blob) in targets.items():
        wanted = store.content(blob)
        current = workspace.current_bytes(path)
        if current == wanted:
            continue
        expected = left.get(path, blob)
        if current != store.content(expected) and not force:
            outcome.conflicts.append((path, _conflict_reason(current, expected)))
            continue
        plan.append(_Restore(path, blob, wanted, current))
    return plan


def _plan_changes(plan: Sequence[_Restore], cwd: Path) -> list[FileChange]:
    """Each planned file's diff, from its current content to the one it goes back to."""
    return [
        file_change(step.path, step.current, step.wanted, display_path(step.path, cwd))
        for step in plan
    ]


async def restore_files(
    store: CheckpointStore,
    workspace: WorkspaceView,
    turns: Sequence[str],
    force: bool,
    outcome: RewindOutcome,
    cwd: Path,
) -> None:
    """Each file the turns changed back to its content before the first of them."""
    plan = _restore_plan(store, workspace, turns, force, outcome)
    outcome.changes = _plan_changes(plan, cwd)
    for step in plan:
        await _restore(store, workspace, step, outcome)


async def _restore(
    store: CheckpointStore, workspace: WorkspaceView, step: _Restore, outcome: RewindOutcome
) -> None:
    try:
        if step.wanted is None:
            await workspace.delete(step.path)
            outcome.deleted.append(step.path)
        else:
            await _write_back(workspace, step.path, step.wanted)
            outcome.restored.append(step.path)
    except (EditRejected, UnencodableText, OSError) as exc:
        outcome.failed.append((step.path, str(exc)))
        return
    store.add(Entry("restored", step.path, step.blob))


def _conflict_reason(current: bytes | None, expected: str | None) -> str:
    if current is None:
        return "deleted since the agent changed it"
    if expected is None:
        return "created since the agent deleted it"
    return "changed since the agent last wrote it"


async def _write_back(workspace: WorkspaceView, path: Path, data: bytes) -> None:
    """Put `data` in the file through the edit path; the bytes on disk end up exact."""
    try:
        decoded = decode_bytes(data)
    except BinaryContent:
        # Only Bash changes binary files; no editor buffer holds one.
        write_bytes_atomically(path, data)
        return
    await workspace.write(path, decoded.text, decoded.encoding)
    if path.read_bytes() != data:
        # The editor saved the buffer its own way (another BOM or encoding).
        write_bytes_atomically(path, data)


def file_change(path: Path, old: bytes | None, new: bytes | None, shown: str) -> FileChange:
    """A unified diff of one file, `git diff` style, with its line counts."""
    created, deleted = old is None, new is None
    source = "/dev/null" if created else f"a/{shown}"
    target = "/dev/null" if deleted else f"b/{shown}"
    try:
        before = _lines(old)
        after = _lines(new)
    except BinaryContent:
        text = f"Binary files {source} and {target} differ\n"
        return FileChange(path, text, 0, 0, created, deleted)
    lines = list(difflib.unified_diff(before, after, source, target))
    body = lines[2:]
    added = sum(1 for line in body if line.startswith("+"))
    removed = sum(1 for line in body if line.startswith("-"))
    text = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
    return FileChange(path, text, added, removed, created, deleted)


def _lines(data: bytes | None) -> list[str]:
    """Lines split at \\n only, each keeping its ending (\\r\\n stays \\r\\n)."""
    if data is None:
        return []
    parts = decode_bytes(data).text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    return [*lines, parts[-1]] if parts[-1] else lines


def _check_idle(session: AgentSession) -> None:
    if session.busy:
        raise SessionBusy(
            f"Session {session.id} is running a turn; rewind when it has finished, "
            "or abort it first."
        )


def _turns_from(records: Sequence[TranscriptRecord], turn_id: str) -> list[str]:
    """`turn_id` and every turn after it, in the order they ran; InvalidParams if unknown."""
    order: list[str] = []
    for record in records:
        if isinstance(record, TurnBegan | MessageRecord | TurnEnded):
            turn = record.turn_id
            if turn is not None and turn not in order:
                order.append(turn)
    if turn_id not in order:
        raise InvalidParams(
            f"No turn {turn_id!r} in this session; give the turnId of one of its turns.",
            {"field": "turnId"},
        )
    return order[order.index(turn_id) :]


def _conversation_cut(
    records: Sequence[TranscriptRecord], path: Path, history: list[Message], turn_id: str
) -> _Cut:
    """The history without `turn_id` and what followed, and the state before it."""
    loaded = loaded_from(records, path)
    turns = loaded.display_turns
    if turn_id not in turns:
        raise InvalidParams(
            f"Turn {turn_id} is no longer in the conversation (an earlier rewind removed it); "
            'only its files can go back (what: "files").',
            {"field": "turnId"},
        )
    at = turns.index(turn_id)
    first = loaded.display[at]
    ids = [m.id for m in history]
    index = ids.index(first.id) if first.id in ids else None
    if index is not None and (index > 0 or history[0] == first):
        kept = history[:index]
    else:
        # The turn began before the last compaction (or its first message carries the
        # summary): go back to the messages as they were written.
        kept = repair_pairing(loaded.display[:at])
    return _Cut(kept, _state_before(records, turn_id), [m.id for m in loaded.display[at:]])


def _state_before(records: Sequence[TranscriptRecord], turn_id: str) -> StateSaved:
    """The session state as it was when `turn_id` began."""
    state = StateSaved()
    for record in records:
        if isinstance(record, TurnBegan | MessageRecord | TurnEnded) and (
            record.turn_id == turn_id
        ):
            break
        if isinstance(record, StateSaved):
            state = record
    return state
