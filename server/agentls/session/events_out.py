"""What a session sends: the stamping of every event, and the book-keeping turn events pass.

`EventOut` is the one place that numbers a session's events (`seq`) and masks them, so the
order clients see is the order of `emit` calls. `SessionEvents.send` is what a turn's
events go through first: it notes what they change (the turn's end and spend, finished
steps, the plan) in the session's books and transcript before they are sent, and
`end_broken_turn` gives a turn that broke off its one end. `RecentEvents` holds what went out
since the running turn began, so a window that comes back after a reload gets the events
it missed with their own `seq` (agent/resumeSession's `lastSeq`).
"""

from __future__ import annotations

import itertools
import logging
from collections import deque
from collections.abc import Callable
from typing import Final

from agentls.events import (
    LoopEvent,
    PlanEvent,
    SessionEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCallEvent,
    ToolCallUpdate,
    TurnCompleted,
    TurnError,
    TurnStopReason,
)
from agentls.redact import Masker
from agentls.session.conversation import Conversation
from agentls.session.records import TurnEnded
from agentls.session.store import Transcript
from agentls.session.turn import Turn
from agentls.usage import Usage

log = logging.getLogger(__name__)
EventSink = Callable[[SessionEvent], None]
_CHANGING_KINDS = frozenset({"edit", "delete", "move", "execute"})
# The events `SessionEvents.send` keeps books on; the many others (deltas) pass straight on.
_BOOKED: frozenset[type] = frozenset({TurnCompleted, ToolCallEvent, ToolCallUpdate, PlanEvent})
# The streamed deltas: most of a turn's events, which no book and no mark concerns.
_DELTAS: frozenset[type] = frozenset({TextDeltaEvent, ThinkingDeltaEvent})
# Events of the running turn held for a window that comes back; older ones are dropped.
RECENT_LIMIT: Final = 10_000


class RecentEvents:
    """The session's events since its running (or last) turn began, at most `limit` (the
    newest), events outside turns among them: what a returning window may have missed."""

    def __init__(self, limit: int = RECENT_LIMIT) -> None:
        self._events: deque[SessionEvent] = deque(maxlen=limit)
        # Every event passes here: the deque's own append, without a method around it.
        self.add: Callable[[SessionEvent], None] = self._events.append

    def turn_began(self) -> None:
        self._events.clear()

    def since(self, seq: int) -> list[SessionEvent]:
        """The events held whose `seq` is above `seq`, oldest first."""
        if not self._events or self._events[-1].seq <= seq:
            return []
        # Held events are numbered without a gap, so the first wanted one's place is known.
        start = max(0, seq + 1 - self._events[0].seq)
        return list(itertools.islice(self._events, start, None))


class EventOut:
    """A session's outgoing events: masked, stamped with `sessionId` and `seq`, delivered."""

    def __init__(self, session_id: str, sink: EventSink, masker: Masker) -> None:
        self._session_id = session_id
        self._sink = sink
        # Every event passes here: looked up once.
        self._mask = masker.mask_value
        self._seq = 0
        self.recent = RecentEvents()

    @property
    def seq(self) -> int:
        """The `seq` of the last event sent (0 before the first)."""
        return self._seq

    def emit(
        self, event: LoopEvent, turn_id: str | None, origin: tuple[str, str] | None = None
    ) -> None:
        self._seq = seq = self._seq + 1
        if origin is None:
            envelope = SessionEvent(self._session_id, seq, turn_id, self._mask(event))
        else:
            envelope = SessionEvent(self._session_id, seq, turn_id, self._mask(event), *origin)
        self.recent.add(envelope)
        try:
            self._sink(envelope)
        except Exception:
            log.exception("could not deliver an event of session %s", self._session_id)


class SessionEvents:
    """A session's events on their way out, and the books they keep: what the session
    spent, how its last turn ended, which of its calls changed something and finished."""

    def __init__(
        self,
        out: EventOut,
        transcript: Transcript,
        conversation: Conversation,
    ) -> None:
        self.out = out
        self._transcript = transcript
        self._conversation = conversation
        self.usage = Usage()
        # How the last turn ended: agent/continueTurn goes on only after `max_turns`.
        self.last_stop: TurnStopReason | None = None
        # Calls that change something, by id, until they finish: finished ones become steps.
        self._changing_calls: dict[str, str] = {}

    def turn_began(self) -> None:
        """A turn starts running: what a returning window is given again starts here."""
        self.out.recent.turn_began()

    def emit(
        self, event: LoopEvent, turn_id: str | None, origin: tuple[str, str] | None = None
    ) -> None:
        """Send an event that changes nothing in the books."""
        self.out.emit(event, turn_id, origin)

    def send(
        self, event: LoopEvent, turn: Turn | None, origin: tuple[str, str] | None = None
    ) -> None:
        """Book-keep and send one event of the turn; `origin`, for a sub-agent's events, is
        the Task call and the agent's id (a background agent's events have no turn)."""
        if event.__class__ not in _BOOKED:
            self.out.emit(event, turn.turn_id if turn is not None else None, origin)
            return
        if isinstance(event, TurnCompleted) and turn is not None and origin is None:
            self.last_stop = event.stop_reason
            self.usage = self.usage + event.usage
            # Priced call by call, sub-agents at their own models' prices.
            cost = event.cost_usd
            self._transcript.touch(turn_done=True, spent=event.usage, cost=cost)
            code = event.error.code if event.error else None
            self._transcript.write(TurnEnded(turn.turn_id, event.stop_reason, event.turns, code))
            turn.ended = True
        elif isinstance(event, ToolCallEvent) and event.kind in _CHANGING_KINDS:
            self._changing_calls[event.tool_call_id] = event.title
        elif isinstance(event, ToolCallUpdate):
            self._call_updated(event)
        elif isinstance(event, PlanEvent):
            self._conversation.save_state()
        self.out.emit(event, turn.turn_id if turn is not None else None, origin)

    def turn_sender(
        self, turn: Turn, mark: Callable[[LoopEvent, Turn], LoopEvent]
    ) -> Callable[[LoopEvent], None]:
        """`send` for the turn's own events, each `mark`ed first, with the deltas (thousands
        a turn) going straight out: no book keeping, no mark, two calls fewer each."""
        emit, send, turn_id = self.out.emit, self.send, turn.turn_id

        def send_own(event: LoopEvent) -> None:
            if event.__class__ in _DELTAS:
                emit(event, turn_id)
            else:
                send(mark(event, turn), turn)

        return send_own

    def spent(self, usage: Usage, cost: float | None) -> None:
        """Work outside the turns (a background agent) spent `usage`, costing `cost` dollars."""
        self.usage = self.usage + usage
        self._transcript.touch(spent=usage, cost=cost)

    def end_broken_turn(self, turn: Turn, reason: TurnStopReason, error: TurnError | None) -> None:
        """Pair the history, record the turn's end and send its one turn_completed."""
        added = self._conversation.repair()
        if turn.ended:
            return
        turn.ended = True
        self.last_stop = reason
        try:
            for message in added:
                self._transcript.record_message(message, turn.turn_id)
            code = error.code if error else None
            self._transcript.write(TurnEnded(turn.turn_id, reason, 0, code))
        except Exception as exc:
            log.error("the end of turn %s was not recorded: %s", turn.turn_id, exc)
        self.out.emit(TurnCompleted(turn.turn_id, reason, 0, Usage(), error), turn.turn_id)

    def _call_updated(self, event: ToolCallUpdate) -> None:
        title = self._changing_calls.get(event.tool_call_id)
        if title is not None and event.status not in ("pending", "in_progress"):
            del self._changing_calls[event.tool_call_id]
            if event.status == "completed":
                self._conversation.step_done(title)
