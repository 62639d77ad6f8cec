"""The real daemon over stdio, driven as an editor drives it (pytest-lsp)."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcMethodNotFound

from agent_client import AgentClient, capabilities, daemon_config, read_requests, write_script
from agentls.pairing import INTERRUPTED


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("PORT = 8000\nHOST = 'localhost'\n", encoding="utf-8")
    (root / "notes.md").write_text("# notes\nport is configurable\n", encoding="utf-8")
    return root


@pytest_lsp.fixture(config=daemon_config())
async def client(lsp_client: AgentClient, workspace: Path):
    params = lsp.InitializeParams(capabilities=capabilities(True), root_uri=workspace.as_uri())
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=daemon_config())
async def disk_client(lsp_client: AgentClient, workspace: Path):
    params = lsp.InitializeParams(capabilities=capabilities(False), root_uri=workspace.as_uri())
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


async def scripted_session(
    client: AgentClient, workspace: Path, entries: list[dict], **params: object
) -> tuple[str, Path]:
    script = write_script(workspace.parent / "script.jsonl", entries)
    log = workspace.parent / "requests.jsonl"
    result = await client.new_session(
        workspace, provider="scripted", script=str(script), requestLog=str(log), **params
    )
    return result["sessionId"], log


def tool_results(request: dict) -> list[dict]:
    return [
        block
        for message in request["messages"]
        if message["role"] == "user"
        for block in message["content"]
        if block["type"] == "tool_result"
    ]


def assert_paired(request: dict) -> None:
    messages = request["messages"]
    for i, message in enumerate(messages):
        calls = [b["id"] for b in message["content"] if b["type"] == "tool_use"]
        if calls:
            results = [
                b["tool_use_id"] for b in messages[i + 1]["content"] if b["type"] == "tool_result"
            ]
            assert sorted(results) == sorted(calls)


async def test_initialize_advertises_the_agent_protocol(client: AgentClient) -> None:
    result = await client.request("agent/newSession", {"provider": "scripted", "script": []})
    assert result["tools"] == [
        "Read",
        "Write",
        "Edit",
        "MultiEdit",
        "NotebookEdit",
        "Glob",
        "Grep",
        "Bash",
        "BashOutput",
        "WriteStdin",
        "KillShell",
        "WebFetch",
        "QueryData",
        "SummarizeData",
        "ValidateData",
        "AskUser",
        "TodoWrite",
        "Task",
    ]
    assert result["permissionMode"] == "default"


async def test_two_turn_tool_loop_on_the_scripted_model(
    client: AgentClient, workspace: Path
) -> None:
    session, log = await scripted_session(
        client,
        workspace,
        [
            {
                "text": "Reading.",
                "tool_calls": [{"id": "t1", "name": "Read", "input": {"file_path": "app.py"}}],
            },
            {"text": "The port is 8000."},
        ],
    )
    turn, done = await client.run_turn(session, "Which port?")
    assert done["stopReason"] == "end_turn"
    assert done["turns"] == 2
    events = client.events.of_turn(turn)
    types = [e["type"] for e in events]
    assert types[0] == "turn_started" and types[-1] == "turn_completed"
    assert [e["seq"] for e in events] == list(
        range(events[0]["seq"], events[0]["seq"] + len(events))
    )
    update = next(
        e for e in events if e["type"] == "tool_call_update" and e["status"] == "completed"
    )
    assert "PORT = 8000" in update["content"]
    requests = read_requests(log)
    assert len(requests) == 2
    assert "PORT = 8000" in tool_results(requests[1])[0]["content"]
    assert requests[0]["system_static"] == requests[1]["system_static"]


async def test_parallel_read_only_calls_return_results_in_call_order(
    client: AgentClient, workspace: Path
) -> None:
    calls = [
        {"id": "a", "name": "Read", "input": {"file_path": "notes.md"}},
        {"id": "b", "name": "Glob", "input": {"pattern": "*.py"}},
        {
            "id": "c",
            "name": "Grep",
            "input": {"pattern": "port", "output_mode": "content", "-i": True},
        },
        {"id": "d", "name": "Read", "input": {"file_path": "app.py"}},
    ]
    session, log = await scripted_session(
        client, workspace, [{"tool_calls": calls}, {"text": "ok"}]
    )
    _turn, done = await client.run_turn(session, "look around")
    assert done["stopReason"] == "end_turn"
    results = tool_results(read_requests(log)[1])
    assert [r["tool_use_id"] for r in results] == ["a", "b", "c", "d"]
    assert "port is configurable" in results[0]["content"]
    assert "app.py" in results[1]["content"]
    assert not any(r["is_error"] for r in results)


async def answer_permissions(client: AgentClient, session: str, option: str) -> None:
    request = await client.events.wait_for(lambda e: e["type"] == "permission_request")
    await client.request(
        "agent/respondPermission",
        {"sessionId": session, "requestId": request["requestId"], "optionId": option},
    )


EDIT_SCRIPT = [
    {"tool_calls": [{"id": "r", "name": "Read", "input": {"file_path": "app.py"}}]},
    {
        "tool_calls": [
            {
                "id": "e",
                "name": "Edit",
                "input": {"file_path": "app.py", "old_string": "8000", "new_string": "9000"},
            }
        ]
    },
    {"text": "Changed."},
]


async def test_allowed_edit_goes_through_apply_edit_and_reaches_disk(
    client: AgentClient, workspace: Path
) -> None:
    session, _log = await scripted_session(client, workspace, EDIT_SCRIPT)
    answering = asyncio.create_task(answer_permissions(client, session, "allow_once"))
    turn, done = await client.run_turn(session, "use port 9000")
    await answering
    assert done["stopReason"] == "end_turn"
    assert len(client.applied_edits) == 1
    change = client.applied_edits[0].edit.document_changes[0]
    # Only what changed travels: the editor keeps its cursor, folds and undo history.
    assert [(e.range.start.line, e.range.start.character, e.new_text) for e in change.edits] == [
        (0, 7, "9")
    ]
    assert (workspace / "app.py").read_text() == "PORT = 9000\nHOST = 'localhost'\n"
    resolved = [e for e in client.events.of_turn(turn) if e["type"] == "permission_resolved"]
    assert [r["optionId"] for r in resolved] == ["allow_once"]
    update = next(e for e in client.events.of_turn(turn) if e.get("diff"))
    assert update["diff"]["newText"].startswith("PORT = 9000")
    # The completed change names the line it starts at (0-based), for the card's link.
    events = client.events.of_turn(turn)
    completed = next(e for e in events if e.get("status") == "completed" and e.get("diff"))
    assert completed["locations"] == [{"path": str(workspace / "app.py"), "line": 0}]


async def test_allowed_edit_without_apply_edit_writes_the_disk(
    disk_client: AgentClient, workspace: Path
) -> None:
    session, _log = await scripted_session(disk_client, workspace, EDIT_SCRIPT)
    answering = asyncio.create_task(answer_permissions(disk_client, session, "allow_once"))
    _turn, done = await disk_client.run_turn(session, "use port 9000")
    await answering
    assert done["stopReason"] == "end_turn"
    assert disk_client.applied_edits == []
    assert (workspace / "app.py").read_text().startswith("PORT = 9000")


async def test_denied_edit_becomes_an_error_result_and_the_loop_goes_on(
    client: AgentClient, workspace: Path
) -> None:
    session, log = await scripted_session(client, workspace, EDIT_SCRIPT)
    answering = asyncio.create_task(answer_permissions(client, session, "reject_once"))
    turn, done = await client.run_turn(session, "use port 9000")
    await answering
    assert done["stopReason"] == "end_turn"
    assert (workspace / "app.py").read_text().startswith("PORT = 8000")
    last = tool_results(read_requests(log)[2])[-1]
    assert last["is_error"] and "rejected" in last["content"]
    statuses = [e["status"] for e in client.events.of_turn(turn) if e["type"] == "tool_call_update"]
    assert "declined" in statuses


async def test_abort_during_streaming_ends_the_turn_and_the_next_turn_works(
    client: AgentClient, workspace: Path
) -> None:
    session, log = await scripted_session(
        client,
        workspace,
        [{"text": "This answer never finishes", "hang": True}, {"text": "Fresh answer."}],
    )
    result = await client.request("agent/submitMessage", {"sessionId": session, "text": "go"})
    turn = result["turnId"]
    await client.events.wait_for(lambda e: e["type"] == "text_delta" and e["turnId"] == turn)
    started = time.monotonic()
    aborted = await client.request("agent/abort", {"sessionId": session})
    done = await client.events.turn_completed(turn)
    assert aborted["aborted"] is True
    assert done["stopReason"] == "aborted"
    assert time.monotonic() - started < 15
    _turn2, done2 = await client.run_turn(session, "again")
    assert done2["stopReason"] == "end_turn"
    assert_paired(read_requests(log)[-1])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split()[2] != "Z"
    except OSError:
        return False


async def test_abort_during_bash_kills_the_process_group(
    client: AgentClient, workspace: Path
) -> None:
    pids = workspace.parent / "pids"
    command = f"sleep 30 & echo $! > {pids}; echo $$ >> {pids}; wait"
    session, log = await scripted_session(
        client,
        workspace,
        [
            {"tool_calls": [{"id": "sh", "name": "Bash", "input": {"command": command}}]},
            {"text": "after the abort"},
        ],
        permissionMode="bypassPermissions",
        # Unconfined: in the sandbox's pid namespace `$$` and `$!` are not the host's pids
        # (test_bash_sandbox checks that a boxed command dies with all it started).
        sandbox={"mode": "danger-full-access"},
    )
    result = await client.request("agent/submitMessage", {"sessionId": session, "text": "sleep"})
    turn = result["turnId"]
    await client.events.wait_for(
        lambda e: e["type"] == "tool_call_update" and e["status"] == "in_progress"
    )
    deadline = time.monotonic() + 20  # a loaded machine may start the shell late
    while not (pids.exists() and len(pids.read_text().split()) == 2):
        assert time.monotonic() < deadline, "the command never wrote its pids"
        await asyncio.sleep(0.05)
    numbers = [int(p) for p in pids.read_text().split()]
    started = time.monotonic()
    await client.request("agent/abort", {"sessionId": session, "turnId": turn})
    done = await client.events.turn_completed(turn)
    assert done["stopReason"] == "aborted"
    assert time.monotonic() - started < 15
    await asyncio.sleep(0.2)
    assert not any(_alive(pid) for pid in numbers)
    cancelled = [e for e in client.events.of_turn(turn) if e.get("status") == "cancelled"]
    assert cancelled and cancelled[0]["toolCallId"] == "sh"
    _turn2, done2 = await client.run_turn(session, "next")
    assert done2["stopReason"] == "end_turn"
    last = read_requests(log)[-1]
    assert_paired(last)
    assert tool_results(last)[0]["content"] == INTERRUPTED


async def test_read_sees_the_unsaved_buffer(client: AgentClient, workspace: Path) -> None:
    uri = (workspace / "app.py").as_uri()
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(
                uri=uri, language_id="python", version=1, text="PORT = 1\n"
            )
        )
    )
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                lsp.TextDocumentContentChangePartial(
                    range=lsp.Range(
                        start=lsp.Position(line=0, character=7),
                        end=lsp.Position(line=0, character=8),
                    ),
                    text="4242",
                )
            ],
        )
    )
    session, log = await scripted_session(
        client,
        workspace,
        [
            {"tool_calls": [{"id": "r", "name": "Read", "input": {"file_path": "app.py"}}]},
            {"text": "4242"},
        ],
    )
    _turn, done = await client.run_turn(session, "read it")
    assert done["stopReason"] == "end_turn"
    content = tool_results(read_requests(log)[1])[0]["content"]
    assert "PORT = 4242" in content
    assert "8000" not in content


async def test_bad_requests_get_the_right_error_codes(client: AgentClient, workspace: Path) -> None:
    with pytest.raises(JsonRpcInvalidParams) as bad:
        await client.request("agent/submitMessage", {"sessionId": 5})
    assert "text" in str(bad.value)
    with pytest.raises(JsonRpcInvalidParams):
        await client.request("agent/submitMessage", None)
    with pytest.raises(JsonRpcException) as unknown:
        await client.request("agent/submitMessage", {"sessionId": "nope", "text": "hi"})
    assert unknown.value.code == 1001
    with pytest.raises(JsonRpcMethodNotFound):
        await client.request("agent/nope", {})
    with pytest.raises(JsonRpcException) as unconfigured:
        await client.request("agent/newSession", {"cwd": str(workspace), "provider": "anthropic"})
    assert unconfigured.value.code == 1004
    assert "ANTHROPIC_API_KEY" in str(unconfigured.value)
    with pytest.raises(JsonRpcException) as unknown_request:
        session, _ = await scripted_session(client, workspace, [])
        await client.request(
            "agent/respondPermission",
            {"sessionId": session, "requestId": "perm_x", "optionId": "allow_once"},
        )
    assert unknown_request.value.code == 1003
    still = await client.request("agent/newSession", {"provider": "scripted", "script": []})
    assert still["sessionId"].startswith("sess_")


@pytest_lsp.fixture(config=daemon_config())
async def progress_client(lsp_client: AgentClient, workspace: Path):
    caps = capabilities(True)
    caps.window = lsp.WindowClientCapabilities(work_done_progress=True)
    params = lsp.InitializeParams(capabilities=caps, root_uri=workspace.as_uri())
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


async def test_a_slow_tool_call_shows_work_done_progress(
    progress_client: AgentClient, workspace: Path
) -> None:
    # Well past the 1 s before progress shows, however late its timer fires.
    command = "echo first; sleep 3; echo second"
    session, _log = await scripted_session(
        progress_client,
        workspace,
        [
            {"tool_calls": [{"id": "slow", "name": "Bash", "input": {"command": command}}]},
            {"tool_calls": [{"id": "fast", "name": "Read", "input": {"file_path": "app.py"}}]},
            {"text": "done"},
        ],
        permissionMode="bypassPermissions",
    )
    _turn, done = await progress_client.run_turn(session, "run it")
    assert done["stopReason"] == "end_turn"
    reports = progress_client.progress_reports
    assert list(reports) == ["agentls/slow"]
    kinds = [type(r).__name__ for r in reports["agentls/slow"]]
    assert kinds[0] == "WorkDoneProgressBegin" and kinds[-1] == "WorkDoneProgressEnd"
    assert reports["agentls/slow"][0].title.startswith(("echo first", "Bash"))
    assert reports["agentls/slow"][-1].message == "completed"


async def test_cancel_request_for_a_submit_aborts_its_turn(
    client: AgentClient, workspace: Path
) -> None:
    session, _log = await scripted_session(
        client, workspace, [{"text": "never ends", "hang": True}, {"text": "next"}]
    )
    result = await client.protocol.send_request_async(
        "agent/submitMessage", {"sessionId": session, "text": "go"}, msg_id="submit-1"
    )
    await client.events.wait_for(
        lambda e: e["type"] == "text_delta" and e["turnId"] == result["turnId"]
    )
    client.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id="submit-1"))
    done = await client.events.turn_completed(result["turnId"])
    assert done["stopReason"] == "aborted"
    _turn, again = await client.run_turn(session, "still there?")
    assert again["stopReason"] == "end_turn"
