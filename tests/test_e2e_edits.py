"""Edits as a real editor sees them: positions in the negotiated encoding, only the changed
ranges, and an edit the editor skipped as stale (while answering `applied: true`) caught."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp

from agent_client import AgentClient, daemon_config, read_requests, write_script
from agentls.lsp.positions import Edit, Encoding
from test_positions import apply_edits

OLD = "PORT = 8000\nNAME = 'café 😀'"
SCRIPT = [
    {"tool_calls": [{"id": "r", "name": "Read", "input": {"file_path": "app.py"}}]},
    {
        "tool_calls": [
            {
                "id": "e",
                "name": "Edit",
                "input": {"file_path": "app.py", "old_string": "😀'", "new_string": "crème'"},
            }
        ]
    },
    {"text": "Changed."},
]


class Buffer:
    """One open document, as the editor holds it."""

    def __init__(self, client: AgentClient, path: Path, encoding: Encoding) -> None:
        self.client, self.uri, self.encoding = client, path.as_uri(), encoding
        self.text, self.version = path.read_text(encoding="utf-8"), 1
        document = lsp.TextDocumentItem(self.uri, "python", self.version, self.text)
        client.text_document_did_open(lsp.DidOpenTextDocumentParams(document))

    def change(self, text: str) -> None:
        self.text, self.version = text, self.version + 1
        identifier = lsp.VersionedTextDocumentIdentifier(version=self.version, uri=self.uri)
        change = lsp.TextDocumentContentChangeWholeDocument(text=text)
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(identifier, [change]))

    def apply(self, params: lsp.ApplyWorkspaceEditParams) -> bool:
        (document_edit,) = params.edit.document_changes or []
        assert isinstance(document_edit, lsp.TextDocumentEdit)
        if document_edit.text_document.version != self.version:
            return True  # skipped as stale, yet "applied", as Neovim does
        edits = [
            Edit(
                (e.range.start.line, e.range.start.character),
                (e.range.end.line, e.range.end.character),
                e.new_text,
            )
            for e in document_edit.edits
            if isinstance(e, lsp.TextEdit)
        ]
        self.change(apply_edits(self.text, edits, self.encoding))
        return True


async def start(workspace: Path, encoding: Encoding) -> AgentClient:
    client = await daemon_config().start()
    assert isinstance(client, AgentClient)
    capabilities = lsp.ClientCapabilities(
        general=lsp.GeneralClientCapabilities(position_encodings=[encoding]),
        workspace=lsp.WorkspaceClientCapabilities(
            apply_edit=True, workspace_edit=lsp.WorkspaceEditClientCapabilities(True)
        ),
    )
    params = lsp.InitializeParams(capabilities=capabilities, root_uri=workspace.as_uri())
    result = await client.initialize_session(params)
    assert result.capabilities.position_encoding == encoding
    return client


async def run_edit(client: AgentClient, workspace: Path) -> dict:
    script = write_script(workspace.parent / "script.jsonl", SCRIPT)
    session = (await client.new_session(workspace, provider="scripted", script=str(script)))[
        "sessionId"
    ]
    await client.request(
        "agent/setPermissionMode", {"sessionId": session, "permissionMode": "acceptEdits"}
    )
    _turn, done = await client.run_turn(session, "change it")
    return done


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text(OLD, encoding="utf-8")
    return root


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
async def test_an_edit_lands_right_in_every_position_encoding(
    workspace: Path, encoding: Encoding
) -> None:
    client = await start(workspace, encoding)
    buffer = Buffer(client, workspace / "app.py", encoding)
    client.edit_handler = buffer.apply
    try:
        done = await run_edit(client, workspace)
    finally:
        await client.shutdown_session()
        await client.stop()
    assert done["stopReason"] == "end_turn"
    assert buffer.text == "PORT = 8000\nNAME = 'café crème'"
    (edit,) = client.applied_edits[0].edit.document_changes[0].edits
    assert edit.new_text == "crème"


async def test_an_edit_the_editor_skipped_fails_and_leaves_the_disk_alone(
    workspace: Path,
) -> None:
    client = await start(workspace, "utf-8")
    buffer = Buffer(client, workspace / "app.py", "utf-8")

    def user_types_first(params: lsp.ApplyWorkspaceEditParams) -> bool:
        buffer.change(buffer.text + "\n# the user was typing")
        return buffer.apply(params)

    client.edit_handler = user_types_first
    try:
        done = await run_edit(client, workspace)
        failed = next(
            e
            for e in client.events.items
            if e["type"] == "tool_call_update" and e["status"] == "failed"
        )
    finally:
        await client.shutdown_session()
        await client.stop()
    assert done["stopReason"] == "end_turn"
    assert "Read the file again" in failed["content"]
    assert (workspace / "app.py").read_text(encoding="utf-8") == OLD


async def test_a_selection_in_utf8_columns_reaches_the_model_as_the_selected_text(
    workspace: Path,
) -> None:
    client = await start(workspace, "utf-8")
    Buffer(client, workspace / "app.py", "utf-8")
    log = workspace.parent / "requests.jsonl"
    start_col = len(b"NAME = '")
    end_col = len("NAME = 'café 😀".encode())
    span = {"start": {"line": 1, "character": start_col}, "end": {"line": 1, "character": end_col}}
    client.protocol.notify(
        "agent/didChangeEditorState",
        {"activeUri": (workspace / "app.py").as_uri(), "selections": [span]},
    )
    script = write_script(workspace.parent / "script.jsonl", [{"text": "ok"}])
    try:
        created = await client.new_session(
            workspace, provider="scripted", script=str(script), requestLog=str(log)
        )
        await client.run_turn(created["sessionId"], "what is selected?")
    finally:
        await client.shutdown_session()
        await client.stop()
    context = read_requests(log)[0]["messages"][0]["content"][0]["text"]
    assert ">café 😀</selection>" in context
