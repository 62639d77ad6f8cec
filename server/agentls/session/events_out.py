"""What a session sends: the stamping of every event, and the book-keeping turn events pass.

`EventOut` is the one place that numbers a session's events (`seq`) and masks them, so the
order clients see is the order of `emit` calls. `on_event` is what a turn's events go
through first: it notes what they change (the turn's end, finished steps, declined calls)
in the session and its transcript before they are sent. Like the session's other helper
modules, `on_event` works on the session's private state: it is the session's own code.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentls.events import (
    LoopEvent,
    PlanEvent,
    SessionEvent,
    ToolCallEvent,
    ToolCallUpdate,
    TurnCompleted,
)
from agentls.redact import Masker
from agentls.session.records import TurnEnded

if TYPE_CHECKING:
    from agentls.session.session import AgentSession
    from agentls.session.turns import Turn

log = logging.getLogger(__name__)
EventSink = Callable[[SessionEvent], None]
_CHANGING_KINDS = frozenset({"edit", "delete", "move", "execute"})


@dataclass(frozen=True, slots=True)
class Denial:
    tool_call_id: str
    reason: str


class EventOut:
    """A session's outgoing events: masked, stamped with `sessionId` and `seq`, delivered."""

    def __init__(self, session_id: str, sink: EventSink, masker: Masker) -> None:
        self._session_id = session_id
        self._sink = sink
        self._masker = masker
        self._seq = 0

    def emit(
        self, event: LoopEvent, turn_id: str | None, origin: tuple[str, str] | None = None
    ) -> None:
        self._seq += 1
        call_id, agent_id = origin if origin is not None else (None, None)
        masked = self._masker.mask_value(event)
        envelope = SessionEvent(self._session_id, self._seq, turn_id, masked, call_id, agent_id)
        try:
            self._sink(envelope)
        except Exception:
            log.exception("could not deliver an event of session %s", self._session_id)


def on_event(
    session: AgentSession,
    event: LoopEvent,
    turn: Turn | None,
    origin: tuple[str, str] | None = None,
) -> None:
    """Book-keep and send one event of the turn; `origin`, for a sub-agent's events, is
    the Task call and the agent's id (a background agent's events have no turn)."""
    if isinstance(event, TurnCompleted) and turn is not None and origin is None:
        session.last_stop = event.stop_reason
        session.usage = session.usage + event.usage
        session.transcript.touch(turn_done=True, spent=event.usage, cost=session._cost(event.usage))
        code = event.error.code if event.error else None
        session.transcript.write(TurnEnded(turn.turn_id, event.stop_reason, event.turns, code))
        turn.ended = True
    elif isinstance(event, ToolCallEvent) and event.kind in _CHANGING_KINDS:
        session._changing_calls[event.tool_call_id] = event.title
    elif isinstance(event, ToolCallUpdate):
        _on_tool_update(session, event)
    elif isinstance(event, PlanEvent):
        session._save_state()
    session._out.emit(event, turn.turn_id if turn is not None else None, origin)


def _on_tool_update(session: AgentSession, event: ToolCallUpdate) -> None:
    if event.status == "declined":
        session.denials.append(Denial(event.tool_call_id, event.content or ""))
    title = session._changing_calls.get(event.tool_call_id)
    if title is not None and event.status not in ("pending", "in_progress"):
        del session._changing_calls[event.tool_call_id]
        if event.status == "completed":
            session.data.completed_steps.append(title)
            session._save_state()
