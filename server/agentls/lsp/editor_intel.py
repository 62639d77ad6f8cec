"""The editor's diagnostics and `window/showDocument`, for tools, over LSP.

Diagnostics: the client says it answers `agent/diagnostics {uri}` with
`capabilities.experimental.agentls.diagnostics: true`, and answers with its language
servers' LSP `Diagnostic`s for that file. Showing a place is LSP's own
`window/showDocument` (`window.showDocument.support`). Code navigation (definitions,
references, workspace symbols) is lsp/editor_navigation.py's.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from agentls.lsp.editor_navigation import LspNavigation
from agentls.lsp.positions import column_to_index, encoding_of, lsp_lines
from agentls.workspace.intel import Diagnostic, FileProblems, Navigation, Place, Severity

log = logging.getLogger(__name__)
DIAGNOSTICS_METHOD = "agent/diagnostics"
ANSWER_TIMEOUT = 5.0
_SEVERITY: dict[int, Severity] = {1: "error", 2: "warning", 3: "information", 4: "hint"}


class LspEditorIntel:
    def __init__(self, server: LanguageServer) -> None:
        self._server = server
        self._navigation = LspNavigation(server)

    @property
    def has_diagnostics(self) -> bool:
        experimental = self._server.client_capabilities.experimental
        if not isinstance(experimental, dict):
            return False
        ours = experimental.get("agentls")
        return isinstance(ours, dict) and ours.get("diagnostics") is True

    @property
    def can_show(self) -> bool:
        window = self._server.client_capabilities.window
        return bool(window and window.show_document and window.show_document.support)

    @property
    def navigation(self) -> frozenset[Navigation]:
        return self._navigation.offered

    async def definition(self, path: Path, line: int, character: int) -> list[Place] | None:
        return await self._navigation.definition(path, line, character)

    async def references(self, path: Path, line: int, character: int) -> list[Place] | None:
        return await self._navigation.references(path, line, character)

    async def workspace_symbols(self, query: str) -> list[Place] | None:
        return await self._navigation.workspace_symbols(query)

    async def diagnostics(self, path: Path) -> FileProblems | None:
        if not self.has_diagnostics:
            return None
        request = self._server.protocol.send_request_async(
            DIAGNOSTICS_METHOD, {"uri": path.as_uri()}
        )
        try:
            answer = await asyncio.wait_for(request, ANSWER_TIMEOUT)
        except (TimeoutError, JsonRpcException) as exc:
            log.warning("the editor gave no diagnostics for %s: %s", path, exc)
            return None
        problems = self._diagnostics(path, answer)
        if problems is None:
            return None
        # Only an explicit false: an editor that does not say is assumed to look.
        return FileProblems(problems, watched=_field(answer, "watched") is not False)

    def _diagnostics(self, path: Path, answer: Any) -> list[Diagnostic] | None:
        items = _field(answer, "diagnostics")
        if not isinstance(items, list):
            return None
        documents = getattr(self._server, "documents", {})
        doc = documents.get(path)
        lines = lsp_lines(doc.text) if doc is not None else []
        encoding = encoding_of(self._server.workspace.position_encoding)
        found = []
        for item in items:
            try:
                start = _field(_field(item, "range"), "start")
                line, column = int(_field(start, "line")), int(_field(start, "character"))
                text = lines[line] if line < len(lines) else None
                character = column_to_index(text, column, encoding) if text is not None else column
                severity = _SEVERITY.get(int(_field(item, "severity") or 1), "error")
                code = _field(item, "code")
                found.append(
                    Diagnostic(
                        line,
                        character,
                        severity,
                        str(_field(item, "message")),
                        _field(item, "source"),
                        None if code is None else str(code),
                    )
                )
            except (TypeError, ValueError, AttributeError):
                log.warning("a diagnostic the editor sent for %s was not understood", path)
        return found

    async def show(self, path: Path, line: int | None) -> bool:
        if not self.can_show:
            return False
        selection = None
        if line is not None:
            position = lsp.Position(line=line, character=0)
            selection = lsp.Range(start=position, end=position)
        params = lsp.ShowDocumentParams(uri=path.as_uri(), take_focus=True, selection=selection)
        try:
            result = await asyncio.wait_for(
                self._server.window_show_document_async(params), ANSWER_TIMEOUT
            )
        except (TimeoutError, JsonRpcException) as exc:
            log.warning("the editor did not show %s: %s", path, exc)
            return False
        return bool(result.success)


def _field(value: Any, name: str) -> Any:
    """A field of a JSON object, whether it arrived as a dict or as attributes."""
    if isinstance(value, dict):
        return value.get(name)
    return getattr(value, name, None)
