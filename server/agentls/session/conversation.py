"""The conversation of a session: its history and what the caller handed it, as recorded.

The history is the list the loop appends to and compaction replaces; `data` is what the
caller handed the session (structured data, intent) and what it learnt (the plan, the
steps done, the questions waiting for an answer). Every change of `data` is written to
the transcript as a state record, so a resume finds it; after one, the next user message
carries a recap of what was done and what was left unanswered.
"""

from __future__ import annotations

from typing import Any

from agentls.context.prompt import Recap
from agentls.messages import Message
from agentls.pairing import Alternation, PairingCheck, repair_pairing
from agentls.session.records import HistoryCleared, StateSaved
from agentls.session.store import Transcript
from agentls.tools.base import SessionData


class Conversation:
    def __init__(self, transcript: Transcript) -> None:
        self.history: list[Message] = []
        self.data = SessionData()
        self._transcript = transcript
        # Set by restore: the next message recaps what was done and left unanswered.
        self.resumed = False
        # Every turn's requests join same-role runs through it (see pairing.Alternation),
        # and check the pairing through this one: kept from turn to turn, so a turn's first
        # call walks only what is new since the last call, not the whole history again.
        self.alternation = Alternation()
        self.pairing = PairingCheck()

    def restore(self, history: list[Message], state: StateSaved) -> None:
        """Take over a resumed session's history and state; the next message recaps."""
        self.adopt(history, state)
        self.data.pending_questions[:] = list(state.pending_questions)
        self.resumed = True

    def adopt(self, history: list[Message], state: StateSaved, save: bool = False) -> None:
        """Take `history` and the state (its open questions aside) as this conversation's;
        `save` writes the state to the transcript (a fork's first state)."""
        self.history[:] = history
        self.data.structured_data = state.structured_data
        self.data.user_intent = state.user_intent
        self.data.completed_steps[:] = list(state.completed_steps)
        self.data.plan = state.plan
        if save:
            self.save_state()

    def hand_over(self, data: Any, intent: str | None) -> None:
        """A message brought structured data or an intent: they replace the old ones."""
        if data is None and intent is None:
            return
        if data is not None:
            self.data.structured_data = data
        if intent is not None:
            self.data.user_intent = intent
        self.save_state()

    def step_done(self, title: str) -> None:
        self.data.completed_steps.append(title)
        self.save_state()

    def take_recap(self) -> Recap | None:
        """After a resume, once: the steps done and the questions a crash or close left
        open (they are the recap's now, no longer pending)."""
        if not self.resumed:
            return None
        self.resumed = False
        unanswered = [str(q.get("question", "")) for q in self.data.pending_questions]
        if unanswered:
            self.data.pending_questions.clear()
            self.save_state()
        return Recap(tuple(self.data.completed_steps), tuple(unanswered))

    def clear(self) -> bool:
        """/clear: history, data and plan forgotten, and recorded so; whether a plan was
        dropped (clients are told)."""
        had_plan = bool(self.data.plan)
        self.history.clear()
        self.data.structured_data, self.data.user_intent, self.data.plan = None, None, ()
        self.data.completed_steps.clear()
        self.resumed = False
        self._transcript.write(HistoryCleared())
        self.save_state()
        return had_plan

    def repair(self) -> list[Message]:
        """Pair every tool call with a result (a turn that broke off); the messages added."""
        known = {message.id for message in self.history}
        repaired = repair_pairing(self.history)
        self.history[:] = repaired
        return [m for m in repaired if m.id not in known]

    def save_state(self) -> None:
        data = self.data
        self._transcript.write(
            StateSaved(
                data.structured_data,
                data.user_intent,
                tuple(data.completed_steps),
                tuple(data.pending_questions),
                data.plan,
            )
        )
