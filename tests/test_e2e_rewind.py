"""Checkpoints, agent/rewind and agent/turnDiff over stdio: files back byte for byte (open
buffers through workspace/applyEdit, created files deleted, Bash's changes in a git work
tree too), the conversation cut so the model no longer sees the removed turns, both
across a daemon restart; user changes reported as conflicts unless forced."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from agent_client import AgentClient, capabilities, daemon_config, read_requests, running_daemon
from test_e2e_edits import Buffer
from test_e2e_fork import user_texts

CRLF = b"one\r\ntwo\r\nthree\r\n"
BOM = b"\xef\xbb\xbfalpha\nbeta\n"
LATIN = b"caf\xe9 cr\xe8me\n"
NOTES = "first line\nsecond line\n"


def call(call_id: str, name: str, **tool_input: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "input": tool_input}


def reads(*paths: str) -> list[dict[str, Any]]:
    return [call(f"r-{p}", "Read", file_path=p) for p in paths]


TURN_ONE = [
    {
        "tool_calls": [
            *reads("crlf.txt", "bom.txt"),
            call("e1", "Edit", file_path="crlf.txt", old_string="two", new_string="TWO"),
            call(
                "m1",
                "MultiEdit",
                file_path="bom.txt",
                edits=[
                    {"old_string": "alpha", "new_string": "ALPHA"},
                    {"old_string": "beta", "new_string": "BETA"},
                ],
            ),
            call("w1", "Write", file_path="made/new.txt", content="made by turn one\n"),
        ]
    },
    {"text": "Turn one done."},
]
TURN_TWO = [
    {
        "tool_calls": [
            *reads("crlf.txt", "latin.txt", "made/new.txt"),
            call("e2", "Edit", file_path="crlf.txt", old_string="TWO", new_string="2"),
            call("w2", "Write", file_path="latin.txt", content="caf\xe9 noir\n"),
            call("e3", "Edit", file_path="made/new.txt", old_string="one", new_string="two"),
        ]
    },
    {"text": "Turn two done."},
]
FILES = ("crlf.txt", "bom.txt", "latin.txt", "made/new.txt")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "crlf.txt").write_bytes(CRLF)
    (root / "bom.txt").write_bytes(BOM)
    (root / "latin.txt").write_bytes(LATIN)
    (root / "notes.txt").write_text(NOTES, encoding="utf-8")
    return root


@pytest_lsp.fixture(config=daemon_config())
async def client(lsp_client: AgentClient, workspace: Path):
    params = lsp.InitializeParams(capabilities=capabilities(True), root_uri=workspace.as_uri())
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


def files(root: Path) -> dict[str, bytes | None]:
    """The bytes of each test file, None when it does not exist."""
    return {name: (root / name).read_bytes() if (root / name).exists() else None for name in FILES}


async def scripted(client: AgentClient, tmp_path: Path, script: list[dict[str, Any]]) -> str:
    session, _log = await client.scripted_session(
        tmp_path, script, permissionMode="bypassPermissions"
    )
    return session


async def rewind(client: AgentClient, session: str, turn: str, what: str, **more: Any) -> Any:
    params = {"sessionId": session, "turnId": turn, "what": what, **more}
    return await client.request("agent/rewind", params)


async def test_files_go_back_byte_for_byte_to_before_each_turn(
    client: AgentClient, workspace: Path, tmp_path: Path
) -> None:
    session = await scripted(client, tmp_path, TURN_ONE + TURN_TWO)
    before_one = files(workspace)
    one, done = await client.run_turn(session, "turn one")
    assert done["stopReason"] == "end_turn"
    after_one = files(workspace)
    assert after_one["crlf.txt"] == b"one\r\nTWO\r\nthree\r\n"
    assert after_one["bom.txt"] == b"\xef\xbb\xbfALPHA\nBETA\n"
    two, done = await client.run_turn(session, "turn two")
    assert done["stopReason"] == "end_turn"
    assert files(workspace)["latin.txt"] == b"caf\xe9 noir\n"

    undone = await rewind(client, session, two, "files")
    assert files(workspace) == after_one
    assert sorted(Path(p).name for p in undone["restored"]) == ["crlf.txt", "latin.txt", "new.txt"]
    assert undone["deleted"] == [] and undone["conflicts"] == [] and undone["messagesRemoved"] == 0

    undone = await rewind(client, session, one, "files")
    assert files(workspace) == before_one
    assert undone["deleted"] == [str(workspace / "made" / "new.txt")]
    assert sorted(Path(p).name for p in undone["restored"]) == ["bom.txt", "crlf.txt"]
    # Nothing is left to undo, and the conversation was not touched.
    again = await rewind(client, session, one, "files")
    assert again["restored"] == [] and again["deleted"] == []
    resumed = await client.request("agent/resumeSession", {"sessionId": session})
    assert len(resumed["messages"]) == 8


async def test_an_open_buffer_is_restored_through_apply_edit(
    client: AgentClient, workspace: Path, tmp_path: Path
) -> None:
    buffer = Buffer(client, workspace / "notes.txt", "utf-16")
    client.edit_handler = buffer.apply
    script = [
        {
            "tool_calls": [
                *reads("notes.txt"),
                call("e", "Edit", file_path="notes.txt", old_string="second", new_string="2nd"),
            ]
        },
        {"text": "Edited."},
        {"text": "I see."},
    ]
    session, log = await client.scripted_session(
        tmp_path, script, permissionMode="bypassPermissions"
    )
    turn, _done = await client.run_turn(session, "edit the notes")
    assert buffer.text == "first line\n2nd line\n"
    edits_before = len(client.applied_edits)

    undone = await rewind(client, session, turn, "files")

    assert undone["restored"] == [str(workspace / "notes.txt")]
    (change,) = client.applied_edits[edits_before].edit.document_changes
    assert isinstance(change, lsp.TextDocumentEdit)
    assert change.text_document.uri == (workspace / "notes.txt").as_uri()
    assert change.text_document.version == buffer.version - 1
    assert buffer.text == NOTES
    assert (workspace / "notes.txt").read_text(encoding="utf-8") == NOTES
    # The model, whose history still holds its edit, is told the file went back.
    await client.run_turn(session, "what now?")
    context = read_requests(log)[-1]["messages"][-1]["content"][0]["text"]
    assert "<userAction>The user rewound files to how they were before some of your " in context
    assert "changes: notes.txt." in context


async def test_a_file_the_user_changed_is_a_conflict_until_forced(
    client: AgentClient, workspace: Path, tmp_path: Path
) -> None:
    session = await scripted(client, tmp_path, TURN_ONE)
    turn, _done = await client.run_turn(session, "turn one")
    (workspace / "crlf.txt").write_bytes(b"the user's own text\n")

    undone = await rewind(client, session, turn, "files")

    assert undone["conflicts"] == [
        {"path": str(workspace / "crlf.txt"), "reason": "changed since the agent last wrote it"}
    ]
    assert (workspace / "crlf.txt").read_bytes() == b"the user's own text\n"
    assert (workspace / "bom.txt").read_bytes() == BOM
    assert not (workspace / "made" / "new.txt").exists()

    forced = await rewind(client, session, turn, "files", force=True)
    assert forced["restored"] == [str(workspace / "crlf.txt")] and forced["conflicts"] == []
    assert (workspace / "crlf.txt").read_bytes() == CRLF


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


async def test_files_bash_changed_in_a_git_work_tree_are_restored(
    client: AgentClient, workspace: Path, tmp_path: Path
) -> None:
    (workspace / ".gitignore").write_text("build/\n", encoding="utf-8")
    git(workspace, "init", "-q")
    git(workspace, "add", ".")
    git(workspace, "commit", "-qm", "start")
    (workspace / "untracked.txt").write_bytes(b"not committed\r\n")
    command = (
        "printf 'rewritten\\n' > crlf.txt && rm latin.txt && echo made > made.txt"
        " && echo more >> untracked.txt && mkdir -p build && echo out > build/o.txt"
    )
    script = [{"tool_calls": [call("b", "Bash", command=command)]}, {"text": "Ran it."}]
    session = await scripted(client, tmp_path, script)
    turn, _done = await client.run_turn(session, "run it")
    assert not (workspace / "latin.txt").exists()

    diff = await client.request("agent/turnDiff", {"sessionId": session, "turnId": turn})
    changed = {Path(f["path"]).name: f for f in diff["files"]}
    assert sorted(changed) == ["crlf.txt", "latin.txt", "made.txt", "untracked.txt"]
    assert changed["latin.txt"]["deleted"] and changed["made.txt"]["created"]

    undone = await rewind(client, session, turn, "files")

    assert undone["deleted"] == [str(workspace / "made.txt")]
    assert (workspace / "crlf.txt").read_bytes() == CRLF
    assert (workspace / "latin.txt").read_bytes() == LATIN
    assert (workspace / "untracked.txt").read_bytes() == b"not committed\r\n"
    assert not (workspace / "made.txt").exists()
    # Ignored files are not watched.
    assert (workspace / "build" / "o.txt").exists()


async def test_turn_diff_gives_a_unified_diff_per_file(
    client: AgentClient, workspace: Path, tmp_path: Path
) -> None:
    script = [
        {
            "tool_calls": [
                *reads("notes.txt"),
                call("e", "Edit", file_path="notes.txt", old_string="second", new_string="2nd"),
                call("w", "Write", file_path="hi.txt", content="hi"),
            ]
        },
        {"text": "Done."},
    ]
    session = await scripted(client, tmp_path, script)
    turn, _done = await client.run_turn(session, "change things")
    (workspace / "notes.txt").write_text("changed by the user later\n", encoding="utf-8")

    diff = await client.request("agent/turnDiff", {"sessionId": session, "turnId": turn})

    assert diff == {
        "files": [
            {
                "path": str(workspace / "notes.txt"),
                "diff": (
                    "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n"
                    " first line\n-second line\n+2nd line\n"
                ),
                "added": 1,
                "removed": 1,
                "created": False,
                "deleted": False,
            },
            {
                "path": str(workspace / "hi.txt"),
                "diff": (
                    "--- /dev/null\n+++ b/hi.txt\n@@ -0,0 +1 @@\n"
                    "+hi\n\\ No newline at end of file\n"
                ),
                "added": 1,
                "removed": 0,
                "created": True,
                "deleted": False,
            },
        ]
    }


async def test_bad_rewind_params_are_clear_errors(
    client: AgentClient, workspace: Path, tmp_path: Path
) -> None:
    script = [{"text": "Hello."}, {"text": "Thinking…", "hang": True}]
    session = await scripted(client, tmp_path, script)
    turn, _done = await client.run_turn(session, "hello")
    with pytest.raises(JsonRpcException) as unknown_turn:
        await rewind(client, session, "turn_nothere", "both")
    assert unknown_turn.value.code == -32602
    assert unknown_turn.value.data == {"field": "turnId"}
    assert "turn_nothere" in str(unknown_turn.value)
    with pytest.raises(JsonRpcException) as bad_what:
        await rewind(client, session, turn, "everything")
    assert bad_what.value.code == -32602
    assert bad_what.value.data[0]["field"] == "what"
    with pytest.raises(JsonRpcException) as unknown_session:
        await rewind(client, "sess_nothere", turn, "files")
    assert unknown_session.value.code == 1001
    with pytest.raises(JsonRpcException) as diff_of_nothing:
        await client.request("agent/turnDiff", {"sessionId": session, "turnId": "turn_x"})
    assert diff_of_nothing.value.data == {"field": "turnId"}
    assert await client.request("agent/turnDiff", {"sessionId": session, "turnId": turn}) == {
        "files": []
    }
    running = await client.request(
        "agent/submitMessage", {"sessionId": session, "text": "think forever"}
    )
    await client.events.wait_for(lambda e: e["type"] == "text_delta")
    with pytest.raises(JsonRpcException) as busy:
        await rewind(client, session, turn, "conversation")
    assert busy.value.code == 1002
    await client.request("agent/abort", {"sessionId": session})
    await client.events.turn_completed(running["turnId"])
    # The daemon serves on, and the history is whole.
    resumed = await client.request("agent/resumeSession", {"sessionId": session})
    assert [m["role"] for m in resumed["messages"]][:2] == ["user", "assistant"]


async def test_rewind_after_a_restart_and_a_conversation_cut_that_survives_resume(
    workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "requests.jsonl"
    first = [
        *TURN_ONE,
        {
            "tool_calls": [
                *reads("notes.txt"),
                call("n", "Write", file_path="notes.txt", content="x"),
            ]
        },
        {"text": "Turn two done."},
    ]
    async with running_daemon(workspace) as client:
        created = await client.new_session(
            workspace, provider="scripted", script=first, permissionMode="bypassPermissions"
        )
        session = created["sessionId"]
        one, _done = await client.run_turn(session, "turn one")
        two, _done = await client.run_turn(session, "turn two")
    assert (workspace / "notes.txt").read_text(encoding="utf-8") == "x"

    async with running_daemon(workspace) as client:
        await client.request(
            "agent/resumeSession",
            {"sessionId": session, "script": [{"text": "Third."}], "requestLog": str(log)},
        )
        undone = await rewind(client, session, two, "both")
        assert undone["restored"] == [str(workspace / "notes.txt")]
        assert undone["messagesRemoved"] == 4
        assert len(undone["removedMessageIds"]) == 4
        assert (workspace / "notes.txt").read_text(encoding="utf-8") == NOTES
        await client.run_turn(session, "turn three")
    assert user_texts(read_requests(log)[0]) == ["turn one", "turn three"]
    assert (workspace / "crlf.txt").read_bytes() == b"one\r\nTWO\r\nthree\r\n"

    async with running_daemon(workspace) as client:
        resumed = await client.request(
            "agent/resumeSession",
            {"sessionId": session, "script": [{"text": "Fourth."}], "requestLog": str(log)},
        )
        texts = [b.get("text") for m in resumed["messages"] for b in m["content"]]
        assert "Turn two done." not in texts and "Third." in texts
        assert undone["removedMessageIds"][0] not in {m["messageId"] for m in resumed["messages"]}
        # Turn one's files still go back after the restart.
        undone = await rewind(client, session, one, "files")
        assert undone["deleted"] == [str(workspace / "made" / "new.txt")]
        assert (workspace / "crlf.txt").read_bytes() == CRLF
        assert (workspace / "bom.txt").read_bytes() == BOM
        await client.run_turn(session, "turn four")
    assert user_texts(read_requests(log)[1]) == ["turn one", "turn three", "turn four"]


async def test_a_created_file_is_deleted_by_the_editor_when_it_takes_deletions(
    workspace: Path, tmp_path: Path
) -> None:
    client = await daemon_config().start()
    assert isinstance(client, AgentClient)
    operations = [lsp.ResourceOperationKind.Create, lsp.ResourceOperationKind.Delete]
    caps = lsp.ClientCapabilities(
        workspace=lsp.WorkspaceClientCapabilities(
            apply_edit=True,
            workspace_edit=lsp.WorkspaceEditClientCapabilities(
                document_changes=True, resource_operations=operations
            ),
        )
    )
    params = lsp.InitializeParams(capabilities=caps, root_uri=workspace.as_uri())
    await client.initialize_session(params)
    script = [{"tool_calls": [call("w", "Write", file_path="fresh.txt", content="new\n")]}]
    try:
        session = await scripted(client, tmp_path, [*script, {"text": "Made it."}])
        turn, _done = await client.run_turn(session, "make a file")
        assert (workspace / "fresh.txt").exists()
        undone = await rewind(client, session, turn, "both")
    finally:
        await client.shutdown_session()
        await client.stop()
    assert undone["deleted"] == [str(workspace / "fresh.txt")]
    assert undone["messagesRemoved"] == 4
    (deletion,) = client.applied_edits[-1].edit.document_changes
    assert isinstance(deletion, lsp.DeleteFile)
    assert deletion.uri == (workspace / "fresh.txt").as_uri()
    assert not (workspace / "fresh.txt").exists()


async def test_a_cut_into_a_compacted_history_goes_back_to_the_messages_as_written(
    client: AgentClient, workspace: Path, tmp_path: Path
) -> None:
    script = [
        {"text": "One."},
        {"text": "Two."},
        {"text": "<summary>The user said one, then two.</summary>"},
        {"text": "Three."},
    ]
    session, log = await client.scripted_session(tmp_path, script)
    await client.run_turn(session, "turn one")
    two, _done = await client.run_turn(session, "turn two")
    await client.request("agent/compact", {"sessionId": session})

    undone = await rewind(client, session, two, "conversation")
    await client.run_turn(session, "turn three")

    assert undone["messagesRemoved"] == 2
    (request,) = read_requests(log)[-1:]
    assert user_texts(request) == ["turn one", "turn three"]
    assert "One." in str(request["messages"]) and "summary" not in str(request["messages"])
