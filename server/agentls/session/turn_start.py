"""How a model turn opens: the user message it answers, and the hooks that may refuse it.

A message turn runs the prompt hooks, then adds the user's message with its context block
(workspace state, attachments, the recap after a resume, notes the model has not heard
yet); a continued turn adds at most a "go on". Kept apart from the turn worker, which only
needs to know whether the turn may go on to the model.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from agentls.context.prompt import attachment_images, user_context
from agentls.events import MessageCompleted, TurnError, TurnStarted
from agentls.hooks.points import Aborted, PromptVerdict, unless_aborted
from agentls.messages import Message, TextBlock, new_id
from agentls.session.store import title_from

if TYPE_CHECKING:
    from agentls.session.session import AgentSession
    from agentls.session.turn import Turn

GO_ON_TEXT = "The user asked you to go on: continue the task from where you stopped."


def start_continuation(session: AgentSession, turn: Turn) -> None:
    """agent/continueTurn: the model answers the history's last user message (tool
    results, usually); after a reply that was cut at the limit it is asked to go on."""
    emit = session.events.emit
    last = session.history[-1] if session.history else None
    if last is not None and last.role == "user":
        emit(TurnStarted(turn.turn_id, last.id, continued=True), turn.turn_id)
        return
    user = Message("user", (TextBlock(GO_ON_TEXT),))
    emit(TurnStarted(turn.turn_id, user.id, continued=True), turn.turn_id)
    session.history.append(user)
    session.transcript.record_message(user, turn.turn_id)
    session.events.send(MessageCompleted(user.id, "user", user.content), turn)


async def start_with_message(session: AgentSession, turn: Turn) -> bool:
    """Add the turn's user message (False: hooks refused it, or the turn was aborted
    while they ran, and the turn has ended)."""
    user_id = new_id("msg")
    session.events.emit(TurnStarted(turn.turn_id, user_id), turn.turn_id)
    hooked = await _prompt_hooks(session, turn)
    if hooked is None:
        return False
    first = not session.history
    session.conversation.hand_over(turn.data, turn.intent)
    session.transcript.touch(title=title_from(turn.text))
    recap = session.conversation.take_recap()
    actions, notes = session.inbox.take_for_message()
    context = await asyncio.to_thread(
        user_context,
        session.workspace,
        session.cwd,
        first=first,
        data=turn.data,
        intent=turn.intent,
        attachments=turn.attachments,
        recap=recap,
        user_actions=actions,
        hook_context=hooked.context,
        notes=notes,
    )
    images = await asyncio.to_thread(
        attachment_images, session.workspace, session.cwd, turn.attachments
    )
    user = Message("user", (TextBlock(context), TextBlock(turn.text), *images), user_id)
    session.history.append(user)
    session.transcript.record_message(user, turn.turn_id)
    session.events.send(MessageCompleted(user.id, "user", user.content), turn)
    return True


async def _prompt_hooks(session: AgentSession, turn: Turn) -> PromptVerdict | None:
    """The hooks before a message (trust, SessionStart, UserPromptSubmit); None when
    they refused it or the turn was aborted meanwhile (the turn is then ended)."""
    if session.hooks.commands is None:
        return PromptVerdict()
    source = "resume" if session.conversation.resumed else "startup"
    work = session.hooks.before_prompt(
        turn.text, source, lambda event: session.events.send(event, turn), session.answers
    )
    try:
        verdict = await unless_aborted(turn.abort, work)
    except Aborted:
        session.events.end_broken_turn(turn, "aborted", None)
        return None
    if verdict.blocked is None:
        return verdict
    message = f"A UserPromptSubmit hook refused the message: {verdict.blocked}"
    session.events.end_broken_turn(turn, "error", TurnError("prompt_blocked", message, False))
    return None
