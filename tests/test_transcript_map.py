"""Resuming from a transcript's tail: the same session as a full load, fewer messages parsed."""

from __future__ import annotations

import json
from pathlib import Path

from agentls.events import Compaction
from agentls.messages import (
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    block_to_dict,
    user_text,
)
from agentls.session.records import HistoryCleared, Rewound, StateSaved, TurnBegan
from agentls.session.store import LoadedSession, SessionMeta, Transcript, load_transcript
from agentls.session.transcript_map import (
    display_page,
    load_tail,
    map_transcript,
    saved_map_path,
)
from test_store import open_transcript


def ids(messages: list[Message]) -> list[str]:
    return [m.id for m in messages]


def same_session(tail: LoadedSession, full: LoadedSession) -> None:
    """The same history, state and display page (the repair's results get fresh ids)."""
    added = len(full.repaired)
    assert len(tail.repaired) == added
    assert [m.content for m in tail.repaired] == [m.content for m in full.repaired]
    assert tail.history[: len(tail.history) - added] == full.history[: len(full.history) - added]
    assert tail.state == full.state
    assert tail.overrides == full.overrides
    assert (tail.meta.session_id, tail.meta.cwd) == (full.meta.session_id, full.meta.cwd)
    start = tail.display_start
    shown = ids(tail.display[: len(tail.display) - added])
    assert shown == ids(full.display[start : len(full.display) - added])
    assert tail.display_turns == full.display_turns[start:]
    # A page's first message began its turn only if no earlier message was of that turn.
    assert tail.turn_starts == {m: t for m, t in full.turn_starts.items() if m in shown}


def busy_transcript(tmp_path: Path) -> Path:
    """Turns, a compaction, a rewind of the conversation, a /clear, more turns, a record
    in another key order, one of an unknown type, and a call a crash left unanswered."""
    transcript = open_transcript(tmp_path)
    history: list[Message] = []

    def turn(turn_id: str, text: str) -> None:
        transcript.write(TurnBegan(turn_id))
        for message in (user_text(text), Message("assistant", (TextBlock(f"re {text}"),))):
            transcript.record_message(message, turn_id)
            history.append(message)
        transcript.write(StateSaved(user_intent=text))

    for n in range(4):
        turn(f"turn_a{n}", f"early {n}")
    transcript.write(HistoryCleared())
    transcript.write(StateSaved())
    for n in range(6):
        turn(f"turn_b{n}", f"middle {n}")
    summary = user_text("[Conversation compacted: summary]")
    transcript.record_compaction([summary, *history[-2:]], Compaction("auto", 9, 1), ())
    for n in range(3):
        turn(f"turn_c{n}", f"late {n}")
    transcript.record_rewind(Rewound("turn_c1", "conversation", 4), [summary, *history[-6:-4]])
    transcript.write(Rewound("turn_c0", "files"))
    turn("turn_d0", "after the rewind")
    transcript.close()
    with transcript.path.open("a", encoding="utf-8") as handle:
        odd = user_text("keys in another order")
        line = {"ts": 1.0, "message": {"id": odd.id, "role": "user", "content": []}}
        handle.write(json.dumps({**line, "turnId": "turn_d0", "type": "message"}) + "\n")
        handle.write('{"type": "from_the_future"}\n')
        call = ToolUseBlock("toolu_1", "Read", {"file_path": "a"})
        body = {"id": "msg_cut", "role": "assistant", "content": [block_to_dict(call)]}
        handle.write(json.dumps({"type": "message", "turnId": "turn_d0", "message": body}))
        handle.write("\n")
    return transcript.path


def test_a_tail_load_is_the_full_load_with_a_shorter_display(tmp_path: Path) -> None:
    path = busy_transcript(tmp_path)
    full = load_transcript(path)
    assert full.repaired and any(isinstance(b, ToolResultBlock) for b in full.repaired[-1].content)
    for limit in (0, 1, 3, 1000):
        tail = load_tail(path, limit)
        same_session(tail, full)
        assert len(tail.display) == min(limit, len(full.display) - 1) + 1  # + the repair
    assert load_tail(path, 1000).display_start == 0


def test_pages_of_the_display_go_back_to_its_start(tmp_path: Path) -> None:
    path = busy_transcript(tmp_path)
    shown = load_transcript(path).display[:-1]  # the repair's result is not on disk yet
    pages: list[Message] = []
    starts: dict[str, str] = {}
    before = None
    while before != 0:
        page, before = display_page(path, before, 4)
        pages = page.messages + pages
        starts.update(page.turn_starts)
    assert ids(pages) == ids(shown)
    assert starts == load_transcript(path).turn_starts


def test_each_user_message_that_began_a_turn_carries_its_id(tmp_path: Path) -> None:
    full = load_transcript(busy_transcript(tmp_path))
    texts = {m.id: b.text for m in full.display for b in m.content if isinstance(b, TextBlock)}
    began = {texts[m]: turn for m, turn in full.turn_starts.items()}
    # The /clear and the rewind removed the early turns and turn_c1 on; the odd line of
    # turn_d0 is its second user message, not its first.
    assert began == {
        **{f"middle {n}": f"turn_b{n}" for n in range(6)},
        "late 0": "turn_c0",
        "after the rewind": "turn_d0",
    }


def test_the_map_skips_the_messages_before_the_boundary(tmp_path: Path) -> None:
    transcript = open_transcript(tmp_path)
    for n in range(50):
        transcript.record_message(user_text(f"old {n}"), "turn_1")
    transcript.record_compaction([user_text("summary")], Compaction("auto", 9, 1), ())
    transcript.record_message(user_text("new"), "turn_2")
    transcript.close()
    found = map_transcript(transcript.path)
    assert len(found.history) == 2 and len(found.display) == 51


def test_the_saved_map_is_brought_up_to_date_and_dropped_when_it_does_not_fit(
    tmp_path: Path,
) -> None:
    path = busy_transcript(tmp_path)
    load_tail(path, 5)
    saved = saved_map_path(path)
    assert json.loads(saved.read_text())["size"] == path.stat().st_size
    # More turns, a /clear and a rewind appended after the map was saved.
    transcript = Transcript(path, SessionMeta("sess_abc", str(tmp_path)))
    transcript.record_message(user_text("appended"), "turn_e0")
    transcript.write(TurnBegan("turn_e1"))
    transcript.record_message(user_text("gone soon"), "turn_e1")
    transcript.record_rewind(Rewound("turn_e1", "conversation"), [user_text("kept")])
    transcript.close()
    same_session(load_tail(path, 7), load_transcript(path))
    assert json.loads(saved.read_text())["size"] == path.stat().st_size
    transcript = Transcript(path, SessionMeta("sess_abc", str(tmp_path)))
    transcript.write(HistoryCleared())
    transcript.record_message(user_text("after the clear"), "turn_f0")
    transcript.close()
    same_session(load_tail(path, 3), load_transcript(path))
    # A transcript replaced by hand with another: the map no longer fits and is redone.
    other = busy_transcript(tmp_path / "other")
    path.write_bytes(other.read_bytes() + b'{"type": "clear"}\n')
    same_session(load_tail(path, 4), load_transcript(path))
    saved.write_text("{torn")
    same_session(load_tail(path, 4), load_transcript(path))


def test_a_page_never_starts_with_results_whose_calls_are_on_the_page_before(
    tmp_path: Path,
) -> None:
    transcript = open_transcript(tmp_path)
    for n in range(6):
        call = ToolUseBlock(f"toolu_{n}", "Read", {"file_path": f"f{n}"})
        transcript.record_message(user_text(f"read f{n}"), f"turn_{n}")
        transcript.record_message(Message("assistant", (call,)), f"turn_{n}")
        result = Message("user", (ToolResultBlock(call.id, f"content {n}"),))
        transcript.record_message(result, f"turn_{n}")
        transcript.record_message(Message("assistant", (TextBlock("done"),)), f"turn_{n}")
    transcript.close()
    everything = ids(load_transcript(transcript.path).display)
    for limit in range(1, 6):
        tail = load_tail(transcript.path, limit)
        assert not any(isinstance(b, ToolResultBlock) for b in tail.display[0].content)
        pages, before = tail.display, tail.display_start
        while before:
            page, before = display_page(transcript.path, before, limit)
            assert not any(isinstance(b, ToolResultBlock) for b in page.messages[0].content)
            pages = page.messages + pages
        assert ids(pages) == everything
