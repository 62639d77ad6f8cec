"""Several files changed as one: adds, updates, deletes and moves, all prepared first.

A multi-file change (apply_patch) is computed whole before anything is written: every
file's edit against its current text and buffer version, every text encoded. Then it goes
to the sink in one piece when the sink takes one (the LSP editor: one
`workspace/applyEdit`), else to disk with every new content written to a temporary file
beside its target before the first rename, and what was already renamed put back if a
later step fails. A sink that takes files one at a time (ACP's) gets them in order.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from agentls.textfile import encode_text, file_encoding
from agentls.tool_values import FileChangeKind
from agentls.workspace.view import DiskSink, EditSink, FileEdit, WorkspaceView


@dataclass(frozen=True, slots=True)
class FileOperation:
    """One file's part: `edit.path` is the file as it is now (created for an add), and
    `edit.new_text` what it holds after (at `move_to` for a move; unused for a delete)."""

    kind: FileChangeKind
    edit: FileEdit
    move_to: Path | None = None

    @property
    def target(self) -> Path:
        """Where the new text ends up."""
        return self.move_to or self.edit.path


@dataclass(frozen=True, slots=True)
class PlannedChange:
    """What a tool wants done to one file; the workspace prepares it against the buffers."""

    kind: FileChangeKind
    path: Path
    new_text: str = ""
    move_to: Path | None = None


@runtime_checkable
class OperationSink(Protocol):
    """A sink that applies a multi-file change in one piece (or raises EditRejected)."""

    async def apply_operations(self, operations: Sequence[FileOperation]) -> None: ...


def prepare(view: WorkspaceView, changes: Sequence[PlannedChange]) -> list[FileOperation]:
    """Every change as an edit against the file's current text (buffer first) and version;
    UnencodableText (or OSError) before anything is written."""
    operations = []
    for change in changes:
        edit = view.prepared_edit(change.path, change.new_text)
        operations.append(FileOperation(change.kind, edit, change.move_to))
    return operations


async def apply_operations(view: WorkspaceView, operations: Sequence[FileOperation]) -> None:
    """Hand the prepared change to the view's sink, in one piece where it can take one."""
    docs = {op.edit.path: view.documents.get(op.edit.path) for op in operations}
    sink = view.sink
    if isinstance(sink, OperationSink):
        await sink.apply_operations(operations)
    elif isinstance(sink, DiskSink):
        write_operations(operations)
    else:
        await _one_by_one(sink, operations)
    for op in operations:
        if op.kind == "update":
            view.edited(op.edit, docs[op.edit.path])
        elif op.kind in ("delete", "move"):
            view.close_document(op.edit.path)


async def _one_by_one(sink: EditSink, operations: Sequence[FileOperation]) -> None:
    for op in operations:
        if op.kind == "delete":
            await sink.delete(op.edit.path)
        elif op.kind == "move":
            await sink.apply(FileEdit(op.target, None, op.edit.new_text, None, op.edit.encoding))
            await sink.delete(op.edit.path)
        else:
            await sink.apply(op.edit)


def write_operations(operations: Sequence[FileOperation]) -> None:
    """The change on disk: every new content staged beside its target first, then renamed
    into place and the removed files unlinked; on a failure, what was done is undone."""
    staged: list[tuple[Path, str]] = []
    try:
        for op in operations:
            if op.kind != "delete":
                staged.append((op.target, _stage(op)))
    except BaseException:
        for _target, tmp in staged:
            Path(tmp).unlink(missing_ok=True)
        raise
    removed = [op.edit.path for op in operations if op.kind in ("delete", "move")]
    originals = {path: _bytes(path) for path in [*(t for t, _ in staged), *removed]}
    try:
        for target, tmp in staged:
            os.replace(tmp, target)
        for path in removed:
            path.unlink(missing_ok=True)
    except BaseException:
        _put_back(originals, staged)
        raise


def _stage(op: FileOperation) -> str:
    """A temporary file beside the target holding the new content (in the file's mode)."""
    target = op.target
    encoding = op.edit.encoding or file_encoding(op.edit.path)
    data = encode_text(op.edit.new_text, encoding)
    target.parent.mkdir(parents=True, exist_ok=True)
    source = op.edit.path if op.edit.path.exists() else target
    mode = source.stat().st_mode & 0o7777 if source.exists() else None
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if mode is not None:
            os.chmod(tmp, mode)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tmp


def _bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def _put_back(originals: dict[Path, bytes | None], staged: list[tuple[Path, str]]) -> None:
    """Best effort: each file as it was before the change began."""
    for _target, tmp in staged:
        Path(tmp).unlink(missing_ok=True)
    for path, data in originals.items():
        try:
            if data is None:
                path.unlink(missing_ok=True)
            elif _bytes(path) != data:
                path.write_bytes(data)
        except OSError:
            continue
