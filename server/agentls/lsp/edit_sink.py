"""The editor's EditSink: agent writes reach the editor as `workspace/applyEdit`.

Edits are versioned, so the editor refuses one computed against an older buffer. Once the
editor applied an edit, disk and buffer must agree: a client should save the buffers it
changed before it answers; when it did not, the daemon writes the file itself.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from agentls.textfile import read_text_file
from agentls.workspace.view import EditRejected, FileEdit, write_edit

log = logging.getLogger(__name__)
APPLY_TIMEOUT = 60.0


def _end_of(text: str) -> lsp.Position:
    lines = text.split("\n")
    last = lines[-1]
    units = len(last.encode("utf-16-le")) // 2
    return lsp.Position(line=len(lines) - 1, character=units)


def _document_edit(edit: FileEdit) -> lsp.TextDocumentEdit:
    uri = edit.path.as_uri()
    old = edit.old_text or ""
    change = lsp.TextEdit(
        range=lsp.Range(start=lsp.Position(line=0, character=0), end=_end_of(old)),
        new_text=edit.new_text,
    )
    return lsp.TextDocumentEdit(
        text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=edit.version),
        edits=[change],
    )


class LspEditSink:
    """Sends edits to the client when it can apply them, else writes to disk."""

    def __init__(self, server: LanguageServer) -> None:
        self._server = server

    def _capabilities(self) -> tuple[bool, bool]:
        caps = self._server.client_capabilities.workspace
        if caps is None or not caps.apply_edit:
            return False, False
        ops = caps.workspace_edit.resource_operations if caps.workspace_edit else None
        return True, bool(ops and lsp.ResourceOperationKind.Create in ops)

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
        changes.append(_document_edit(edit))
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
        if _disk_text(edit.path) != edit.new_text:
            write_edit(edit)


def _disk_text(path: Path) -> str | None:
    try:
        return read_text_file(path).text
    except (OSError, ValueError):
        return None
