"""Review before apply over stdio: the user takes some hunks, edits others, and the model
is told what was applied (agent/respondPermission with acceptedText)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from agent_client import AgentClient, capabilities, daemon_config, read_requests

OLD = "alpha = 1\nbeta = 2\ngamma = 3\ndelta = 4\nepsilon = 5\nzeta = 6\neta = 7\ntheta = 8\n"
PROPOSED = OLD.replace("alpha = 1", "alpha = 10").replace("theta = 8", "theta = 80")


@pytest_lsp.fixture(config=daemon_config())
async def client(lsp_client: AgentClient, tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "values.py").write_text(OLD, encoding="utf-8")
    params = lsp.InitializeParams(capabilities=capabilities(True), root_uri=workspace.as_uri())
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


WRITE_SCRIPT = [
    {"tool_calls": [{"id": "r", "name": "Read", "input": {"file_path": "values.py"}}]},
    {
        "tool_calls": [
            {"id": "w", "name": "Write", "input": {"file_path": "values.py", "content": PROPOSED}}
        ]
    },
    {"text": "Done."},
]

EDIT_SCRIPT = [
    {"tool_calls": [{"id": "r", "name": "Read", "input": {"file_path": "values.py"}}]},
    {
        "tool_calls": [
            {
                "id": "e",
                "name": "Edit",
                "input": {
                    "file_path": "values.py",
                    "old_string": "alpha = 1\nbeta = 2",
                    "new_string": "alpha = 10\nbeta = 20",
                },
            }
        ]
    },
    {"text": "Done."},
]


async def review_and_answer(client: AgentClient, session: str, accepted: str) -> dict[str, Any]:
    """Wait for the file change's request and answer it with the text the user accepted."""
    request = await client.events.wait_for(lambda e: e["type"] == "permission_request")
    await client.request(
        "agent/respondPermission",
        {
            "sessionId": session,
            "requestId": request["requestId"],
            "optionId": "allow_once",
            "acceptedText": accepted,
        },
    )
    return request


def last_result(log: Path) -> dict[str, Any]:
    blocks = read_requests(log)[-1]["messages"][-1]["content"]
    return next(b for b in blocks if b["type"] == "tool_result")


async def test_one_hunk_taken_one_left_out_and_one_line_edited(
    client: AgentClient, tmp_path: Path
) -> None:
    session, log = await client.scripted_session(tmp_path, WRITE_SCRIPT)
    # The first hunk is taken and then edited by hand; the second is left out.
    accepted = OLD.replace("alpha = 1", "alpha = 11")
    answering = asyncio.create_task(review_and_answer(client, session, accepted))
    _turn, done = await client.run_turn(session, "bump the values")
    request = await answering
    assert request["diff"] == {
        "path": str(tmp_path / "ws" / "values.py"),
        "oldText": OLD,
        "newText": PROPOSED,
    }
    assert done["stopReason"] == "end_turn"
    assert (tmp_path / "ws" / "values.py").read_text(encoding="utf-8") == accepted
    result = last_result(log)
    assert not result["is_error"]
    assert "applied it with revisions" in result["content"]
    # The model sees exactly how the applied text differs from its proposal.
    assert "-alpha = 10\n+alpha = 11\n" in result["content"]
    assert "-theta = 80\n+theta = 8\n" in result["content"]


async def test_an_edit_accepted_as_proposed_has_no_revision_note(
    client: AgentClient, tmp_path: Path
) -> None:
    session, log = await client.scripted_session(tmp_path, EDIT_SCRIPT)
    proposed = OLD.replace("alpha = 1\nbeta = 2", "alpha = 10\nbeta = 20")
    answering = asyncio.create_task(review_and_answer(client, session, proposed))
    _turn, done = await client.run_turn(session, "bump")
    await answering
    assert done["stopReason"] == "end_turn"
    assert (tmp_path / "ws" / "values.py").read_text(encoding="utf-8") == proposed
    assert "revisions" not in last_result(log)["content"]


async def test_a_revised_edit_applies_the_reviewed_text(
    client: AgentClient, tmp_path: Path
) -> None:
    session, log = await client.scripted_session(tmp_path, EDIT_SCRIPT)
    accepted = OLD.replace("beta = 2", "beta = 20")  # took the beta line, not the alpha one
    answering = asyncio.create_task(review_and_answer(client, session, accepted))
    _turn, done = await client.run_turn(session, "bump")
    await answering
    assert done["stopReason"] == "end_turn"
    assert (tmp_path / "ws" / "values.py").read_text(encoding="utf-8") == accepted
    assert "-alpha = 10\n+alpha = 1\n" in last_result(log)["content"]
    # The editor got the change through workspace/applyEdit like any other edit.
    assert len(client.applied_edits) == 1


async def test_every_hunk_left_out_declines_the_call(client: AgentClient, tmp_path: Path) -> None:
    session, log = await client.scripted_session(tmp_path, WRITE_SCRIPT)
    answering = asyncio.create_task(review_and_answer(client, session, OLD))
    turn, done = await client.run_turn(session, "bump")
    await answering
    assert done["stopReason"] == "end_turn"
    assert (tmp_path / "ws" / "values.py").read_text(encoding="utf-8") == OLD
    result = last_result(log)
    assert result["is_error"] and "rejected all of it" in result["content"]
    statuses = [e["status"] for e in client.events.of_turn(turn) if e["type"] == "tool_call_update"]
    assert "declined" in statuses
    assert client.applied_edits == []


@pytest.mark.parametrize(
    ("option", "extra", "reason"),
    [
        ("reject_once", {}, "reject"),
        ("allow_once", {"updatedInput": {"file_path": "values.py", "content": ""}}, "not both"),
    ],
)
async def test_accepted_text_with_a_wrong_answer_is_refused_and_the_request_stays(
    client: AgentClient, tmp_path: Path, option: str, extra: dict[str, Any], reason: str
) -> None:
    session, _log = await client.scripted_session(tmp_path, WRITE_SCRIPT)
    turn = (await client.request("agent/submitMessage", {"sessionId": session, "text": "go"}))[
        "turnId"
    ]
    request = await client.events.wait_for(lambda e: e["type"] == "permission_request")
    answer = {"sessionId": session, "requestId": request["requestId"], "optionId": option}
    with pytest.raises(JsonRpcInvalidParams) as refused:
        await client.request("agent/respondPermission", {**answer, "acceptedText": OLD, **extra})
    assert reason in str(refused.value)
    # Nothing was lost: the same request still takes a plain answer.
    await client.request("agent/respondPermission", {**answer, "optionId": "allow_once"})
    done = await client.events.turn_completed(turn)
    assert done["stopReason"] == "end_turn"
    assert (tmp_path / "ws" / "values.py").read_text(encoding="utf-8") == PROPOSED


async def test_accepted_text_for_a_request_without_a_diff_is_refused(
    client: AgentClient, tmp_path: Path
) -> None:
    script = [
        {"tool_calls": [{"id": "b", "name": "Bash", "input": {"command": "touch made.txt"}}]},
        {"text": "ok"},
    ]
    session, _log = await client.scripted_session(tmp_path, script)
    turn = (await client.request("agent/submitMessage", {"sessionId": session, "text": "go"}))[
        "turnId"
    ]
    request = await client.events.wait_for(lambda e: e["type"] == "permission_request")
    assert request.get("diff") is None
    answer = {"sessionId": session, "requestId": request["requestId"], "optionId": "allow_once"}
    with pytest.raises(JsonRpcInvalidParams, match="proposed change"):
        await client.request("agent/respondPermission", {**answer, "acceptedText": "x"})
    await client.request("agent/respondPermission", {**answer, "optionId": "reject_once"})
    assert (await client.events.turn_completed(turn))["stopReason"] == "end_turn"


async def test_a_note_of_what_the_user_did_reaches_the_next_message(
    client: AgentClient, tmp_path: Path
) -> None:
    session, log = await client.scripted_session(tmp_path, [{"text": "Noted."}])
    note = "The user undid your change to values.py; it is back to its text before it."
    await client.request("agent/noteUserAction", {"sessionId": session, "text": note})
    _turn, done = await client.run_turn(session, "go on")
    assert done["stopReason"] == "end_turn"
    context = read_requests(log)[0]["messages"][0]["content"][0]["text"]
    assert f"<userAction>{note}</userAction>" in context
    # Given once: a later message does not carry it again.
    await client.run_turn(session, "and now?")
    later = read_requests(log)[1]["messages"][-1]["content"][0]["text"]
    assert "<userAction>" not in later


async def test_a_note_during_a_turn_is_given_at_its_next_step(
    client: AgentClient, tmp_path: Path
) -> None:
    session, log = await client.scripted_session(tmp_path, WRITE_SCRIPT)
    turn = (await client.request("agent/submitMessage", {"sessionId": session, "text": "go"}))[
        "turnId"
    ]
    request = await client.events.wait_for(lambda e: e["type"] == "permission_request")
    await client.request(
        "agent/noteUserAction", {"sessionId": session, "text": "The user reverted values.py."}
    )
    answer = {"sessionId": session, "requestId": request["requestId"], "optionId": "allow_once"}
    await client.request("agent/respondPermission", answer)
    assert (await client.events.turn_completed(turn))["stopReason"] == "end_turn"
    last = read_requests(log)[-1]["messages"][-1]["content"]
    texts = [b.get("text", "") for b in last if b["type"] == "text"]
    assert "<userAction>The user reverted values.py.</userAction>" in texts


async def test_a_note_with_bad_params_is_refused(client: AgentClient, tmp_path: Path) -> None:
    session, _log = await client.scripted_session(tmp_path, [])
    with pytest.raises(JsonRpcInvalidParams):
        await client.request("agent/noteUserAction", {"sessionId": session, "text": ""})
    with pytest.raises(JsonRpcException, match="nope"):
        await client.request("agent/noteUserAction", {"sessionId": "nope", "text": "x"})
