"""agent/rewind with dryRun over stdio: the preview changes nothing (files, history,
transcript, checkpoints) and names exactly what the real rewind then does, with each
file's diff from its current content to the restored one."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types as lsp

from agent_client import AgentClient, capabilities, daemon_config
from agentls.session.store import transcript_path
from test_e2e_rewind import CRLF, TURN_ONE, TURN_TWO, files, rewind, scripted
from test_e2e_rewind import workspace as workspace


@pytest_lsp.fixture(config=daemon_config())
async def client(lsp_client: AgentClient, workspace: Path):
    params = lsp.InitializeParams(capabilities=capabilities(True), root_uri=workspace.as_uri())
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


def session_files(session: str) -> dict[str, bytes]:
    """The bytes of everything the session keeps under AGENTLS_HOME (transcript,
    checkpoints), so a preview is seen to write none of it."""
    transcript = transcript_path(Path(os.environ["AGENTLS_HOME"]), session)
    kept = {str(transcript): transcript.read_bytes()}
    for root, _dirs, names in os.walk(transcript.parent):
        for name in names:
            path = Path(root, name)
            if session in str(path):
                kept[str(path)] = path.read_bytes()
    return kept


async def messages(client: AgentClient, session: str) -> list[Any]:
    resumed = await client.request("agent/resumeSession", {"sessionId": session})
    shown: list[Any] = resumed["messages"]
    return shown


async def test_a_preview_changes_nothing_and_names_what_the_rewind_does(
    client: AgentClient,
    workspace: Path,
    tmp_path: Path,
) -> None:
    session = await scripted(client, tmp_path, TURN_ONE + TURN_TWO)
    before_one = files(workspace)
    one, _done = await client.run_turn(session, "turn one")
    await client.run_turn(session, "turn two")
    after_two = files(workspace)
    history = await messages(client, session)
    kept = session_files(session)

    preview = await rewind(client, session, one, "both", dryRun=True)

    assert files(workspace) == after_two
    assert session_files(session) == kept
    assert await messages(client, session) == history
    assert preview["messagesRemoved"] == 8 and len(preview["removedMessageIds"]) == 8
    shown = {Path(f["path"]).name: f for f in preview["files"]}
    assert sorted(shown) == ["bom.txt", "crlf.txt", "latin.txt", "new.txt"]
    # From what the file holds now to what it goes back to.
    assert shown["crlf.txt"]["diff"] == (
        "--- a/crlf.txt\n+++ b/crlf.txt\n@@ -1,3 +1,3 @@\n one\r\n-2\r\n+two\r\n three\r\n"
    )
    assert shown["new.txt"]["deleted"] and shown["new.txt"]["diff"].startswith(
        "--- a/made/new.txt\n+++ /dev/null\n"
    )

    done = await rewind(client, session, one, "both")

    assert done == preview
    assert files(workspace) == before_one


async def test_a_preview_lists_the_files_the_user_changed_as_conflicts(
    client: AgentClient,
    workspace: Path,
    tmp_path: Path,
) -> None:
    session = await scripted(client, tmp_path, TURN_ONE)
    one, _done = await client.run_turn(session, "turn one")
    (workspace / "crlf.txt").write_bytes(b"the user's\n")
    now = files(workspace)

    preview = await rewind(client, session, one, "files", dryRun=True)
    forced = await rewind(client, session, one, "files", dryRun=True, force=True)

    assert files(workspace) == now
    assert [(Path(c["path"]).name, c["reason"]) for c in preview["conflicts"]] == [
        ("crlf.txt", "changed since the agent last wrote it")
    ]
    assert "crlf.txt" not in {Path(f["path"]).name for f in preview["files"]}
    assert preview["messagesRemoved"] == 0
    assert forced["conflicts"] == [] and str(workspace / "crlf.txt") in forced["restored"]
    done = await rewind(client, session, one, "files", force=True)
    assert done == forced
    assert (workspace / "crlf.txt").read_bytes() == CRLF
