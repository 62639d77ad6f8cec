"""One turn of a session, as queued: what the user sent and what holds for it alone."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentls.context.prompt import SubmittedAttachment
from agentls.loop.guards import Budget
from agentls.names import Delivery
from agentls.permissions.rules import Rule


@dataclass(frozen=True, slots=True)
class Submission:
    """A user message as a front end hands it over, before it becomes a turn (or joins the
    running one as steering). `allowed` and `model` are a slash command's, for its turn;
    `skill` the skill a skill's `/<name>` starts the turn in."""

    text: str
    data: Any = None
    intent: str | None = None
    attachments: Sequence[SubmittedAttachment] = ()
    delivery: Delivery = "queue"
    budget: Budget | None = None
    allowed: Sequence[Rule] = ()
    model: str | None = None
    skill: str | None = None


# A local slash command's work, given its turn id; returns what it says to the user.
LocalAction = Callable[[str], Awaitable[str]]


@dataclass(slots=True)
class Turn:
    turn_id: str
    text: str
    data: Any = None
    intent: str | None = None
    attachments: Sequence[SubmittedAttachment] = ()
    # This turn's budget over the session's; None: the settings' budget.
    budget: Budget | None = None
    # Started by agent/continueTurn: the model goes on from the history, no new message.
    continued: bool = False
    # A local slash command's turn: the daemon answers, no model call (see submit_local).
    command: str | None = None
    action: LocalAction | None = None
    # A prompt command's pre-approved tools and model, for this turn only.
    allowed: tuple[Rule, ...] = ()
    model: str | None = None
    # The skill the turn starts in (a skill's slash command); the Skill tool may change it.
    skill: str | None = None
    abort: asyncio.Event = field(default_factory=asyncio.Event)
    # Set when its turn_completed went out: a turn ends exactly once, whatever fails.
    ended: bool = False
