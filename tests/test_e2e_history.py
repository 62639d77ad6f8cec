"""History never loaded whole, through the real daemon: the session index and its paging,
a resume that reads only the tail of a long transcript, older messages page by page, and
rewind and fork around the last compaction boundary."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from agent_client import read_requests, running_daemon
from agentls.events import Compaction
from agentls.messages import Message, TextBlock, new_id, user_text
from agentls.session.index import index_path
from agentls.session.records import SessionStarted, TurnBegan, TurnEnded
from agentls.session.store import SessionMeta, Transcript, transcript_path

SCRIPTED = {"provider": "scripted", "script": [{"text": "ok"}]}


def write_session(
    home: Path, cwd: Path, turns: int, compact_at: int | None = None
) -> tuple[str, list[str], list[str]]:
    """A transcript of `turns` two-message turns, compacted before turn `compact_at` (the
    summary and the last turn kept); its id, every message id, every turn id."""
    session_id = new_id("sess")
    meta = SessionMeta(session_id, str(cwd), provider="scripted", model="scripted")
    transcript = Transcript(transcript_path(home, session_id), meta)
    transcript.write(SessionStarted(session_id, str(cwd), "scripted", "scripted", SCRIPTED))
    history: list[Message] = []
    message_ids, turn_ids = [], []
    for n in range(turns):
        if n == compact_at:
            history = [user_text("[Conversation compacted: the story so far]"), *history[-2:]]
            transcript.record_compaction(history, Compaction("auto", 90_000, 900), ("summary",))
        turn_id = new_id("turn")
        transcript.write(TurnBegan(turn_id))
        for message in (user_text(f"question {n}"), Message("assistant", (TextBlock(f"a{n}"),))):
            transcript.record_message(message, turn_id)
            history.append(message)
            message_ids.append(message.id)
        transcript.write(TurnEnded(turn_id, "end_turn", 1))
        turn_ids.append(turn_id)
    meta.turns = turns
    transcript.touch(title=f"session of {turns} turns")
    transcript.close()
    return session_id, message_ids, turn_ids


async def all_listed(client: object, limit: int) -> list[str]:
    listed: list[str] = []
    params: dict[str, object] = {"limit": limit}
    while True:
        page = await client.request("agent/listSessions", params)  # type: ignore[attr-defined]
        listed += [s["sessionId"] for s in page["sessions"]]
        if "nextCursor" not in page:
            return listed
        params = {"limit": limit, "cursor": page["nextCursor"]}


async def test_listing_pages_through_the_index_and_follows_hand_edits(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    ids = [write_session(home, ws, 1)[0] for _ in range(120)]
    async with running_daemon(tmp_path, AGENTLS_HOME=str(home)) as client:
        listed = await all_listed(client, 50)
        assert sorted(listed) == sorted(ids) and len(listed) == 120
        assert index_path(home).is_file()
        # A transcript copied in by hand, without its meta file, and one deleted by hand.
        other = tmp_path / "other"
        added = write_session(other, ws, 1)[0]
        shutil.copy(transcript_path(other, added), transcript_path(home, added))
        transcript_path(home, ids[0]).unlink()
        listed = await all_listed(client, 50)
        assert added in listed and ids[0] not in listed and len(listed) == 120
        index_path(home).write_text('{"version": 1, "sessions": {"sess_')
        assert sorted(await all_listed(client, 500)) == sorted(listed)
        assert json.loads(index_path(home).read_text())["version"] == 1


async def test_a_long_session_resumes_from_its_tail_and_pages_back(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    session_id, message_ids, _turns = write_session(home, ws, 600, compact_at=590)
    log = tmp_path / "requests.jsonl"
    async with running_daemon(tmp_path, AGENTLS_HOME=str(home)) as client:
        resumed = await client.request(
            "agent/resumeSession",
            {
                "sessionId": session_id,
                "messageLimit": 25,
                "script": [{"text": "resumed"}],
                "requestLog": str(log),
            },
        )
        assert [m["messageId"] for m in resumed["messages"]] == message_ids[-25:]
        assert resumed["messagesCursor"] == str(len(message_ids) - 25)
        pages, cursor = [], resumed["messagesCursor"]
        while cursor is not None:
            page = await client.request(
                "agent/getMessages", {"sessionId": session_id, "before": cursor, "limit": 400}
            )
            pages = page["messages"] + pages
            cursor = page.get("nextCursor")
        assert [m["messageId"] for m in pages] == message_ids[:-25]
        await client.run_turn(session_id, "and now?")
    # The model continues from the boundary: the summary, the turn kept, the ten after it.
    sent = json.dumps(read_requests(log)[0]["messages"])
    assert "the story so far" in sent and "question 589" in sent and "question 599" in sent
    assert "question 588" not in sent


async def test_rewind_before_the_boundary_after_a_tail_resume(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    session_id, message_ids, turn_ids = write_session(home, ws, 300, compact_at=290)
    log = tmp_path / "requests.jsonl"
    async with running_daemon(tmp_path, AGENTLS_HOME=str(home)) as client:
        resumed = await client.request(
            "agent/resumeSession",
            {
                "sessionId": session_id,
                "messageLimit": 0,
                "script": [{"text": "after the rewind"}],
                "requestLog": str(log),
            },
        )
        assert resumed["messages"] == [] and resumed["messagesCursor"] == "600"
        with pytest.raises(JsonRpcException, match="before its last compaction"):
            await client.request(
                "agent/forkSession", {"sessionId": session_id, "messageId": message_ids[10]}
            )
        fork = await client.request(
            "agent/forkSession", {"sessionId": session_id, "messageId": message_ids[-2]}
        )
        assert fork["messages"][-1]["messageId"] == message_ids[-3]
        rewound = await client.request(
            "agent/rewind",
            {"sessionId": session_id, "turnId": turn_ids[100], "what": "conversation"},
        )
        assert rewound["removedMessageIds"] == message_ids[200:]
        await client.run_turn(session_id, "again from turn 100")
        latest = await client.request("agent/getMessages", {"sessionId": session_id})
    assert len(read_requests(log)[0]["messages"]) == 200 + 1
    shown = [m["messageId"] for m in latest["messages"]]
    assert shown[:-2] == message_ids[102:200] and latest["nextCursor"] == "102"


async def test_bad_cursors_and_unknown_sessions_are_refused(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    session_id = write_session(home, ws, 3)[0]
    async with running_daemon(tmp_path, AGENTLS_HOME=str(home)) as client:
        for before in ("x", "-1", "9" * 20):
            with pytest.raises(JsonRpcException) as bad:
                params = {"sessionId": session_id, "before": before}
                await client.request("agent/getMessages", params)
            assert bad.value.code == -32602
        with pytest.raises(JsonRpcException) as unknown:
            await client.request("agent/getMessages", {"sessionId": "sess_nothere"})
        assert unknown.value.code == 1001
        page = await client.request("agent/getMessages", {"sessionId": session_id, "limit": 4})
        assert len(page["messages"]) == 4 and page["nextCursor"] == "2"
