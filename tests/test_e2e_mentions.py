"""Mentions as attachments over stdio: a folder (a listing), the editor's problems (asked
of the client with agent/diagnostics), another saved session; what cannot be had is an
error line in the context, and an `agentls:` URI the daemon does not know is -32602."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from agent_client import AgentClient, daemon_config, read_requests
from test_e2e_editor_intel import editor_capabilities, pretend_language_server


@pytest_lsp.fixture(config=daemon_config())
async def editor(lsp_client: AgentClient, tmp_path: Path) -> Any:
    """A daemon whose editor answers agent/diagnostics, with `ws/app.py` open in it."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    app = workspace / "app.py"
    app.write_text("port = 8000  # TODO\nhost = BROKEN\n", encoding="utf-8")
    asked: list[str] = []

    @lsp_client.feature("agent/diagnostics")
    def diagnostics(params: Any) -> dict[str, Any]:
        uri = params["uri"] if isinstance(params, dict) else params.uri
        asked.append(uri)
        return {"diagnostics": pretend_language_server(uri)}

    params = lsp.InitializeParams(
        capabilities=editor_capabilities(True, False), root_uri=workspace.as_uri()
    )
    await lsp_client.initialize_session(params)
    document = lsp.TextDocumentItem(app.as_uri(), "python", 1, app.read_text(encoding="utf-8"))
    lsp_client.text_document_did_open(lsp.DidOpenTextDocumentParams(document))
    lsp_client.asked = asked  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


async def context_of(client: AgentClient, root: Path, attachments: list[dict[str, Any]]) -> str:
    """The <userContext> the model got with a message carrying `attachments`, in a
    session of `root / "ws"`."""
    session, log = await client.scripted_session(root, [{"text": "ok"}])
    _turn, done = await client.run_turn(session, "look", attachments=attachments)
    assert done["stopReason"] == "end_turn"
    text: str = read_requests(log)[0]["messages"][-1]["content"][0]["text"]
    assert text.startswith("<userContext>")
    return text


def workspace(tmp_path: Path, name: str) -> Path:
    (tmp_path / name / "ws").mkdir(parents=True)
    return tmp_path / name / "ws"


async def test_a_folder_is_listed_as_git_sees_it(client: AgentClient, tmp_path: Path) -> None:
    ws = workspace(tmp_path, "git")
    for name in ("src/app.py", "src/deep/er/still/x.py", "build/out.o", "README.md"):
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text("x\n", encoding="utf-8")
    (ws / ".gitignore").write_text("build/\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    context = await context_of(client, ws.parent, [{"uri": ws.as_uri()}])
    assert (
        '<attachment path="./" listing="git">\n'
        ".gitignore\nREADME.md\nsrc/\nsrc/app.py\nsrc/deep/\nsrc/deep/er/\n</attachment>"
    ) in context


async def test_a_folder_outside_git_is_walked_without_junk_and_cut_at_500(
    client: AgentClient, tmp_path: Path
) -> None:
    ws = workspace(tmp_path, "walk")
    (ws / "node_modules" / "left").mkdir(parents=True)
    (ws / "many").mkdir()
    for n in range(600):
        (ws / "many" / f"f{n:03}.txt").write_text("", encoding="utf-8")
    outside = tmp_path / "walk" / "secret"
    outside.mkdir()
    attachments = [{"uri": (ws / "many").as_uri()}, {"uri": ws.as_uri()}, {"uri": outside.as_uri()}]
    context = await context_of(client, ws.parent, attachments)
    many = context.split('<attachment path="many/" listing="walk">\n')[1].split("</attachment>")[0]
    assert many.splitlines()[:2] == ["f000.txt", "f001.txt"]
    assert many.splitlines()[-1] == "… (listing cut: 500 entries shown)"
    assert len(many.splitlines()) == 501
    whole = context.split('<attachment path="./" listing="walk">\n')[1].split("</attachment>")[0]
    assert "node_modules" not in whole and whole.startswith("many/\nmany/f000.txt\n")
    # A folder outside the workspace is refused as a file there is.
    assert f'<attachment path="{outside}" error="not readable in the workspace"/>' in context


async def test_the_editors_problems_are_asked_of_it(editor: AgentClient, tmp_path: Path) -> None:
    app = tmp_path / "ws" / "app.py"
    one = "agentls:diagnostics?uri=" + quote(app.as_uri(), safe="")
    context = await context_of(editor, tmp_path, [{"uri": "agentls:diagnostics"}, {"uri": one}])
    problems = (
        "app.py:\n"
        "  1:16 warning: Unresolved TODO [pyright]\n"
        '  2:8 error: "BROKEN" is not defined [pyright reportUndefinedVariable]'
    )
    print(context)
    assert f'<attachment uri="agentls:diagnostics">\n{problems}\n</attachment>' in context
    one_file = f'<attachment uri="agentls:diagnostics" path="app.py">\n{problems}\n</attachment>'
    assert one_file in context
    assert editor.asked == [app.as_uri(), app.as_uri()]  # type: ignore[attr-defined]


async def test_a_symbol_is_its_lines_with_its_name(client: AgentClient, tmp_path: Path) -> None:
    app = tmp_path / "ws" / "app.py"
    app.write_text("import os\n\nclass App:\n    port = 8000\n", encoding="utf-8")
    where = {"start": {"line": 2, "character": 0}, "end": {"line": 3, "character": 15}}
    attachments = [{"uri": app.as_uri(), "range": where, "name": "class App"}]
    context = await context_of(client, tmp_path, attachments)
    assert (
        '<attachment path="app.py" lines="3-4" name="class App">\n'
        "class App:\n    port = 8000\n</attachment>"
    ) in context


async def test_an_editor_without_diagnostics_gets_an_error_line(
    client: AgentClient, tmp_path: Path
) -> None:
    context = await context_of(client, tmp_path, [{"uri": "agentls:diagnostics"}])
    assert (
        '<attachment uri="agentls:diagnostics" error="the editor does not report diagnostics '
        '(it does not serve agent/diagnostics)"/>'
    ) in context


async def test_another_session_is_its_title_and_last_words(
    client: AgentClient, tmp_path: Path
) -> None:
    earlier, _log = await client.scripted_session(tmp_path, [{"text": "The port is 8000."}])
    await client.run_turn(earlier, "Which port does the app use?")
    unknown = "sess_" + "0" * 32
    attachments = [{"uri": f"agentls:session/{earlier}"}, {"uri": f"agentls:session/{unknown}"}]
    later = workspace(tmp_path, "later").parent
    context = await context_of(client, later, attachments)
    assert (
        f'<attachment uri="agentls:session/{earlier}">\n'
        f"Session {earlier}: Which port does the app use? (1 turns)\n\n"
        "user: Which port does the app use?\n\n"
        "assistant: The port is 8000.\n</attachment>"
    ) in context
    assert f'<attachment uri="agentls:session/{unknown}" error="no saved session {unknown}"/>' in (
        context
    )


@pytest.mark.parametrize(
    "uri",
    [
        "agentls:problems",
        "agentls:session/../../etc/passwd",
        "agentls:diagnostics?uri=http%3A%2F%2Fexample.com%2Fa.py",
        "agentls:diagnostics?path=a.py",
    ],
)
async def test_an_unknown_agentls_uri_is_invalid_params(
    client: AgentClient, tmp_path: Path, uri: str
) -> None:
    session, _log = await client.scripted_session(tmp_path, [{"text": "never"}])
    attachments = [{"uri": (tmp_path / "ws").as_uri()}, {"uri": uri}]
    with pytest.raises(JsonRpcException) as raised:
        await client.request(
            "agent/submitMessage", {"sessionId": session, "text": "x", "attachments": attachments}
        )
    assert raised.value.code == -32602
    assert raised.value.data == {"field": "attachments.1.uri"}
