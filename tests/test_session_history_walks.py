"""What a session keeps from one turn to the next so that a turn's first model call does not
walk the whole history again: the pairing check and the joined same-role runs."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agentls import pairing
from agentls.events import SessionEvent, TurnCompleted
from agentls.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, user_text
from agentls.session.manager import SessionManager
from agentls.session.session import AgentSession

PRIOR = 200


def _prior_history() -> list[Message]:
    """An unanswered message (an aborted turn's), then PRIOR messages of paired tool calls."""
    history = [user_text("aborted before the answer")]
    for n in range(PRIOR // 2):
        use = ToolUseBlock(f"toolu_{n}", "Read", {"file_path": "a.py"})
        history += [
            Message("assistant", (TextBlock("reading"), use)),
            Message("user", (ToolResultBlock(use.id, "1\tx"),)),
        ]
    return history


async def _turn(session: AgentSession, ended: list[asyncio.Future[Any]], text: str) -> None:
    ended.append(asyncio.get_running_loop().create_future())
    session.submit(text)
    completed = await asyncio.wait_for(ended[-1], 30)
    assert completed.stop_reason == "end_turn"


async def test_a_turns_first_call_walks_only_what_is_new_since_the_last_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ended: list[asyncio.Future[Any]] = []
    walks: list[int] = []
    whole_walk = pairing.pairing_problems

    def counted(messages: Any, start: int = 0) -> list[str]:
        walks.append(len(messages) - start)
        return whole_walk(messages, start)

    monkeypatch.setattr(pairing, "pairing_problems", counted)

    def sink(envelope: SessionEvent) -> None:
        if isinstance(envelope.event, TurnCompleted) and not ended[-1].done():
            ended[-1].set_result(envelope.event)

    manager = SessionManager(sink, env={"AGENTLS_HOME": str(tmp_path / "home")})
    script = [{"text": "one"}, {"text": "two"}, {"text": "three"}]
    session = await manager.create(tmp_path, {"provider": "scripted", "script": script})
    try:
        session.history[:] = _prior_history()
        await _turn(session, ended, "first")
        conversation = session.conversation
        first_joined = conversation.alternation(session.history)[0]
        assert walks == [PRIOR + 2]
        for text in ("second", "third"):
            walks.clear()
            await _turn(session, ended, text)
            # The last turn's answer, this turn's message, and the last message checked
            # before: not the PRIOR messages before them.
            assert walks == [3]
            assert conversation.alternation(session.history)[0] is first_joined
    finally:
        await manager.close_all()
