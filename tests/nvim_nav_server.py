"""A small real language server (pygls) for the Neovim navigation tests: definition,
references and workspace symbols over the whole-word occurrences of a name in the .py files
of its root, `def name` being the definition. Columns are counted in the position encoding
it negotiated with Neovim, so a client that passes positions on without converting them
lands somewhere else on a line that is not ASCII.

`python nvim_nav_server.py` serves over stdio; every request it gets is appended as a JSON
line to $NAV_SERVER_LOG, for the test to check what was asked.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp
from lsprotocol.converters import get_converter
from pygls.lsp.server import LanguageServer

server = LanguageServer("nav-fixture", "1.0")
converter = get_converter()


def columns(text: str, index: int) -> int:
    """Code point `index` of `text` as a column in the negotiated encoding."""
    encoding = server.workspace.position_encoding
    if encoding == lsp.PositionEncodingKind.Utf8:
        return len(text[:index].encode("utf-8"))
    if encoding == lsp.PositionEncodingKind.Utf32:
        return index
    return len(text[:index].encode("utf-16-le")) // 2


def index_of(text: str, column: int) -> int:
    """The code point at a column in the negotiated encoding."""
    for index in range(len(text) + 1):
        if columns(text, index) >= column:
            return index
    return len(text)


def root() -> Path:
    return Path(server.workspace.root_path or os.getcwd())


def record(method: str, params: object) -> None:
    log = os.environ.get("NAV_SERVER_LOG")
    if log:
        unstructured = converter.unstructure(params)
        entry = {"method": method, "params": unstructured}
        entry["encoding"] = str(server.workspace.position_encoding)
        with open(log, "a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")


def occurrences(name: str) -> list[tuple[Path, int, int]]:
    found = []
    for path in sorted(root().glob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            for match in re.finditer(rf"\b{re.escape(name)}\b", line):
                found.append((path, number, match.start()))
    return found


def location(path: Path, line: int, index: int, length: int) -> lsp.Location:
    text = path.read_text(encoding="utf-8").splitlines()[line]
    start = lsp.Position(line, columns(text, index))
    end = lsp.Position(line, columns(text, index + length))
    return lsp.Location(path.as_uri(), lsp.Range(start, end))


def word_at(uri: str, position: lsp.Position) -> str | None:
    path = Path(unquote(urlparse(uri).path))
    line = path.read_text(encoding="utf-8").splitlines()[position.line]
    index = index_of(line, position.character)
    for match in re.finditer(r"\w+", line):
        if match.start() <= index < match.end():
            return match.group()
    return None


@server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
def definition(params: lsp.DefinitionParams) -> list[lsp.Location] | None:
    record("definition", params)
    name = word_at(params.text_document.uri, params.position)
    if name is None:
        return None
    return [
        location(path, line, index, len(name))
        for path, line, index in occurrences(name)
        if path.read_text(encoding="utf-8").splitlines()[line][:index].endswith("def ")
    ]


@server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
def references(params: lsp.ReferenceParams) -> list[lsp.Location]:
    record("references", params)
    name = word_at(params.text_document.uri, params.position) or ""
    return [location(path, line, index, len(name)) for path, line, index in occurrences(name)]


@server.feature(lsp.WORKSPACE_SYMBOL)
def symbols(params: lsp.WorkspaceSymbolParams) -> list[lsp.SymbolInformation]:
    record("workspace/symbol", params)
    found = []
    for path, line, index in occurrences("def"):
        name = path.read_text(encoding="utf-8").splitlines()[line][index + 4 :].split("(")[0]
        if params.query.lower() in name.lower():
            where = location(path, line, index + 4, len(name))
            kind = lsp.SymbolKind.Function
            found.append(
                lsp.SymbolInformation(
                    name=name, kind=kind, location=where, container_name=path.stem
                )
            )
    return found


if __name__ == "__main__":
    server.start_io()
