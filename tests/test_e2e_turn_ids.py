"""A resumed, paged or forked history names the turn each user message began, over stdio:
the id is the one agent/submitMessage gave, and agent/rewind accepts it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_client import AgentClient, write_script

SCRIPT = [
    {"text": "Hello."},
    {
        "tool_calls": [
            {"id": "w1", "name": "Write", "input": {"file_path": "notes.txt", "content": "n\n"}}
        ]
    },
    {"text": "Wrote notes.txt."},
]


async def two_turns(client: AgentClient, tmp_path: Path) -> tuple[str, list[str]]:
    """A closed session of two turns (the second writes notes.txt); its id and turn ids."""
    result = await client.new_session(
        tmp_path / "ws",
        provider="scripted",
        permissionMode="acceptEdits",
        script=str(write_script(tmp_path / "script.jsonl", SCRIPT)),
    )
    session: str = result["sessionId"]
    first, _ = await client.run_turn(session, "say hello")
    second, _ = await client.run_turn(session, "write notes")
    assert (tmp_path / "ws" / "notes.txt").is_file()
    await client.request("agent/closeSession", {"sessionId": session})
    return session, [first, second]


def turn_ids(messages: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    return [(m["role"], m.get("turnId")) for m in messages]


async def test_a_resumed_history_carries_the_turn_ids_rewind_takes(
    client: AgentClient, tmp_path: Path
) -> None:
    session, (first, second) = await two_turns(client, tmp_path)
    resumed = await client.request(
        "agent/resumeSession", {"sessionId": session, "script": [{"text": "again"}]}
    )
    # The tool results of the second turn are a user message that began nothing.
    assert turn_ids(resumed["messages"]) == [
        ("user", first),
        ("assistant", None),
        ("user", second),
        ("assistant", None),
        ("user", None),
        ("assistant", None),
    ]
    rewound = await client.request(
        "agent/rewind", {"sessionId": session, "turnId": second, "what": "both"}
    )
    assert rewound["deleted"] == [str(tmp_path / "ws" / "notes.txt")]
    assert rewound["removedMessageIds"] == [m["messageId"] for m in resumed["messages"][2:]]
    assert not (tmp_path / "ws" / "notes.txt").exists()


async def test_pages_of_a_resumed_history_carry_the_turn_ids(
    client: AgentClient, tmp_path: Path
) -> None:
    session, (first, second) = await two_turns(client, tmp_path)
    resumed = await client.request(
        "agent/resumeSession",
        {"sessionId": session, "messageLimit": 1, "script": [{"text": "again"}]},
    )
    pages, cursor = resumed["messages"], resumed["messagesCursor"]
    while cursor is not None:
        page = await client.request(
            "agent/getMessages", {"sessionId": session, "before": cursor, "limit": 1}
        )
        pages = page["messages"] + pages
        cursor = page.get("nextCursor")
    began = [m["turnId"] for m in pages if "turnId" in m]
    assert began == [first, second]
    assert [m["role"] for m in pages if "turnId" in m] == ["user", "user"]


async def test_a_fork_keeps_the_turn_ids_and_rewinds_its_own_conversation(
    client: AgentClient, tmp_path: Path
) -> None:
    session, (first, second) = await two_turns(client, tmp_path)
    forked = await client.request("agent/forkSession", {"sessionId": session})
    assert [m.get("turnId") for m in forked["messages"]][::2] == [first, second, None]
    fork = forked["sessionId"]
    rewound = await client.request(
        "agent/rewind", {"sessionId": fork, "turnId": second, "what": "conversation"}
    )
    assert rewound["removedMessageIds"] == [m["messageId"] for m in forked["messages"][2:]]
    # The fork resumed later still names its first turn.
    await client.request("agent/closeSession", {"sessionId": fork})
    again = await client.request("agent/resumeSession", {"sessionId": fork})
    assert turn_ids(again["messages"]) == [("user", first), ("assistant", None)]
    # A fork cut before the second message keeps only the first turn's id.
    cut = await client.request(
        "agent/forkSession",
        {"sessionId": session, "messageId": forked["messages"][2]["messageId"]},
    )
    assert turn_ids(cut["messages"]) == [("user", first), ("assistant", None)]
