"""What the model has not heard yet: steering for the running turn, and notes for later.

Steering (a message sent with `delivery: "steer"`, a background agent's report) joins the
running turn at its next step. Notes wait: a background shell that exited is told at the
next step or message, whichever comes first; what the user did outside the conversation
(agent/noteUserAction while nothing runs, an agent that was stopped) rides on the next
user message.
"""

from __future__ import annotations


class Inbox:
    def __init__(self) -> None:
        self._steering: list[str] = []
        self._shell_notes: list[str] = []
        self._user_actions: list[str] = []

    def steer(self, text: str) -> None:
        """For the running turn's next step."""
        self._steering.append(text)

    def note_shell(self, text: str) -> None:
        """For the next step or the next message."""
        self._shell_notes.append(text)

    def note_user_action(self, text: str) -> None:
        """For the next user message."""
        self._user_actions.append(text)

    def take_steering(self) -> list[str]:
        """The steering, once (what is left when a turn ends becomes the next turn)."""
        taken, self._steering = self._steering, []
        return taken

    def take_for_step(self) -> list[str]:
        """What the running turn's next step carries: the steering, then the shell notes."""
        notes, self._shell_notes = self._shell_notes, []
        return [*self.take_steering(), *notes]

    def take_for_message(self) -> tuple[list[str], list[str]]:
        """What a new user message carries: the user's actions and the shell notes."""
        actions, self._user_actions = self._user_actions, []
        notes, self._shell_notes = self._shell_notes, []
        return actions, notes

    def drop_steering(self) -> None:
        """An aborted turn's steering goes with it."""
        self._steering.clear()

    def drop_user_actions(self) -> None:
        """/clear: the conversation they were about is gone."""
        self._user_actions.clear()
