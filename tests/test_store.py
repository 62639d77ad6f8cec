"""Transcripts on disk: torn lines, compaction boundaries, and crash repair on load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentls.events import Compaction
from agentls.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, user_text
from agentls.pairing import INTERRUPTED, pairing_problems
from agentls.session.records import SessionStarted, StateSaved, TurnEnded, record_from_json
from agentls.session.store import (
    SessionMeta,
    Transcript,
    cut_torn_tail,
    list_metas,
    load_transcript,
    title_from,
)


def open_transcript(tmp_path: Path, session_id: str = "sess_abc") -> Transcript:
    path = tmp_path / "sessions" / f"{session_id}.jsonl"
    transcript = Transcript(path, SessionMeta(session_id, str(tmp_path)))
    transcript.write(SessionStarted(session_id, str(tmp_path)))
    return transcript


def test_a_torn_last_line_is_skipped(tmp_path: Path) -> None:
    transcript = open_transcript(tmp_path)
    transcript.record_message(user_text("hello"), "t1")
    transcript.close()
    with transcript.path.open("a") as handle:
        handle.write('{"type": "message", "message": {"id": "m", "ro')
    loaded = load_transcript(transcript.path)
    assert [m.text() for m in loaded.history] == ["hello"]


def test_a_torn_last_line_is_cut_before_the_next_record_is_appended(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    transcript = open_transcript(tmp_path)
    transcript.record_message(user_text("hello"), "t1")
    transcript.close()
    torn = '{"type": "message", "message": {"id": "m", "ro'
    with transcript.path.open("a") as handle:
        handle.write(torn)
    reopened = Transcript(transcript.path, transcript.meta)
    reopened.record_message(user_text("again"), "t2")
    reopened.close()
    lines = transcript.path.read_text().splitlines()
    assert [json.loads(line)["type"] for line in lines] == ["session", "message", "message"]
    assert [m.text() for m in load_transcript(transcript.path).history] == ["hello", "again"]
    assert f"a last line torn by a crash ({len(torn)} bytes) was cut off" in caplog.text


def test_a_transcript_whose_only_line_is_torn_is_emptied(tmp_path: Path) -> None:
    path = tmp_path / "sess_x.jsonl"
    path.write_text('{"type": "sess')
    assert cut_torn_tail(path) == 14 and path.read_bytes() == b""
    assert cut_torn_tail(path) == 0 and cut_torn_tail(tmp_path / "none.jsonl") == 0


def test_history_starts_at_the_last_boundary_and_display_keeps_everything(tmp_path: Path) -> None:
    transcript = open_transcript(tmp_path)
    old = [user_text("one"), Message("assistant", (TextBlock("a"),))]
    for message in old:
        transcript.record_message(message, "t1")
    summary = user_text("[Conversation compacted: summary]")
    transcript.record_compaction([summary], Compaction("manual", 10, 1), ("summary",))
    later = user_text("two")
    transcript.record_message(later, "t2")
    loaded = load_transcript(transcript.path)
    assert [m.id for m in loaded.history] == [summary.id, later.id]
    assert [m.id for m in loaded.display] == [*(m.id for m in old), later.id]


def test_a_tool_call_cut_by_a_crash_is_paired_on_load(tmp_path: Path) -> None:
    transcript = open_transcript(tmp_path)
    transcript.record_message(user_text("run"), "t1")
    call = Message(
        "assistant", (TextBlock("Running."), ToolUseBlock("x", "Bash", {"command": "ls"}))
    )
    transcript.record_message(call, "t1")
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


def test_every_record_type_reads_back_as_written(tmp_path: Path) -> None:
    transcript = open_transcript(tmp_path)
    transcript.write(StateSaved({"rows": [1, 2]}, "sum them", ("Edit a.py",), ({"q": "?"},)))
    transcript.write(TurnEnded("t1", "error", 2, "internal_error"))
    transcript.close()
    lines = transcript.path.read_text(encoding="utf-8").splitlines()
    records = [record_from_json(json.loads(line)) for line in lines]
    assert records[1:] == [
        StateSaved({"rows": [1, 2]}, "sum them", ("Edit a.py",), ({"q": "?"},)),
        TurnEnded("t1", "error", 2, "internal_error"),
    ]
    loaded = load_transcript(transcript.path)
    assert loaded.state.user_intent == "sum them"


def test_a_lone_surrogate_is_written_and_read_back(tmp_path: Path) -> None:
    transcript = open_transcript(tmp_path)
    transcript.record_message(user_text("odd \ud800 text"), "t1")
    transcript.close()
    loaded = load_transcript(transcript.path)
    assert [m.text() for m in loaded.history] == ["odd \ud800 text"]


def test_a_record_of_an_unknown_type_or_broken_body_is_skipped(tmp_path: Path) -> None:
    transcript = open_transcript(tmp_path)
    transcript.record_message(user_text("kept"), "t1")
    transcript.close()
    with transcript.path.open("a", encoding="utf-8") as handle:
        handle.write('{"type": "from_the_future", "x": 1}\n{"type": "message", "message": 3}\n')
    loaded = load_transcript(transcript.path)
    assert [m.text() for m in loaded.history] == ["kept"]
