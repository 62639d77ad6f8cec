"""The editor's EditSink: agent writes reach the editor as `workspace/applyEdit`.

A multi-file change (apply_patch) goes as one `workspace/applyEdit`, its file operations
(create, rename, delete) in it when the client takes them.

Edits are versioned, so the editor refuses one computed against an older buffer. Once the
editor applied an edit, disk and buffer must agree: a client should save the buffers it
changed before it answers; when it did not, the daemon writes the file itself.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from agentls.lsp.positions import Encoding, encoding_of, smallest_edits
from agentls.textfile import read_text_file
from agentls.workspace.operations import FileOperation, write_operations
from agentls.workspace.view import EditRejected, FileEdit, write_edit

log = logging.getLogger(__name__)
APPLY_TIMEOUT = 60.0
# After `applied: true`, how long the buffer's didChange may take to arrive.
VERIFY_SECONDS = 2.0


def _document_edit(edit: FileEdit, encoding: Encoding) -> lsp.TextDocumentEdit:
    """The changed ranges only, in the client's position encoding."""
    changes = [
        lsp.TextEdit(
            range=lsp.Range(
                start=lsp.Position(line=e.start[0], character=e.start[1]),
                end=lsp.Position(line=e.end[0], character=e.end[1]),
            ),
            new_text=e.new_text,
        )
        for e in smallest_edits(edit.old_text or "", edit.new_text, encoding)
    ]
    uri = edit.path.as_uri()
    return lsp.TextDocumentEdit(
        text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=edit.version),
        edits=changes,
    )


class LspEditSink:
    """Sends edits to the client when it can apply them, else writes to disk."""

    def __init__(self, server: LanguageServer) -> None:
        self._server = server

    async def _buffer_holds(self, edit: FileEdit) -> bool:
        """Whether the open buffer's next version is the edit's text (waits a moment for it)."""
        documents = getattr(self._server, "documents", {})
        deadline = asyncio.get_running_loop().time() + VERIFY_SECONDS
        while True:
            doc = documents.get(edit.path)
            if doc is None or (edit.version is not None and doc.version > edit.version):
                return doc is not None and doc.text == edit.new_text
            if asyncio.get_running_loop().time() >= deadline:
                return False
            await asyncio.sleep(0.01)

    def _capabilities(self) -> tuple[bool, bool]:
        can_apply, ops = self._resource_operations()
        return can_apply, lsp.ResourceOperationKind.Create in ops

    def _resource_operations(self) -> tuple[bool, list[lsp.ResourceOperationKind]]:
        """Whether the client applies edits, and the file operations it takes with them."""
        caps = self._server.client_capabilities.workspace
        if caps is None or not caps.apply_edit:
            return False, []
        ops = caps.workspace_edit.resource_operations if caps.workspace_edit else None
        return True, list(ops or [])

    def _takes_document_changes(self) -> bool:
        caps = self._server.client_capabilities.workspace
        edits = caps.workspace_edit if caps is not None else None
        return bool(edits and edits.document_changes)

    async def delete(self, path: Path) -> None:
        """A `DeleteFile` when the client takes one (its buffer goes too), else from disk."""
        can_apply, ops = self._resource_operations()
        if can_apply and lsp.ResourceOperationKind.Delete in ops:
            options = lsp.DeleteFileOptions(recursive=False, ignore_if_not_exists=True)
            await self._send([lsp.DeleteFile(uri=path.as_uri(), options=options)])
        path.unlink(missing_ok=True)

    async def apply(self, edit: FileEdit) -> None:
        can_apply, can_create = self._capabilities()
        creating = edit.old_text is None
        if not can_apply or (creating and not can_create):
            write_edit(edit)
            return
        changes: list[Any] = []
        if creating:
            options = lsp.CreateFileOptions(overwrite=False, ignore_if_exists=True)
            changes.append(lsp.CreateFile(uri=edit.path.as_uri(), options=options))
        encoding = encoding_of(self._server.workspace.position_encoding)
        changes.append(_document_edit(edit, encoding))
        await self._send(changes)
        if edit.version is not None and not await self._buffer_holds(edit):
            # An editor may skip an edit as stale and still answer `applied: true`; the
            # disk is then left alone, or buffer and disk would disagree.
            raise EditRejected(
                "The editor did not apply the edit: the file's buffer changed just before it "
                "arrived (the user may be typing in it). Read the file again, then redo the edit."
            )
        if _disk_text(edit.path) != edit.new_text:
            write_edit(edit)

    async def apply_operations(self, operations: Sequence[FileOperation]) -> None:
        """A multi-file change as one `workspace/applyEdit`: the text edits, with the
        CreateFile, RenameFile and DeleteFile operations the client takes; the ones it
        does not take are done on disk once the editor applied the rest."""
        can_apply, kinds = self._resource_operations()
        if not can_apply:
            write_operations(operations)
            return
        if not self._takes_document_changes():
            kinds = []  # file operations travel only in documentChanges
        encoding = encoding_of(self._server.workspace.position_encoding)
        changes: list[Any] = []
        by_editor: list[FileOperation] = []
        on_disk: list[FileOperation] = []
        for op in operations:
            parts = _operation_changes(op, kinds, encoding)
            (by_editor if parts else on_disk).append(op)
            changes.extend(parts)
        if changes:
            await self._send(changes)
        for op in by_editor:
            versioned = op.kind == "update" and op.edit.version is not None
            if versioned and not await self._buffer_holds(op.edit):
                raise EditRejected(
                    f"The editor did not apply the edit to {op.edit.path.name}: its buffer "
                    "changed just before the edit arrived. Read the files again, then redo "
                    "the patch."
                )
        _match_disk(by_editor)
        write_operations(on_disk)

    async def _send(self, changes: list[Any]) -> None:
        """One `workspace/applyEdit`; EditRejected unless the client applied it."""
        params = lsp.ApplyWorkspaceEditParams(
            edit=lsp.WorkspaceEdit(document_changes=changes), label="agentls edit"
        )
        try:
            result = await asyncio.wait_for(
                self._server.workspace_apply_edit_async(params), APPLY_TIMEOUT
            )
        except TimeoutError:
            raise EditRejected(
                f"the editor did not answer the edit within {APPLY_TIMEOUT:g} s"
            ) from None
        except JsonRpcException as exc:
            raise EditRejected(f"the editor failed to apply the edit: {exc}") from None
        if not result.applied:
            reason = result.failure_reason or "the editor refused it (the buffer may have changed)"
            raise EditRejected(f"The edit was not applied: {reason}")


def _disk_text(path: Path) -> str | None:
    try:
        return read_text_file(path).text
    except (OSError, ValueError):
        return None


def _operation_changes(
    op: FileOperation, kinds: list[lsp.ResourceOperationKind], encoding: Encoding
) -> list[Any]:
    """One file's part of the workspace edit; [] when the client cannot take it."""
    uri = op.edit.path.as_uri()
    if op.kind == "update":
        return [_document_edit(op.edit, encoding)]
    if op.kind == "add" and lsp.ResourceOperationKind.Create in kinds:
        options = lsp.CreateFileOptions(overwrite=False, ignore_if_exists=True)
        return [lsp.CreateFile(uri=uri, options=options), _document_edit(op.edit, encoding)]
    if op.kind == "delete" and lsp.ResourceOperationKind.Delete in kinds:
        delete = lsp.DeleteFileOptions(recursive=False, ignore_if_not_exists=True)
        return [lsp.DeleteFile(uri=uri, options=delete)]
    if op.kind == "move" and lsp.ResourceOperationKind.Rename in kinds:
        # The text first, against the open buffer's version, then the file moves with it.
        rename = lsp.RenameFileOptions(overwrite=False, ignore_if_exists=False)
        target = op.target.as_uri()
        return [
            _document_edit(op.edit, encoding),
            lsp.RenameFile(old_uri=uri, new_uri=target, options=rename),
        ]
    return []


def _match_disk(operations: Sequence[FileOperation]) -> None:
    """After the editor applied them: the disk holds what it should (a client that did
    not save, or that only changed buffers, leaves that to the daemon)."""
    for op in operations:
        if op.kind != "delete" and _disk_text(op.target) != op.edit.new_text:
            write_edit(replace(op.edit, path=op.target))
        if op.kind in ("delete", "move"):
            op.edit.path.unlink(missing_ok=True)
