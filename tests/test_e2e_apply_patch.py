"""apply_patch through the real daemon on the scripted model: one permission request with
every file's diff, applied on allow (to disk, or as one workspace/applyEdit with file
operations), nothing changed on a rejection or a hunk that does not apply."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp

from agent_client import AgentClient, daemon_config, read_requests, write_script
from agentls.lsp.positions import Edit
from test_positions import apply_edits

APP = "def a():\n    return 1\n\ndef b():\n    return 1\n"
PATCH = "\n".join(
    [
        "*** Begin Patch",
        "*** Add File: docs/new.md",
        "+# New",
        "*** Update File: src/app.py",
        "@@ def b():",
        "-    return 1",
        "+    return 2",
        "*** Delete File: old.txt",
        "*** Update File: move.py",
        "*** Move to: pkg/moved.py",
        "@@",
        "-a = 1",
        "+a = 2",
        "*** End Patch",
    ]
)
APPLIED = {
    "docs/new.md": "# New\n",
    "src/app.py": APP.replace("b():\n    return 1", "b():\n    return 2"),
    "pkg/moved.py": "a = 2\n",
}
OPERATIONS = [
    lsp.ResourceOperationKind.Create,
    lsp.ResourceOperationKind.Rename,
    lsp.ResourceOperationKind.Delete,
]


def workspace(tmp_path: Path, settings: dict[str, Any] | None = None) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / ".agentls").mkdir()
    (root / "src" / "app.py").write_text(APP)
    (root / "old.txt").write_text("obsolete\n")
    (root / "move.py").write_text("a = 1\n")
    settings = {"applyPatchTool": True, **(settings or {})}
    (root / ".agentls" / "settings.json").write_text(json.dumps(settings))
    return root


def files(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text()
        for p in root.rglob("*")
        if p.is_file() and ".agentls" not in p.parts
    }


def script(patch: str) -> list[dict[str, Any]]:
    call = {"id": "p", "name": "apply_patch", "input": {"input": patch}}
    return [{"tool_calls": [call]}, {"text": "Done."}]


async def start(root: Path, apply_edit: bool, operations: list[Any]) -> AgentClient:
    client = await daemon_config().start()
    assert isinstance(client, AgentClient)
    edits = lsp.WorkspaceEditClientCapabilities(
        document_changes=True, resource_operations=operations
    )
    capabilities = lsp.ClientCapabilities(
        workspace=lsp.WorkspaceClientCapabilities(apply_edit=apply_edit, workspace_edit=edits)
    )
    await client.initialize_session(
        lsp.InitializeParams(capabilities=capabilities, root_uri=root.as_uri())
    )
    return client


async def run(
    client: AgentClient, tmp_path: Path, patch: str, answer: str | None
) -> tuple[dict[str, Any], list[dict[str, Any]], Path]:
    """One turn in which the model sends `patch`; the permission answered with `answer`."""
    path = write_script(tmp_path / "script.jsonl", script(patch))
    log = tmp_path / "requests.jsonl"
    session = await client.new_session(
        tmp_path / "ws", provider="scripted", script=str(path), requestLog=str(log)
    )
    session_id = session["sessionId"]
    assert "apply_patch" in session["tools"]
    answering = None
    if answer is not None:
        answering = asyncio.create_task(client.answer_permission(session_id, answer))
    turn, done = await client.run_turn(session_id, "change the files")
    if answering is not None:
        await answering
    assert done["stopReason"] == "end_turn"
    return done, client.events.of_turn(turn), log


def tool_result(log: Path) -> dict[str, Any]:
    blocks = read_requests(log)[-1]["messages"][-1]["content"]
    result: dict[str, Any] = next(b for b in blocks if b["type"] == "tool_result")
    return result


@pytest.fixture
async def disk_client(tmp_path: Path) -> Any:
    """A client that does not apply edits: the daemon writes the disk."""
    client = await start(workspace(tmp_path), apply_edit=False, operations=[])
    yield client
    await client.shutdown_session()
    await client.stop()


async def test_one_request_shows_every_file_and_allow_applies_it_all(
    disk_client: AgentClient, tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    _done, events, log = await run(disk_client, tmp_path, PATCH, "allow_once")
    (request,) = [e for e in events if e["type"] == "permission_request"]
    diffs = request["diffs"]
    assert [(d["kind"], Path(d["path"]).name) for d in diffs] == [
        ("add", "new.md"),
        ("update", "app.py"),
        ("delete", "old.txt"),
        ("move", "moved.py"),
    ]
    assert diffs[1]["oldText"] == APP and diffs[1]["newText"] == APPLIED["src/app.py"]
    assert diffs[2] == {
        "path": str(root / "old.txt"),
        "oldText": "obsolete\n",
        "newText": "",
        "kind": "delete",
    }
    assert diffs[3]["movedFrom"] == str(root / "move.py")
    assert "diff" not in request  # several files: `diffs` only
    assert "Edit(./old.txt)" in request["options"][1]["rule"]
    assert files(root) == APPLIED
    result = tool_result(log)
    assert not result["is_error"]
    assert result["content"].startswith("Applied the patch: 4 files changed.")
    (done_update,) = [
        e for e in events if e["type"] == "tool_call_update" and e["status"] == "completed"
    ]
    assert len(done_update["diffs"]) == 4
    # Where each change starts: every file but the deleted one.
    places = [(Path(at["path"]).name, at["line"]) for at in done_update["locations"]]
    assert [name for name, _line in places] == ["new.md", "app.py", "moved.py"]
    assert places[0][1] == 0  # a new file starts at its top


async def test_a_patch_is_rewound_like_any_write(disk_client: AgentClient, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    before = files(root)
    _done, events, _log = await run(disk_client, tmp_path, PATCH, "allow_once")
    assert files(root) == APPLIED
    outcome = await disk_client.request(
        "agent/rewind",
        {"sessionId": events[0]["sessionId"], "turnId": events[0]["turnId"], "what": "files"},
    )
    assert outcome["conflicts"] == [] and outcome["failed"] == []
    assert files(root) == before


async def test_a_rejected_patch_changes_nothing(disk_client: AgentClient, tmp_path: Path) -> None:
    before = files(tmp_path / "ws")
    _done, events, log = await run(disk_client, tmp_path, PATCH, "reject_once")
    assert files(tmp_path / "ws") == before
    assert tool_result(log)["is_error"]
    assert [e["status"] for e in events if e["type"] == "tool_call_update"] == ["declined"]


async def test_a_hunk_that_does_not_apply_is_named_and_nothing_changes(
    disk_client: AgentClient, tmp_path: Path
) -> None:
    before = files(tmp_path / "ws")
    bad = PATCH.replace("-a = 1", "-a = 100")
    _done, events, log = await run(disk_client, tmp_path, bad, None)
    assert files(tmp_path / "ws") == before
    assert not [e for e in events if e["type"] == "permission_request"]
    result = tool_result(log)
    assert result["is_error"]
    assert result["content"].startswith("The patch was not applied; no file was changed.")
    assert (
        "move.py (patch line 9): hunk 1 (patch line 11, '-a = 100' / '+a = 2')" in result["content"]
    )


async def test_an_edit_deny_rule_on_one_path_denies_the_whole_patch(tmp_path: Path) -> None:
    root = workspace(tmp_path, {"permissions": {"deny": ["Edit(old.txt)"]}})
    client = await start(root, apply_edit=False, operations=[])
    try:
        before = files(root)
        _done, events, log = await run(client, tmp_path, PATCH, None)
    finally:
        await client.shutdown_session()
        await client.stop()
    assert files(root) == before
    assert [e["status"] for e in events if e["type"] == "tool_call_update"] == ["declined"]
    assert "Edit(old.txt)" in tool_result(log)["content"]


async def test_an_editor_with_file_operations_gets_one_apply_edit(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    client = await start(root, apply_edit=True, operations=OPERATIONS)
    try:
        _done, _events, log = await run(client, tmp_path, PATCH, "allow_once")
    finally:
        await client.shutdown_session()
        await client.stop()
    (params,) = client.applied_edits
    changes = params.edit.document_changes or []
    kinds = [type(c).__name__ for c in changes]
    assert kinds == [
        "CreateFile",
        "TextDocumentEdit",
        "TextDocumentEdit",
        "DeleteFile",
        "TextDocumentEdit",
        "RenameFile",
    ]
    rename = changes[-1]
    assert isinstance(rename, lsp.RenameFile)
    assert (rename.old_uri, rename.new_uri) == (
        (root / "move.py").as_uri(),
        (root / "pkg" / "moved.py").as_uri(),
    )
    # This test editor changes no file itself, so the daemon made the disk match.
    assert files(root) == APPLIED
    assert not tool_result(log)["is_error"]


async def test_an_open_buffer_is_patched_in_the_editor_as_it_stands(tmp_path: Path) -> None:
    """The patch is planned against the unsaved buffer and sent against its version."""
    root = workspace(tmp_path)
    client = await start(root, apply_edit=True, operations=OPERATIONS)
    app = root / "src" / "app.py"
    unsaved = APP + "# not saved yet\n"
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(app.as_uri(), "python", 3, unsaved))
    )
    buffer = {"text": unsaved}

    def editor(params: lsp.ApplyWorkspaceEditParams) -> bool:
        for change in params.edit.document_changes or []:
            if (
                isinstance(change, lsp.TextDocumentEdit)
                and change.text_document.uri == app.as_uri()
            ):
                assert change.text_document.version == 3
                edits = [
                    Edit(
                        (e.range.start.line, e.range.start.character),
                        (e.range.end.line, e.range.end.character),
                        e.new_text,
                    )
                    for e in change.edits
                    if isinstance(e, lsp.TextEdit)
                ]
                buffer["text"] = apply_edits(buffer["text"], edits, "utf-16")
                identifier = lsp.VersionedTextDocumentIdentifier(version=4, uri=app.as_uri())
                whole = lsp.TextDocumentContentChangeWholeDocument(text=buffer["text"])
                client.text_document_did_change(
                    lsp.DidChangeTextDocumentParams(identifier, [whole])
                )
        return True

    client.edit_handler = editor
    try:
        _done, _events, log = await run(client, tmp_path, PATCH, "allow_once")
    finally:
        await client.shutdown_session()
        await client.stop()
    assert not tool_result(log)["is_error"], tool_result(log)["content"]
    assert buffer["text"] == APPLIED["src/app.py"] + "# not saved yet\n"
    assert app.read_text() == buffer["text"]
