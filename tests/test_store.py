"""Transcripts on disk: torn lines, compaction boundaries, and crash repair on load."""

from __future__ import annotations

from pathlib import Path

from agentls.loop.history import INTERRUPTED, pairing_problems
from agentls.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, user_text
from agentls.session.store import SessionMeta, Transcript, list_metas, load_transcript, title_from


def open_transcript(tmp_path: Path, session_id: str = "sess_abc") -> Transcript:
    path = tmp_path / "sessions" / f"{session_id}.jsonl"
    transcript = Transcript(path, SessionMeta(session_id, str(tmp_path)))
    transcript.append({"type": "session", "sessionId": session_id, "cwd": str(tmp_path)})
    return transcript


def test_a_torn_last_line_is_skipped(tmp_path: Path) -> None:
    transcript = open_transcript(tmp_path)
    transcript.append_message(user_text("hello"), "t1")
    transcript.close()
    with transcript.path.open("a") as handle:
        handle.write('{"type": "message", "message": {"id": "m", "ro')
    loaded = load_transcript(transcript.path)
    assert [m.text() for m in loaded.history] == ["hello"]


def test_history_starts_at_the_last_boundary_and_display_keeps_everything(tmp_path: Path) -> None:
    transcript = open_transcript(tmp_path)
    old = [user_text("one"), Message("assistant", (TextBlock("a"),))]
    for message in old:
        transcript.append_message(message, "t1")
    summary = user_text("[Conversation compacted: summary]")
    transcript.record_compaction([summary], {"trigger": "manual"})
    later = user_text("two")
    transcript.append_message(later, "t2")
    loaded = load_transcript(transcript.path)
    assert [m.id for m in loaded.history] == [summary.id, later.id]
    assert [m.id for m in loaded.display] == [*(m.id for m in old), later.id]


def test_a_tool_call_cut_by_a_crash_is_paired_on_load(tmp_path: Path) -> None:
    transcript = open_transcript(tmp_path)
    transcript.append_message(user_text("run"), "t1")
    call = Message(
        "assistant", (TextBlock("Running."), ToolUseBlock("x", "Bash", {"command": "ls"}))
    )
    transcript.append_message(call, "t1")
    loaded = load_transcript(transcript.path)
    assert pairing_problems(loaded.history) == []
    (added,) = loaded.repaired
    assert added.content == (ToolResultBlock("x", INTERRUPTED, True),)
    assert loaded.display[-1] == added


def test_listing_is_newest_first_with_titles(tmp_path: Path) -> None:
    first = open_transcript(tmp_path, "sess_one")
    first.touch(title=title_from("\n  Fix the port\nplease"))
    second = open_transcript(tmp_path, "sess_two")
    second.touch(title=title_from("x" * 200), turn_done=True)
    metas = list_metas(tmp_path)
    assert [m.session_id for m in metas] == ["sess_two", "sess_one"]
    assert metas[1].title == "Fix the port"
    assert len(metas[0].title) == 80 and metas[0].turns == 1
