"""A turn's events on their short ways out: deltas skip the books and the review mark,
text too short to hold a secret skips the masker, and a secret in a delta is still masked.

The frames themselves are held byte for byte by tests/test_event_stream_pinned.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentls.events import (
    LoopEvent,
    PermissionRequest,
    SessionEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    TurnCompleted,
)
from agentls.loop.assemble import AssistantAssembler
from agentls.providers.base import TextDelta, ThinkingDelta
from agentls.redact import Masker
from agentls.session.manager import SessionManager
from agentls.session.turn import Turn
from agentls.usage import Usage

SECRET = "abcd1234"  # as short as a secret can be (MIN_SECRET_LENGTH)


def test_text_too_short_for_a_secret_or_a_header_is_returned_as_it_is() -> None:
    masker = Masker([SECRET])
    short = "abcd12"
    assert masker.mask(short) is short
    assert masker.mask(SECRET) == "***"
    assert masker.mask("api-key=1") == "api-key=***"
    delta = TextDeltaEvent("msg_1", short)
    assert masker.mask_value(delta) is delta


def test_the_classes_built_once_per_delta_set_their_fields_plainly() -> None:
    """The provider's delta, the loop's delta event and the session's envelope are built
    for every streamed delta: a frozen dataclass's __init__ goes through
    object.__setattr__ for each field (about 1 µs more per class, a quarter of the
    daemon's CPU per event), so these are plain slots dataclasses."""
    per_delta = (TextDelta, ThinkingDelta, TextDeltaEvent, ThinkingDeltaEvent, SessionEvent)
    for cls in per_delta:
        assert cls.__setattr__ is object.__setattr__, cls.__name__
        assert "__slots__" in vars(cls), cls.__name__


def test_a_secret_streamed_in_one_delta_is_masked() -> None:
    masker = Masker([SECRET])
    masked = masker.mask_value(TextDeltaEvent("msg_1", f"x{SECRET}"))
    assert masked == TextDeltaEvent("msg_1", "x***")
    thinking = masker.mask_value(ThinkingDeltaEvent("msg_1", SECRET))
    assert thinking == ThinkingDeltaEvent("msg_1", "***")


def test_the_assembler_folds_a_text_delta_as_feed_does() -> None:
    by_text, by_feed = AssistantAssembler(), AssistantAssembler()
    for piece in ("The ", "", "port"):
        delta = by_text.text(TextDelta(0, piece))
        fed = by_feed.feed(TextDelta(0, piece))
        assert fed == ([] if delta is None else [TextDeltaEvent(by_feed.message_id, piece)])
        if delta is not None:
            assert delta == TextDeltaEvent(by_text.message_id, piece)
    assert by_text.message().content == by_feed.message().content


async def test_a_turns_deltas_skip_the_review_mark_and_the_rest_is_marked_and_booked(
    tmp_path: Path,
) -> None:
    sent: list[SessionEvent] = []
    manager = SessionManager(sent.append, env={"AGENTLS_HOME": str(tmp_path / "home")})
    session = await manager.create(tmp_path, {"provider": "scripted", "script": []})
    marked: list[LoopEvent] = []

    def mark(event: LoopEvent, _turn: Turn) -> LoopEvent:
        marked.append(event)
        return event

    turn = Turn("turn_1", "hello")
    send = session.events.turn_sender(turn, mark)
    ask = PermissionRequest("perm_1", "call_1", "Edit app.py", {"file_path": "app.py"})
    done = TurnCompleted("turn_1", "end_turn", 1, Usage())
    stream: list[Any] = [
        TextDeltaEvent("msg_1", "The "),
        ThinkingDeltaEvent("msg_1", "hm"),
        ask,
        done,
    ]
    for event in stream:
        send(event)
    assert marked == [ask, done]
    assert [e.event for e in sent] == stream
    assert [e.turn_id for e in sent] == ["turn_1"] * 4
    assert [e.seq for e in sent] == [1, 2, 3, 4]
    assert turn.ended and session.events.last_stop == "end_turn"
    await manager.close_all()
