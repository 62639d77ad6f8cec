"""What a user sends to a session, made into turns: queued, steered, continued, aborted.

`TurnIntake` owns the session's `TurnQueue` and decides where each message goes: into the
running turn (steering, a user's action), behind it (a queued message), in front of it (an
interrupt), or nowhere (an abort drops what waits). It never runs a turn itself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from agentls.context.prompt import user_action_note
from agentls.errors import NothingToContinue, SessionBusy
from agentls.events import TurnCompleted
from agentls.json_text import scrub
from agentls.messages import new_id
from agentls.names import Delivery
from agentls.session.events_out import SessionEvents
from agentls.session.inbox import Inbox
from agentls.session.turn import LocalAction, Submission, Turn
from agentls.session.turns import TurnQueue
from agentls.usage import Usage


class TurnIntake:
    """The turn queue of session `session_id`, and the ways messages reach it."""

    def __init__(
        self,
        session_id: str,
        run: Callable[[Turn], Awaitable[None]],
        inbox: Inbox,
        events: SessionEvents,
    ) -> None:
        self.session_id = session_id
        self.inbox = inbox
        self.events = events
        self.queue = TurnQueue(run, self._steering_left)

    @property
    def busy(self) -> bool:
        return self.queue.busy

    def send(self, message: Submission) -> tuple[str, bool]:
        """Accept a user message; its turn id and whether it waits behind another."""
        running = self.queue.running
        # JSON may carry lone surrogates ("\ud800"); no provider or file takes them.
        text, data, intent = scrub(message.text), scrub(message.data), scrub(message.intent)
        if message.delivery == "steer" and running is not None:
            self.inbox.steer(text)
            return running.turn_id, False
        turn = Turn(new_id("turn"), text, data, intent, message.attachments, message.budget)
        turn.allowed, turn.model, turn.skill = tuple(message.allowed), message.model, message.skill
        turn.inline_edit = message.inline_edit
        return self._enqueue(turn, front=message.delivery == "interrupt")

    def submit_local(
        self, command: str, action: LocalAction, delivery: Delivery = "queue"
    ) -> tuple[str, bool]:
        """A local slash command, run in its place in the turn queue (so it never acts on
        a history a turn is using); its turn sends `command_output`, then turn_completed."""
        turn = Turn(new_id("turn"), f"/{command}", command=command, action=action)
        return self._enqueue(turn, front=delivery == "interrupt")

    def continue_turn(self) -> str:
        """After a turn stopped at the turn limit: run another with as many model calls, on
        the history as it is (agent/continueTurn); its turn id."""
        name, last_stop = self.session_id, self.events.last_stop
        if self.busy:
            raise SessionBusy(f"Session {name} is running a turn; there is nothing to go on.")
        if last_stop != "max_turns":
            ended = f"ended {last_stop}" if last_stop else "has not run"
            raise NothingToContinue(
                f"The last turn of session {name} {ended}; only a turn that reached the "
                "turn limit (max_turns) can be continued. Send a message instead."
            )
        return self._enqueue(Turn(new_id("turn"), "", continued=True), front=False)[0]

    def note_user_action(self, text: str) -> None:
        """Something the user did outside the conversation (undid an edit): the running
        turn gets it at its next step, else the next message carries it."""
        text = scrub(text)
        running = self.queue.running
        # A local command's turn has no model to tell: the next message carries it.
        if running is not None and running.action is None and not running.abort.is_set():
            self.inbox.steer(user_action_note(text))
        else:
            self.inbox.note_user_action(text)

    def abort(self, turn_id: str | None) -> bool:
        """Abort the running turn and drop the queued ones (`turn_id` None), or abort one
        turn by id; whether anything was stopped. Idempotent."""
        aborted = False
        for turn in self.queue.drop_waiting(turn_id):
            self.events.emit(TurnCompleted(turn.turn_id, "aborted", 0, Usage()), turn.turn_id)
            aborted = True
        running = self.queue.running
        if running is not None and turn_id in (None, running.turn_id):
            aborted = aborted or not running.abort.is_set()
            running.abort.set()
            self.inbox.drop_steering()
        return aborted

    def record_running_aborted(self) -> None:
        """Record the running turn's end (aborted) now, without waiting for it to unwind."""
        running = self.queue.running
        if running is not None:
            self.events.end_broken_turn(running, "aborted", None)

    def _enqueue(self, turn: Turn, front: bool) -> tuple[str, bool]:
        return turn.turn_id, self.queue.enqueue(turn, front)

    def _steering_left(self, turn: Turn) -> Turn | None:
        """Steering that arrived as `turn` ended becomes the next turn; an aborted turn's
        steering goes with it."""
        leftover = self.inbox.take_steering()
        if not leftover or turn.abort.is_set():
            return None
        return Turn(new_id("turn"), "\n\n".join(leftover))
