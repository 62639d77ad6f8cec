"""The session index beside the transcripts: kept in step with the folder, rebuilt when
missing, torn, of another version, or out of step with transcripts added or deleted by hand."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from agentls.session.index import index_path, indexed_metas
from agentls.session.records import SessionStarted
from agentls.session.store import SessionMeta, Transcript, transcript_path


def make_session(home: Path, session_id: str, title: str) -> Transcript:
    transcript = Transcript(transcript_path(home, session_id), SessionMeta(session_id, "/w"))
    transcript.write(SessionStarted(session_id, "/w", "scripted", "scripted"))
    transcript.touch(title=title)
    transcript.close()
    return transcript


def ids(home: Path) -> list[str]:
    return [m.session_id for m in indexed_metas(home)]


def test_the_index_follows_new_and_renamed_sessions(tmp_path: Path) -> None:
    make_session(tmp_path, "sess_a1", "first")
    assert ids(tmp_path) == ["sess_a1"]
    assert index_path(tmp_path).is_file()
    second = make_session(tmp_path, "sess_b2", "second")
    second.meta.title = ""
    second.touch(title="renamed", turn_done=True)
    metas = indexed_metas(tmp_path)
    assert [(m.session_id, m.title, m.turns) for m in metas] == [
        ("sess_b2", "renamed", 1),
        ("sess_a1", "first", 0),
    ]


def test_a_transcript_added_by_hand_without_its_meta_is_listed_from_its_head(
    tmp_path: Path,
) -> None:
    make_session(tmp_path, "sess_a1", "first")
    assert ids(tmp_path) == ["sess_a1"]
    elsewhere = tmp_path / "other"
    make_session(elsewhere, "sess_c3", "copied")
    shutil.copy(transcript_path(elsewhere, "sess_c3"), transcript_path(tmp_path, "sess_c3"))
    metas = {m.session_id: m for m in indexed_metas(tmp_path)}
    assert set(metas) == {"sess_a1", "sess_c3"}
    assert metas["sess_c3"].cwd == "/w" and metas["sess_c3"].model == "scripted"


def test_a_transcript_deleted_by_hand_leaves_the_listing(tmp_path: Path) -> None:
    make_session(tmp_path, "sess_a1", "first")
    make_session(tmp_path, "sess_b2", "second")
    assert sorted(ids(tmp_path)) == ["sess_a1", "sess_b2"]
    transcript_path(tmp_path, "sess_a1").unlink()
    assert ids(tmp_path) == ["sess_b2"]
    stored = json.loads(index_path(tmp_path).read_text())
    assert list(stored["sessions"]) == ["sess_b2"]


def test_a_torn_or_foreign_index_is_rebuilt(tmp_path: Path) -> None:
    make_session(tmp_path, "sess_a1", "first")
    make_session(tmp_path, "sess_b2", "second")
    ids(tmp_path)
    index = index_path(tmp_path)
    for broken in (index.read_text()[:40], '{"version": 0, "sessions": {}}', "[1]"):
        index.write_text(broken)
        assert sorted(ids(tmp_path)) == ["sess_a1", "sess_b2"]
        assert json.loads(index.read_text())["version"] == 1


def test_an_entry_lying_about_its_file_is_read_again(tmp_path: Path) -> None:
    make_session(tmp_path, "sess_a1", "first")
    ids(tmp_path)
    index = index_path(tmp_path)
    body = json.loads(index.read_text())
    body["sessions"]["sess_a1"]["meta"]["title"] = "stale"
    body["sessions"]["sess_a1"]["stamp"][2] += 1
    index.write_text(json.dumps(body))
    assert [m.title for m in indexed_metas(tmp_path)] == ["first"]
