"""agent/inlineEdit over stdio: an instruction for a selected region runs as a turn whose
every file change is asked (marked `inlineEdit`), lands only as the user accepted it,
and is a turn like any other (history, transcript, rewind)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from agent_client import AgentClient, read_requests

OLD = "".join(f"line{n} = {n}\n" for n in range(1, 13))
# One Edit that changes two lines far apart: two hunks in the editor's review.
EDIT = {
    "file_path": "values.py",
    "old_string": "".join(f"line{n} = {n}\n" for n in range(2, 11)),
    "new_string": "".join(f"line{n} = {n}\n" for n in range(2, 11))
    .replace("line2 = 2", "line2 = 20")
    .replace("line10 = 10", "line10 = 100"),
}
PROPOSED = OLD.replace("line2 = 2", "line2 = 20").replace("line10 = 10", "line10 = 100")
# The user took the first hunk only.
FIRST_HUNK = OLD.replace("line2 = 2", "line2 = 20")
# Lines 2 to 10 selected (0-based lines 1 to 9, to the end of line 10).
RANGE = {"start": {"line": 1, "character": 0}, "end": {"line": 9, "character": 11}}
# No Read first: the inline edit hands the model the file as read.
SCRIPT = [
    {"tool_calls": [{"id": "e", "name": "Edit", "input": EDIT}]},
    {"text": "Bumped lines 2 and 10."},
]


@pytest.fixture
def workspace_files() -> dict[str, str | bytes]:
    return {"values.py": OLD}


def values(tmp_path: Path) -> Path:
    return tmp_path / "ws" / "values.py"


async def inline_edit(
    client: AgentClient, session: str, tmp_path: Path, **params: Any
) -> dict[str, Any]:
    request = {
        "sessionId": session,
        "uri": values(tmp_path).as_uri(),
        "range": RANGE,
        "instruction": "bump lines 2 and 10",
        **params,
    }
    result: dict[str, Any] = await client.request("agent/inlineEdit", request)
    return result


async def answer(client: AgentClient, session: str, option: str, **params: Any) -> dict[str, Any]:
    """Answer the session's next permission request; the request."""
    request = await client.events.wait_for(
        lambda e: e["type"] == "permission_request" and e["sessionId"] == session
    )
    await client.request(
        "agent/respondPermission",
        {"sessionId": session, "requestId": request["requestId"], "optionId": option, **params},
    )
    return request


def transcript_lines(session: str) -> list[dict[str, Any]]:
    home = Path(os.environ["AGENTLS_HOME"])
    text = (home / "sessions" / f"{session}.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line]


async def test_an_inline_edit_accepted_in_part_lands_on_disk_and_in_the_transcript(
    client: AgentClient, tmp_path: Path
) -> None:
    session, log = await client.scripted_session(tmp_path, SCRIPT)
    result = await inline_edit(client, session, tmp_path)
    assert result["queued"] is False
    turn = result["turnId"]
    request = await answer(client, session, "allow_once", acceptedText=FIRST_HUNK)
    done = await client.events.turn_completed(turn)
    assert done["stopReason"] == "end_turn"
    started = next(e for e in client.events.of_turn(turn) if e["type"] == "turn_started")
    assert started["inlineEdit"] == {"uri": values(tmp_path).as_uri(), "range": RANGE}
    assert request["inlineEdit"] is True
    assert request["diff"] == {"path": str(values(tmp_path)), "oldText": OLD, "newText": PROPOSED}
    # Only the accepted hunk, through the editor's applyEdit.
    assert values(tmp_path).read_text(encoding="utf-8") == FIRST_HUNK
    assert len(client.applied_edits) == 1
    # The model got the file marked and the instruction, and heard what was applied.
    first = read_requests(log)[0]["messages"][-1]["content"]
    context = first[0]["text"]
    assert '<inlineEdit path="values.py" lines="2-10">' in context
    assert "----- selection starts (line 2, column 1) -----" in context
    assert "     2\tline2 = 2" in context
    assert first[1]["text"] == "bump lines 2 and 10"
    results = [
        block
        for record in transcript_lines(session)
        if record.get("type") == "message"
        for block in record["message"]["content"]
        if block["type"] == "tool_result"
    ]
    assert "applied it with revisions" in results[-1]["content"]
    assert "-line10 = 100\n+line10 = 10\n" in results[-1]["content"]


async def test_bypass_mode_still_asks_refuses_bash_and_a_rejection_leaves_the_file(
    client: AgentClient, tmp_path: Path
) -> None:
    script = [
        {"tool_calls": [{"id": "b", "name": "Bash", "input": {"command": "touch made.txt"}}]},
        *SCRIPT,
    ]
    session, _log = await client.scripted_session(
        tmp_path, script, permissionMode="bypassPermissions"
    )
    turn = (await inline_edit(client, session, tmp_path))["turnId"]
    request = await answer(client, session, "reject_once")
    done = await client.events.turn_completed(turn)
    assert done["stopReason"] == "end_turn"
    assert request["inlineEdit"] is True and request["toolCallId"] == "e"
    assert values(tmp_path).read_text(encoding="utf-8") == OLD
    assert not (tmp_path / "ws" / "made.txt").exists()
    updates = {
        e["toolCallId"]: e
        for e in client.events.of_turn(turn)
        if e["type"] == "tool_call_update" and e["status"] in ("failed", "declined")
    }
    assert updates["b"]["status"] == "failed" and "Unknown tool 'Bash'" in updates["b"]["content"]
    assert updates["e"]["status"] == "declined"


async def test_rewinding_the_inline_edit_restores_the_file_and_resume_shows_it(
    client: AgentClient, tmp_path: Path
) -> None:
    session, _log = await client.scripted_session(tmp_path, SCRIPT)
    turn = (await inline_edit(client, session, tmp_path))["turnId"]
    await answer(client, session, "allow_once")
    await client.events.turn_completed(turn)
    assert values(tmp_path).read_text(encoding="utf-8") == PROPOSED

    await client.request("agent/closeSession", {"sessionId": session})
    resumed = await client.request("agent/resumeSession", {"sessionId": session})
    user = resumed["messages"][0]
    assert user["role"] == "user"
    assert user["content"][1]["text"] == "bump lines 2 and 10"
    # The selection is the message's attachment.
    assert '<attachment path="values.py" lines="2-10">' in user["content"][0]["text"]

    undone = await client.request(
        "agent/rewind", {"sessionId": session, "turnId": turn, "what": "files"}
    )
    assert undone["restored"] == [str(values(tmp_path))]
    assert values(tmp_path).read_text(encoding="utf-8") == OLD


async def test_an_inline_edit_waits_behind_a_running_turn(
    client: AgentClient, tmp_path: Path
) -> None:
    script = [{"tool_calls": [{"id": "b", "name": "Bash", "input": {"command": "true"}}]}]
    session, _log = await client.scripted_session(tmp_path, script)
    first = await client.request("agent/submitMessage", {"sessionId": session, "text": "go"})
    await client.events.wait_for(lambda e: e["type"] == "permission_request")
    queued = await inline_edit(client, session, tmp_path)
    assert queued["queued"] is True
    await client.request("agent/abort", {"sessionId": session})
    await client.events.turn_completed(first["turnId"])
    await client.events.turn_completed(queued["turnId"])


BAD_PARAMS = [
    ({"uri": "untitled:Untitled-1"}, "uri"),
    ({"uri": "file:///nowhere/at/all.py"}, "uri"),
    (
        {"range": {"start": {"line": 12, "character": 1}, "end": {"line": 12, "character": 1}}},
        "range",
    ),
    (
        {"range": {"start": {"line": 0, "character": 40}, "end": {"line": 1, "character": 0}}},
        "range",
    ),
    (
        {"range": {"start": {"line": 3, "character": 0}, "end": {"line": 1, "character": 0}}},
        "range",
    ),
    ({"instruction": "   "}, "instruction"),
]


async def test_bad_params_name_their_field(client: AgentClient, tmp_path: Path) -> None:
    session, _log = await client.scripted_session(tmp_path, SCRIPT)
    (tmp_path / "elsewhere.py").write_text("x = 1\n", encoding="utf-8")
    cases = [*BAD_PARAMS, ({"uri": (tmp_path / "elsewhere.py").as_uri()}, "uri")]
    for params, field in cases:
        with pytest.raises(JsonRpcException) as caught:
            await inline_edit(client, session, tmp_path, **params)
        assert caught.value.code == -32602, params
        assert caught.value.data == {"field": field}, params
    with pytest.raises(JsonRpcException) as caught:
        await inline_edit(client, session, tmp_path, instruction="")
    assert caught.value.code == -32602
    assert caught.value.data[0]["field"] == "instruction"
    with pytest.raises(JsonRpcException) as caught:
        await inline_edit(client, "sess_nosuchsession", tmp_path)
    assert caught.value.code == 1001
    # Nothing ran: no turn started.
    await asyncio.sleep(0)
    assert not client.events.of_type("turn_started")
