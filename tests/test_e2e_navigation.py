"""Navigation served by the editor over stdio: a client that answers `agent/definition`,
`agent/references` and `agent/workspaceSymbols` gets GoToDefinition, FindReferences and
WorkspaceSymbols; positions go out in the connection's UTF-16 and come back as the code
point columns the model counts in; a client that announces only some gets only those."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest_lsp
from lsprotocol import types as lsp

from agent_client import AgentClient, capabilities, daemon_config, read_requests
from test_e2e_editor_intel import results

LIB = 'def greet(name):\n    return "héllo 😀 " + name\n'
APP = 'from lib import greet\ns = "😀"; print(greet("a"))\ngreet("b")\n'
NAVIGATION = {"definition": True, "references": True, "workspaceSymbols": True}


def field(value: Any, name: str) -> Any:
    return value[name] if isinstance(value, dict) else getattr(value, name)


def utf16_to_index(line: str, column: int) -> int:
    count = 0
    for index, char in enumerate(line):
        if count >= column:
            return index
        count += 2 if ord(char) > 0xFFFF else 1
    return len(line)


def utf16(line: str, index: int) -> int:
    return len(line[:index].encode("utf-16-le")) // 2


class PretendLanguageServer:
    """Whole-word occurrences of a name over the workspace's .py files; `def name` defines."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.asked: list[tuple[str, Any]] = []

    def occurrences(self, name: str) -> list[tuple[Path, int, int]]:
        found = []
        for path in sorted(self.root.glob("*.py")):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
                for match in re.finditer(rf"\b{re.escape(name)}\b", line):
                    found.append((path, number, match.start()))
        return found

    def location(self, path: Path, line: int, index: int) -> dict[str, Any]:
        text = path.read_text(encoding="utf-8").splitlines()[line]
        at = {"line": line, "character": utf16(text, index)}
        return {"uri": path.as_uri(), "range": {"start": at, "end": at}}

    def word_at(self, params: Any) -> str | None:
        path = Path(unquote(urlparse(field(field(params, "textDocument"), "uri")).path))
        position = field(params, "position")
        line = path.read_text(encoding="utf-8").splitlines()[field(position, "line")]
        index = utf16_to_index(line, field(position, "character"))
        for match in re.finditer(r"\w+", line):
            if match.start() <= index < match.end():
                return match.group()
        return None

    def definition(self, params: Any) -> Any:
        self.asked.append(("definition", params))
        name = self.word_at(params)
        if name is None:
            return None
        places = [p for p in self.occurrences(name) if p[0].read_text().find(f"def {name}") >= 0]
        return {"locations": [self.location(*p) for p in places[:1]]}

    def references(self, params: Any) -> Any:
        self.asked.append(("references", params))
        name = self.word_at(params)
        return [self.location(*p) for p in self.occurrences(name or "")]

    def symbols(self, params: Any) -> Any:
        self.asked.append(("workspaceSymbols", params))
        query = field(params, "query")
        found = []
        for path, line, index in self.occurrences("def"):
            name = path.read_text().splitlines()[line][index + 4 :].split("(")[0]
            if query in name:
                location = self.location(path, line, index + 4)
                found.append(
                    {"name": name, "kind": 12, "containerName": path.stem, "location": location}
                )
        return {"symbols": found}


def editor(client: AgentClient, root: Path) -> PretendLanguageServer:
    server = PretendLanguageServer(root)
    # pygls marks each handler it registers, which a bound method cannot take.
    for method, answer in (
        ("agent/definition", server.definition),
        ("agent/references", server.references),
        ("agent/workspaceSymbols", server.symbols),
    ):
        client.feature(method)(lambda params, answer=answer: answer(params))
    return server


async def start(client: AgentClient, root: Path, offered: dict[str, bool]) -> PretendLanguageServer:
    server = editor(client, root)
    caps = capabilities(True)
    caps.experimental = {"agentls": offered}
    params = lsp.InitializeParams(capabilities=caps, root_uri=root.as_uri())
    await client.initialize_session(params)
    return server


@pytest_lsp.fixture(config=daemon_config())
async def client(lsp_client: AgentClient):
    yield
    await lsp_client.shutdown_session()


def workspace(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    (root / "lib.py").write_text(LIB, encoding="utf-8")
    (root / "app.py").write_text(APP, encoding="utf-8")
    return root


def tool(call_id: str, name: str, **tool_input: Any) -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": name, "input": tool_input}]}


async def test_the_model_navigates_through_the_editor(client: AgentClient, tmp_path: Path) -> None:
    root = workspace(tmp_path)
    server = await start(client, root, NAVIGATION)
    script = [
        tool("d", "GoToDefinition", file_path="app.py", line=2, symbol="greet"),
        tool("r", "FindReferences", file_path="lib.py", line=1, column=5),
        tool("s", "WorkspaceSymbols", query="gre"),
        tool("n", "GoToDefinition", file_path="app.py", line=3, column=6),
        {"text": "Found it."},
    ]
    session, log = await client.scripted_session(tmp_path, script)
    _turn, done = await client.run_turn(session, "where is greet?")

    assert done["stopReason"] == "end_turn"
    requests = read_requests(log)
    tools = requests[0]["tools"]
    assert {"GoToDefinition", "FindReferences", "WorkspaceSymbols"} <= set(tools)
    assert results(requests[1])["d"] == "lib.py:1:5: def greet(name):"
    assert results(requests[2])["r"] == (
        "app.py:1:17: from lib import greet\n"
        'app.py:2:16: s = "😀"; print(greet("a"))\n'
        'app.py:3:1: greet("b")\n'
        "lib.py:1:5: def greet(name):"
    )
    assert results(requests[3])["s"] == "lib.py:1:5: function greet (in lib): def greet(name):"
    assert results(requests[4])["n"] == "The editor found no definition at app.py:3:6."
    # The positions went out as LSP's, in UTF-16 code units (the emoji counts two).
    kind, asked = server.asked[0]
    assert kind == "definition"
    assert field(field(asked, "textDocument"), "uri") == (root / "app.py").as_uri()
    position = field(asked, "position")
    assert (field(position, "line"), field(position, "character")) == (1, 16)
    assert field(field(server.asked[1][1], "context"), "includeDeclaration") is True
    assert field(server.asked[2][1], "query") == "gre"


async def test_only_the_navigation_the_editor_announces_is_offered(
    client: AgentClient, tmp_path: Path
) -> None:
    root = workspace(tmp_path)
    await start(client, root, {"workspaceSymbols": True, "definition": False})

    session = await client.new_session(root, provider="scripted", script=[{"text": "hi"}])

    offered = {"GoToDefinition", "FindReferences", "WorkspaceSymbols"} & set(session["tools"])
    assert offered == {"WorkspaceSymbols"}
