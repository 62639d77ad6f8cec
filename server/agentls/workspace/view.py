"""WorkspaceView: what the file tools see and where their writes go.

Reads prefer an open editor buffer (the user's unsaved text) over the disk. Writes never
touch files directly: they go to the EditSink, which is the LSP client's
`workspace/applyEdit` when the editor can take it, or an atomic disk write otherwise.
Files on disk are read and written back in their own encoding (see `agentls.textfile`),
so an edit keeps every byte it does not change.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from agentls.textfile import (
    UTF8,
    TextEncoding,
    UnencodableText,
    encode_text,
    file_encoding,
    read_text_file,
)
from agentls.workspace.client_side import EditorBuffers, EditorTerminal
from agentls.workspace.intel import EditorIntel
from agentls.workspace.paths import PathPolicy


@dataclass(frozen=True, slots=True)
class Position:
    line: int
    character: int


@dataclass(frozen=True, slots=True)
class Range:
    start: Position
    end: Position


@dataclass(frozen=True, slots=True)
class OpenDocument:
    path: Path
    text: str
    version: int
    language_id: str = ""


@dataclass(slots=True)
class EditorState:
    active_path: Path | None = None
    selections: list[Range] = field(default_factory=list)
    visible_ranges: list[Range] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class FileEdit:
    """Replace the whole text of `path`; `old_text` is None when the file is created."""

    path: Path
    old_text: str | None
    new_text: str
    # The buffer version the edit was computed against; None when the file is not open.
    version: int | None = None
    # How the file is stored on disk; None: whatever the file on disk has when written.
    encoding: TextEncoding | None = None


class EditRejected(Exception):
    """The sink refused the edit (e.g. the editor's buffer moved on)."""


class EditSink(Protocol):
    async def apply(self, edit: FileEdit) -> None:
        """Apply the edit or raise EditRejected."""

    async def delete(self, path: Path) -> None:
        """Delete the file (a rewind of its creation) or raise EditRejected."""


def write_atomically(path: Path, text: str, errors: str = "strict") -> None:
    """Write UTF-8 text through a temporary file and rename (see `write_bytes_atomically`)."""
    write_bytes_atomically(path, text.encode("utf-8", errors))


def write_bytes_atomically(path: Path, data: bytes) -> None:
    """Write through a temporary file and rename, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_edit(edit: FileEdit) -> None:
    """Write an edit's new text to disk in the file's own encoding, atomically.

    Every sink's disk path goes here. UnencodableText when the encoding cannot hold it.
    """
    encoding = edit.encoding if edit.encoding is not None else file_encoding(edit.path)
    write_bytes_atomically(edit.path, encode_text(edit.new_text, encoding))


class DiskSink:
    """The headless sink: atomic writes to disk."""

    async def apply(self, edit: FileEdit) -> None:
        write_edit(edit)

    async def delete(self, path: Path) -> None:
        path.unlink(missing_ok=True)


class WorkspaceView:
    """Open buffers, editor state and path confinement for one session's workspace."""

    def __init__(
        self,
        roots: Sequence[Path],
        sink: EditSink | None = None,
        documents: dict[Path, OpenDocument] | None = None,
        editor: EditorState | None = None,
    ) -> None:
        self.policy = PathPolicy(roots)
        self.sink: EditSink = sink or DiskSink()
        # Buffers and editor state belong to the editor, so sessions of one daemon share them.
        self.documents: dict[Path, OpenDocument] = {} if documents is None else documents
        self.editor = EditorState() if editor is None else editor
        # The editor's diagnostics and "show this place" (None: no editor offers them).
        self.intel: EditorIntel | None = None
        # Buffers the editor gives on request, and its terminal (None: it offers neither).
        self.buffers: EditorBuffers | None = None
        self.terminal: EditorTerminal | None = None

    @property
    def roots(self) -> tuple[Path, ...]:
        return self.policy.roots

    def set_document(self, doc: OpenDocument) -> None:
        """Record an opened or changed editor buffer."""
        self.documents[doc.path] = doc

    def close_document(self, path: Path) -> None:
        """Forget a buffer the editor closed; reads go to disk again."""
        self.documents.pop(path, None)

    async def sync_buffers(self, paths: Sequence[Path]) -> None:
        """Ask an editor that gives buffers on request for the text it has of `paths`.

        A buffer whose text differs from the file's is kept as an open document, so reads
        and reviews see it; one that matches the file, or that the editor cannot give now,
        is dropped, so the disk (with its encoding and bytes) stays the source. Files that
        are not on disk, or not text, are not asked about.
        """
        if self.buffers is None:
            return
        for path in paths:
            try:
                on_disk = read_text_file(path).text if path.is_file() else None
            except (OSError, ValueError):
                continue
            if on_disk is None:
                continue
            text = await self.buffers.read(path)
            if text is None or _same_text(text, on_disk):
                # No text from the editor now: an earlier snapshot of it must not linger.
                self.documents.pop(path, None)
            else:
                self.documents[path] = OpenDocument(path, text, 0)

    def read_text(self, path: Path) -> str:
        """The buffer's text when the file is open in the editor, else the file on disk.

        A file on disk that is not text raises BinaryContent (a ValueError).
        """
        doc = self.documents.get(path)
        if doc is not None:
            return doc.text
        return read_text_file(path).text

    def exists(self, path: Path) -> bool:
        """True when the file is open in the editor or exists on disk."""
        return path in self.documents or path.is_file()

    async def write(
        self, path: Path, new_text: str, encoding: TextEncoding | None = None
    ) -> FileEdit:
        """Hand a whole-file edit to the sink; returns the edit that was applied.

        The file keeps its encoding on disk unless `encoding` names another (a rewind
        restores the bytes a file had). UnencodableText, before anything is written, when
        the encoding cannot hold `new_text`.
        """
        doc = self.documents.get(path)
        edit = self.prepared_edit(path, new_text, encoding)
        await self.sink.apply(edit)
        self.edited(edit, doc)
        return edit

    def prepared_edit(
        self, path: Path, new_text: str, encoding: TextEncoding | None = None
    ) -> FileEdit:
        """The whole-file edit that leaves `new_text` in `path`, against its current text
        and buffer version; UnencodableText when its encoding cannot hold the text."""
        doc = self.documents.get(path)
        old_text, own_encoding = self._current(path)
        encoding = encoding or own_encoding
        encode_text(new_text, encoding)
        return FileEdit(path, old_text, new_text, doc.version if doc else None, encoding)

    def edited(self, edit: FileEdit, doc: OpenDocument | None) -> None:
        """After the sink applied `edit` to the buffer `doc` (as it was before): until the
        editor's didChange (with its own version) arrives, reads already see the new text."""
        if doc is not None and self.documents.get(edit.path) is doc:
            self.documents[edit.path] = OpenDocument(
                edit.path, edit.new_text, doc.version, doc.language_id
            )

    async def delete(self, path: Path) -> None:
        """Delete a file through the sink (the editor closes its buffer)."""
        await self.sink.delete(path)

    def current_bytes(self, path: Path) -> bytes | None:
        """The file's content as the user has it: the open buffer in the file's encoding,
        else the bytes on disk; None when it does not exist."""
        doc = self.documents.get(path)
        if doc is not None:
            try:
                return encode_text(doc.text, file_encoding(path))
            except UnencodableText:
                return doc.text.encode("utf-8")
        try:
            return path.read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None

    def _current(self, path: Path) -> tuple[str | None, TextEncoding]:
        """The text an edit replaces (None: the file is new) and the encoding it keeps."""
        doc = self.documents.get(path)
        if doc is not None:
            return doc.text, file_encoding(path)
        if not path.is_file():
            return None, UTF8
        decoded = read_text_file(path)
        return decoded.text, decoded.encoding


def _same_text(a: str, b: str) -> bool:
    """Equal but for line endings (editors keep buffers in \\n and save in the file's own)."""
    return a == b or a.replace("\r\n", "\n") == b.replace("\r\n", "\n")
