"""How a model turn opens: the user message it answers, and the hooks that may refuse it.

A message turn runs the prompt hooks, then adds the user's message with its context block
(workspace state, attachments, the recap after a resume, notes the model has not heard
yet); a continued turn adds at most a "go on". Kept apart from the turn worker, which only
needs to know whether the turn may go on to the model.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from agentls.context.prompt import attachment_images, user_context
from agentls.events import MessageCompleted, TurnError, TurnStarted
from agentls.hooks.points import Aborted, LoopHooks, PromptVerdict, unless_aborted
from agentls.messages import Message, TextBlock, new_id
from agentls.permissions.asking import PermissionPrompter
from agentls.session.conversation import Conversation
from agentls.session.events_out import SessionEvents
from agentls.session.inbox import Inbox
from agentls.session.mentions import MentionResolver
from agentls.session.store import Transcript, title_from
from agentls.session.turn import Turn
from agentls.workspace.view import WorkspaceView

GO_ON_TEXT = "The user asked you to go on: continue the task from where you stopped."


@dataclass(frozen=True, slots=True)
class TurnOpening:
    events: SessionEvents
    conversation: Conversation
    transcript: Transcript
    inbox: Inbox
    hooks: LoopHooks
    answers: PermissionPrompter
    workspace: WorkspaceView
    cwd: Path
    mentions: MentionResolver

    def continuation(self, turn: Turn) -> None:
        """agent/continueTurn: the model answers the history's last user message (tool
        results, usually); after a reply that was cut at the limit it is asked to go on."""
        history = self.conversation.history
        last = history[-1] if history else None
        if last is not None and last.role == "user":
            self.events.emit(TurnStarted(turn.turn_id, last.id, continued=True), turn.turn_id)
            return
        user = Message("user", (TextBlock(GO_ON_TEXT),))
        self.events.emit(TurnStarted(turn.turn_id, user.id, continued=True), turn.turn_id)
        self._add(user, turn)

    async def with_message(self, turn: Turn) -> bool:
        """Add the turn's user message (False: hooks refused it, or the turn was aborted
        while they ran, and the turn has ended)."""
        user_id = new_id("msg")
        self.events.emit(TurnStarted(turn.turn_id, user_id), turn.turn_id)
        hooked = await self._prompt_hooks(turn)
        if hooked is None:
            return False
        first = not self.conversation.history
        self.conversation.hand_over(turn.data, turn.intent)
        self.transcript.touch(title=title_from(turn.text))
        recap = self.conversation.take_recap()
        actions, notes = self.inbox.take_for_message()
        attachments = await self.mentions.resolve(turn.attachments)
        context = await asyncio.to_thread(
            user_context,
            self.workspace,
            self.cwd,
            first=first,
            data=turn.data,
            intent=turn.intent,
            attachments=attachments,
            recap=recap,
            user_actions=actions,
            hook_context=hooked.context,
            notes=notes,
        )
        images = await asyncio.to_thread(attachment_images, self.workspace, self.cwd, attachments)
        self._add(
            Message("user", (TextBlock(context), TextBlock(turn.text), *images), user_id), turn
        )
        return True

    def _add(self, user: Message, turn: Turn) -> None:
        self.conversation.history.append(user)
        self.transcript.record_message(user, turn.turn_id)
        self.events.send(MessageCompleted(user.id, "user", user.content), turn)

    async def _prompt_hooks(self, turn: Turn) -> PromptVerdict | None:
        """The hooks before a message (trust, SessionStart, UserPromptSubmit); None when
        they refused it or the turn was aborted meanwhile (the turn is then ended)."""
        if self.hooks.commands is None:
            return PromptVerdict()
        source = "resume" if self.conversation.resumed else "startup"
        work = self.hooks.before_prompt(
            turn.text, source, lambda event: self.events.send(event, turn), self.answers
        )
        try:
            verdict = await unless_aborted(turn.abort, work)
        except Aborted:
            self.events.end_broken_turn(turn, "aborted", None)
            return None
        if verdict.blocked is None:
            return verdict
        message = f"A UserPromptSubmit hook refused the message: {verdict.blocked}"
        self.events.end_broken_turn(turn, "error", TurnError("prompt_blocked", message, False))
        return None
