"""The editor's diagnostics and `window/showDocument` over stdio: a client that answers
`agent/diagnostics` gets the Diagnostics tool, and the model hears of the errors its edits
add; a client that shows documents (`window.showDocument`) gets OpenFile."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest_lsp
from lsprotocol import types as lsp

from agent_client import AgentClient, capabilities, daemon_config, read_requests


def editor_capabilities(diagnostics: bool, show: bool) -> lsp.ClientCapabilities:
    caps = capabilities(True)
    if show:
        caps.window = lsp.WindowClientCapabilities(
            show_document=lsp.ShowDocumentClientCapabilities(support=True)
        )
    if diagnostics:
        caps.experimental = {"agentls": {"diagnostics": True}}
    return caps


def pretend_language_server(uri: str) -> list[dict[str, Any]]:
    """What a language server would say of the file on disk: `BROKEN` is an undefined
    name (an error), `TODO` a warning."""
    text = Path(unquote(urlparse(uri).path)).read_text(encoding="utf-8")
    found = []
    for number, line in enumerate(text.splitlines()):
        for word, severity, message in (
            ("BROKEN", 1, '"BROKEN" is not defined'),
            ("TODO", 2, "Unresolved TODO"),
        ):
            column = line.find(word)
            if column >= 0:
                position = {"line": number, "character": column}
                found.append(
                    {
                        "range": {"start": position, "end": position},
                        "severity": severity,
                        "message": message,
                        "source": "pyright",
                        "code": "reportUndefinedVariable" if severity == 1 else None,
                    }
                )
    return found


ASKED: list[str] = []


@pytest_lsp.fixture(config=daemon_config())
async def client(lsp_client: AgentClient, tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()

    @lsp_client.feature("agent/diagnostics")
    def diagnostics(params: Any) -> dict[str, Any]:
        uri = params["uri"] if isinstance(params, dict) else params.uri
        ASKED.append(uri)
        if uri.endswith(".txt"):
            # As Neovim says of a file no language server or linter looks at.
            return {"diagnostics": [], "watched": False}
        return {"diagnostics": pretend_language_server(uri)}

    params = lsp.InitializeParams(
        capabilities=editor_capabilities(True, True), root_uri=workspace.as_uri()
    )
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


def results(request: dict[str, Any]) -> dict[str, str]:
    return {
        b["tool_use_id"]: b["content"]
        for b in request["messages"][-1]["content"]
        if b["type"] == "tool_result"
    }


async def test_an_edit_that_adds_an_error_is_told_and_diagnostics_are_asked(
    client: AgentClient, tmp_path: Path
) -> None:
    app = tmp_path / "ws" / "app.py"
    app.write_text("port = 8000  # TODO\nhost = BROKEN\n", encoding="utf-8")
    edit = {"file_path": "app.py", "old_string": "8000", "new_string": "BROKEN"}
    script = [
        {"tool_calls": [{"id": "r", "name": "Read", "input": {"file_path": "app.py"}}]},
        {"tool_calls": [{"id": "e", "name": "Edit", "input": edit}]},
        {"tool_calls": [{"id": "d", "name": "Diagnostics", "input": {"file_path": "app.py"}}]},
        {
            "tool_calls": [
                {"id": "o", "name": "OpenFile", "input": {"file_path": "app.py", "line": 2}}
            ]
        },
        {"text": "Done."},
    ]
    session, log = await client.scripted_session(
        tmp_path, script, permissionMode="bypassPermissions"
    )
    _turn, done = await client.run_turn(session, "break it")
    assert done["stopReason"] == "end_turn"
    requests = read_requests(log)
    tools = requests[0]["tools"]
    assert tools.index("Diagnostics") == tools.index("AskUser") + 2 and "OpenFile" in tools
    edited = results(requests[2])["e"]
    # The error that was there before is not news; the one the edit added is.
    assert edited.endswith(
        "The editor now reports 1 new error in app.py:\n"
        '  1:8 error: "BROKEN" is not defined [pyright reportUndefinedVariable]'
    )
    assert results(requests[3])["d"] == (
        "app.py:\n"
        '  1:8 error: "BROKEN" is not defined [pyright reportUndefinedVariable]\n'
        "  1:18 warning: Unresolved TODO [pyright]\n"
        '  2:8 error: "BROKEN" is not defined [pyright reportUndefinedVariable]'
    )
    assert results(requests[4])["o"] == "Opened app.py at line 2 in the user's editor."
    # pytest-lsp's client records the documents it was asked to show.
    (shown,) = client.shown_documents
    assert shown.uri == app.as_uri() and shown.take_focus
    assert shown.selection is not None and shown.selection.start.line == 1


async def test_a_file_nothing_watches_is_not_waited_for_and_said_unchecked(
    client: AgentClient, tmp_path: Path
) -> None:
    notes = tmp_path / "ws" / "notes.txt"
    notes.write_text("draft\n", encoding="utf-8")
    edit = {"file_path": "notes.txt", "old_string": "draft", "new_string": "final"}
    script = [
        {"tool_calls": [{"id": "r", "name": "Read", "input": {"file_path": "notes.txt"}}]},
        {"tool_calls": [{"id": "e", "name": "Edit", "input": edit}]},
        {"tool_calls": [{"id": "d", "name": "Diagnostics", "input": {"file_path": "notes.txt"}}]},
        {"text": "Done."},
    ]
    session, log = await client.scripted_session(
        tmp_path, script, permissionMode="bypassPermissions", diagnosticsWait=30
    )
    ASKED.clear()
    _turn, done = await client.run_turn(session, "edit the notes")
    assert done["stopReason"] == "end_turn"
    assert notes.read_text(encoding="utf-8") == "final\n"
    # Asked before the change; `watched: false` means no second look after a 30 s wait.
    assert [notes.as_uri()] * 2 == ASKED
    assert "new error" not in results(read_requests(log)[2])["e"]
    # No problems in a file nothing checks is not "no problems": the model is told which.
    assert results(read_requests(log)[3])["d"] == (
        "notes.txt: nothing in the editor checks this file (no language server or linter serves it)"
    )


async def test_without_the_capabilities_the_tools_are_not_offered(tmp_path: Path) -> None:
    config = daemon_config()
    client = await config.start()
    assert isinstance(client, AgentClient)
    (tmp_path / "ws").mkdir()
    params = lsp.InitializeParams(
        capabilities=editor_capabilities(False, False), root_uri=(tmp_path / "ws").as_uri()
    )
    await client.initialize_session(params)
    try:
        session = await client.new_session(
            tmp_path / "ws", provider="scripted", script=[{"text": "hi"}]
        )
        assert "Diagnostics" not in session["tools"] and "OpenFile" not in session["tools"]
    finally:
        await client.shutdown_session()
        await client.stop()
