"""`agentls:session/<id>`: another session's title and last words, capped, newest kept."""

from __future__ import annotations

from pathlib import Path

from agentls.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, new_id
from agentls.session.mentions import SESSION_CHARS, session_mention
from agentls.session.records import SessionStarted
from agentls.session.store import SessionMeta, Transcript, transcript_path


def long_session(home: Path, turns: int) -> str:
    session_id = new_id("sess")
    meta = SessionMeta(session_id, str(home), provider="scripted", model="scripted")
    transcript = Transcript(transcript_path(home, session_id), meta)
    transcript.write(SessionStarted(session_id, str(home), "scripted", "scripted", {}))
    for n in range(turns):
        turn = new_id("turn")
        context = TextBlock("<userContext>\n<cwd>/secret/path</cwd>\n</userContext>")
        user = Message("user", (context, TextBlock(f"question {n} " + "w" * 300)))
        call = ToolUseBlock(f"toolu_{n}", "Read", {"file_path": "a.py"})
        reply = Message("assistant", (TextBlock(f"reading {n}"), call))
        result = Message("user", (ToolResultBlock(f"toolu_{n}", "file text " * 50),))
        done = Message("assistant", (TextBlock(f"answer {n}"),))
        for message in (user, reply, result, done):
            transcript.record_message(message, turn)
    meta.turns = turns
    transcript.touch(title="question 0")
    transcript.close()
    return session_id


def test_a_long_session_is_cut_to_its_newest_words(tmp_path: Path) -> None:
    session_id = long_session(tmp_path, 100)
    mention = session_mention(tmp_path, session_id)
    assert mention.error is None and len(mention.text) <= SESSION_CHARS
    parts = mention.text.split("\n\n")
    assert parts[:2] == [
        f"Session {session_id}: question 0 (100 turns)",
        "… (earlier messages left out)",
    ]
    assert parts[-2:] == ["assistant: reading 99\n(called Read)", "assistant: answer 99"]
    # The editor's context block and the tool results are not the session's words.
    assert "secret" not in mention.text and "file text" not in mention.text


def test_an_unknown_session_is_an_error(tmp_path: Path) -> None:
    missing = "sess_" + "a" * 32
    assert session_mention(tmp_path, missing).error == f"no saved session {missing}"
