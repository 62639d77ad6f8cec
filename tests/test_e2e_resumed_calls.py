"""A resumed, paged or forked history announces each tool call as it ran, over stdio: the
`toolCalls` of a reply carry the title, kind and places its live `tool_call` event had."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_client import AgentClient, write_script

SCRIPT = [
    {
        "tool_calls": [
            {"id": "r1", "name": "Read", "input": {"file_path": "app.py"}},
            {"id": "b1", "name": "Bash", "input": {"command": "echo hi", "description": "Say hi"}},
        ]
    },
    {"text": "Read it and said hi."},
]


def announced(event: dict[str, Any]) -> dict[str, Any]:
    """What a card shows of a call: the fields `toolCalls` and `tool_call` share."""
    keys = ("toolCallId", "kind", "title", "locations")
    return {key: event[key] for key in keys if event.get(key) is not None}


async def one_turn(client: AgentClient, tmp_path: Path) -> tuple[str, list[dict[str, Any]]]:
    """A closed session whose one turn read app.py and ran a command; its live tool_calls."""
    (tmp_path / "ws" / "app.py").write_text("print('app')\n")
    result = await client.new_session(
        tmp_path / "ws",
        provider="scripted",
        permissionMode="bypassPermissions",
        script=str(write_script(tmp_path / "script.jsonl", SCRIPT)),
    )
    session: str = result["sessionId"]
    turn, _ = await client.run_turn(session, "read app.py and say hi")
    live = [announced(e) for e in client.events.of_turn(turn) if e["type"] == "tool_call"]
    await client.request("agent/closeSession", {"sessionId": session})
    return session, live


def calls_of(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [announced(call) for m in messages for call in m.get("toolCalls") or []]


async def test_a_resumed_read_and_bash_carry_their_live_title_and_kind(
    client: AgentClient, tmp_path: Path
) -> None:
    session, live = await one_turn(client, tmp_path)
    assert [call["kind"] for call in live] == ["read", "execute"]
    # More than the block's bare name: the file, and where it is.
    assert "app.py" in live[0]["title"]
    assert live[0]["locations"] == [{"path": str(tmp_path / "ws" / "app.py")}]
    resumed = await client.request(
        "agent/resumeSession", {"sessionId": session, "script": [{"text": "again"}]}
    )
    assert calls_of(resumed["messages"]) == live
    # Only the reply that made the calls has them, in its blocks' order.
    replies = [m for m in resumed["messages"] if m.get("toolCalls")]
    assert len(replies) == 1
    uses = [b["id"] for b in replies[0]["content"] if b["type"] == "tool_use"]
    assert [call["toolCallId"] for call in replies[0]["toolCalls"]] == uses
    page = await client.request("agent/getMessages", {"sessionId": session, "limit": 100})
    assert calls_of(page["messages"]) == live
    forked = await client.request("agent/forkSession", {"sessionId": session})
    assert calls_of(forked["messages"]) == live
