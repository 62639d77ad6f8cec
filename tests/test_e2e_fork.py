"""agent/forkSession over stdio: a new session with a copy of another's history, whole or
cut at a message, that goes its own way while the first one is untouched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from agent_client import AgentClient, read_requests, write_script


@pytest.fixture
def workspace_files() -> dict[str, str | bytes]:
    return {"app.py": "port = 8000\n"}


SOURCE = [
    {"tool_calls": [{"id": "r1", "name": "Read", "input": {"file_path": "app.py"}}]},
    {"text": "It sets port = 8000."},
    {"text": "8000."},
]


async def two_turns(client: AgentClient, tmp_path: Path) -> str:
    result = await client.new_session(
        tmp_path / "ws",
        provider="scripted",
        script=str(write_script(tmp_path / "source.jsonl", SOURCE)),
    )
    session: str = result["sessionId"]
    await client.run_turn(session, "read app.py")
    await client.run_turn(session, "and the port?")
    return session


def user_texts(request: dict[str, Any]) -> list[str]:
    """The user's own words in each user message of a model request."""
    said = []
    for message in request["messages"]:
        blocks = [b for b in message["content"] if b["type"] == "text"]
        if message["role"] == "user" and len(blocks) >= 2:
            said.append(blocks[1]["text"])
    return said


async def test_a_fork_copies_the_whole_history_and_goes_its_own_way(
    client: AgentClient, tmp_path: Path
) -> None:
    session = await two_turns(client, tmp_path)
    forked = await client.request("agent/forkSession", {"sessionId": session})
    assert forked["sessionId"] != session
    roles = [m["role"] for m in forked["messages"]]
    assert roles == ["user", "assistant", "user", "assistant", "user", "assistant"]
    texts = [b.get("text") for m in forked["messages"] for b in m["content"] if b["type"] == "text"]
    assert "8000." in texts
    listed = await client.request("agent/listSessions", {})
    titles = {s["sessionId"]: s["title"] for s in listed["sessions"]}
    assert titles[forked["sessionId"]] == "Fork: read app.py"
    # Each goes on alone: the fork's next request holds the copied history.
    await client.request("agent/closeSession", {"sessionId": forked["sessionId"]})
    log = tmp_path / "fork.jsonl"
    script = str(write_script(tmp_path / "fork-script.jsonl", [{"text": "Forked."}]))
    resumed = await client.request(
        "agent/resumeSession",
        {"sessionId": forked["sessionId"], "script": script, "requestLog": str(log)},
    )
    _turn, done = await client.run_turn(resumed["sessionId"], "what now?")
    assert done["stopReason"] == "end_turn"
    assert user_texts(read_requests(log)[0]) == ["read app.py", "and the port?", "what now?"]


async def test_a_fork_at_a_user_message_keeps_what_came_before_it(
    client: AgentClient, tmp_path: Path
) -> None:
    session = await two_turns(client, tmp_path)
    second = [
        e["messageId"]
        for e in client.events.of_type("message_completed")
        if e["sessionId"] == session
        and e["role"] == "user"
        and not any(b["type"] == "tool_result" for b in e["content"])
    ][1]
    forked = await client.request("agent/forkSession", {"sessionId": session, "messageId": second})
    roles = [m["role"] for m in forked["messages"]]
    assert roles == ["user", "assistant", "user", "assistant"]  # the first turn, whole
    calls = [b for m in forked["messages"] for b in m["content"] if b["type"] == "tool_use"]
    assert [c["id"] for c in calls] == ["r1"]


async def test_a_fork_at_a_reply_with_calls_keeps_their_results(
    client: AgentClient, tmp_path: Path
) -> None:
    session = await two_turns(client, tmp_path)
    with_call = next(
        e["messageId"]
        for e in client.events.of_type("message_completed")
        if e["sessionId"] == session and any(b["type"] == "tool_use" for b in e["content"])
    )
    forked = await client.request(
        "agent/forkSession", {"sessionId": session, "messageId": with_call}
    )
    last = forked["messages"][-1]
    assert last["role"] == "user" and last["content"][0]["type"] == "tool_result"
    assert last["content"][0]["toolUseId"] == "r1"


async def test_forking_what_is_not_there_is_an_error(client: AgentClient, tmp_path: Path) -> None:
    session = await two_turns(client, tmp_path)
    with pytest.raises(JsonRpcException) as unknown_message:
        await client.request("agent/forkSession", {"sessionId": session, "messageId": "msg_x"})
    assert unknown_message.value.code == -32602
    assert unknown_message.value.data == {"field": "messageId"}
    with pytest.raises(JsonRpcException) as unknown_session:
        await client.request("agent/forkSession", {"sessionId": "sess_nothere"})
    assert unknown_session.value.code == 1001
    # A closed session is forked from its transcript.
    await client.request("agent/closeSession", {"sessionId": session})
    forked = await client.request("agent/forkSession", {"sessionId": session})
    assert len(forked["messages"]) >= 4
