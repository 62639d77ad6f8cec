"""The editor's code navigation, for tools, over LSP server → client requests.

The client says which it answers in `capabilities.experimental.agentls`
(`definition`, `references`, `workspaceSymbols`: true) and answers them from its own
language servers. The params are LSP's own (`textDocument/definition`,
`textDocument/references`, `workspace/symbol`), so a client can pass them on as they are;
positions are in the connection's negotiated `positionEncoding`, converted here from and to
the code points the core counts in.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from agentls.errors import InvalidParams
from agentls.lsp.paths import uri_path
from agentls.lsp.positions import Encoding, column_to_index, encoding_of, lsp_lines, units
from agentls.textfile import BinaryContent, read_text_file
from agentls.workspace.intel import NAVIGATIONS, Navigation, Place

log = logging.getLogger(__name__)
METHODS: dict[Navigation, str] = {
    "definition": "agent/definition",
    "references": "agent/references",
    "workspaceSymbols": "agent/workspaceSymbols",
}
ANSWER_TIMEOUT = 5.0
# More than any tool shows: a flood from the editor is cut before it is converted.
MAX_PLACES = 1000


class LspNavigation:
    def __init__(self, server: LanguageServer) -> None:
        self._server = server

    @property
    def offered(self) -> frozenset[Navigation]:
        experimental = self._server.client_capabilities.experimental
        ours = experimental.get("agentls") if isinstance(experimental, dict) else None
        if not isinstance(ours, dict):
            return frozenset()
        return frozenset(kind for kind in NAVIGATIONS if ours.get(kind) is True)

    async def definition(self, path: Path, line: int, character: int) -> list[Place] | None:
        params = self._at(path, line, character)
        answered, answer = await self._ask("definition", params, str(path))
        return self._places(_field(answer, "locations", answer)) if answered else None

    async def references(self, path: Path, line: int, character: int) -> list[Place] | None:
        params = {**self._at(path, line, character), "context": {"includeDeclaration": True}}
        answered, answer = await self._ask("references", params, str(path))
        return self._places(_field(answer, "locations", answer)) if answered else None

    async def workspace_symbols(self, query: str) -> list[Place] | None:
        answered, answer = await self._ask("workspaceSymbols", {"query": query}, repr(query))
        if not answered:
            return None
        items = _field(answer, "symbols", answer)
        places = []
        for item in items if isinstance(items, list) else []:
            found = self._places([_field(item, "location")])
            if found:
                kind = _symbol_kind(_field(item, "kind"))
                name, container = _field(item, "name"), _field(item, "containerName")
                where = found[0]
                places.append(
                    Place(where.path, where.line, where.character, str(name or ""), kind, container)
                )
        return places

    async def _ask(self, kind: Navigation, params: dict[str, Any], what: str) -> tuple[bool, Any]:
        """Whether the editor answered, and its answer (null, like LSP's, is "none")."""
        if kind not in self.offered:
            return False, None
        request = self._server.protocol.send_request_async(METHODS[kind], params)
        try:
            return True, await asyncio.wait_for(request, ANSWER_TIMEOUT)
        except (TimeoutError, JsonRpcException) as exc:
            log.warning("the editor gave no %s for %s: %s", kind, what, exc)
            return False, None

    def _at(self, path: Path, line: int, character: int) -> dict[str, Any]:
        """LSP's TextDocumentPositionParams for a place counted in code points."""
        lines = self._lines(path)
        text = lines[line] if line < len(lines) else ""
        column = units(text[:character], self._encoding())
        return {
            "textDocument": {"uri": path.as_uri()},
            "position": {"line": line, "character": column},
        }

    def _places(self, items: Any) -> list[Place]:
        """Locations and LocationLinks as places; the ones not understood are skipped."""
        places = []
        lines: dict[Path, list[str]] = {}
        for item in items[:MAX_PLACES] if isinstance(items, list) else []:
            uri = _field(item, "uri") or _field(item, "targetUri")
            where = (
                _field(item, "range")
                or _field(item, "targetSelectionRange")
                or _field(item, "targetRange")
            )
            try:
                path = uri_path(str(uri))
                start = _field(where, "start")
                line = int(_field(start, "line") or 0)
                column = int(_field(start, "character") or 0)
            except (InvalidParams, TypeError, ValueError):
                log.warning("a location the editor sent was not understood: %r", item)
                continue
            if path not in lines:
                lines[path] = self._lines(path)
            text = lines[path][line] if line < len(lines[path]) else ""
            places.append(Place(path, line, column_to_index(text, column, self._encoding())))
        return places

    def _lines(self, path: Path) -> list[str]:
        """The file's lines as the editor has them (its buffer, else the disk)."""
        doc = getattr(self._server, "documents", {}).get(path)
        if doc is not None:
            return lsp_lines(doc.text)
        try:
            return lsp_lines(read_text_file(path).text)
        except (OSError, BinaryContent):
            return []

    def _encoding(self) -> Encoding:
        return encoding_of(self._server.workspace.position_encoding)


def _symbol_kind(value: Any) -> str | None:
    try:
        return lsp.SymbolKind(int(value)).name.lower()
    except (TypeError, ValueError):
        return None


def _field(value: Any, name: str, default: Any = None) -> Any:
    """A field of a JSON object (a dict or attributes); `default` when it has none."""
    if isinstance(value, dict):
        return value.get(name, default)
    if isinstance(value, list):
        return default
    return getattr(value, name, default)
