"""Running slash commands: what a front end calls with the text of a user message.

A message whose first word is `/name` (see `commands.invocation`) names a command when the
session's catalog has one by that name. A local command (`/clear`, `/compact`, `/cost`, `/context`,
`/model`, `/mode`, `/help`) takes its place in the turn queue and answers with a
`command_output` event, never calling the model. A prompt command (`/init`, `/review`, a
project's or user's file) sends its expanded prompt as the user message of a normal turn,
with its `allowed-tools` pre-approved and its `model` for that turn only; a skill's
command sends the skill's text and starts the turn in the skill. A `/name` that
names no command is refused (InvalidParams on `text`), unless `/name` exists as a path,
so `/tmp is full` still reaches the model. A message starting with `!` runs the rest as a
shell command in a local turn (session.shell_shortcut), and a one-line `# note` adds the
note to a memory file (session.memory_note). Anything else is an ordinary
message.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path

from agentls.commands.catalog import SlashCommand
from agentls.commands.invocation import Invocation, expand, parse_invocation
from agentls.errors import AgentError, InvalidParams
from agentls.names import PERMISSION_MODES
from agentls.permissions.rules import Rule, parse_rule
from agentls.pricing import price_for
from agentls.session.context_report import context_report
from agentls.session.manager import SessionManager
from agentls.session.memory_note import memory_note, note_action
from agentls.session.session import AgentSession
from agentls.session.shell_shortcut import shell_action, shell_command
from agentls.session.turn import LocalAction, Submission
from agentls.skills.loading import SKILL_SOURCE

log = logging.getLogger(__name__)


async def submit_message(
    manager: SessionManager, session: AgentSession, message: Submission
) -> tuple[str, bool]:
    """A user message: a slash command run, or a message submitted; its turn id and
    whether it waits. The command folders are looked at again first (a change is
    announced with `available_commands` before the message's own events)."""
    if session.commands.refresh():
        session.announce_commands()
    shortcut = _shortcut(session, message.text)
    if shortcut is not None:
        delivery = "queue" if message.delivery == "steer" else message.delivery
        return session.intake.submit_local(shortcut[0], shortcut[1], delivery)
    invocation = parse_invocation(message.text)
    command = session.commands.find(invocation.name) if invocation is not None else None
    if invocation is None or (command is None and _is_path(invocation.name)):
        return session.intake.send(message)
    if command is None:
        raise InvalidParams(
            f"Unknown command /{invocation.name}. /help lists the commands; to send text "
            "that starts with a slash to the model, begin it with a space.",
            {"field": "text"},
        )
    # A command is a turn of its own: steering cannot fold it into the running turn.
    delivery = "queue" if message.delivery == "steer" else message.delivery
    if command.local:
        action = _local_action(manager, session, invocation)
        return session.intake.submit_local(command.name, action, delivery)
    prompt = await render(command, invocation.arguments)
    allowed = allowed_rules(command)
    skill = command.name if command.source == SKILL_SOURCE else None
    return session.intake.send(
        replace(
            message,
            text=prompt,
            delivery=delivery,
            allowed=allowed,
            model=command.model,
            skill=skill,
        )
    )


async def render(command: SlashCommand, arguments: str) -> str:
    """The user message a prompt command sends."""
    if command.render is not None:
        return await command.render(arguments)
    return expand(command.template or "", arguments)


def allowed_rules(command: SlashCommand) -> list[Rule]:
    """The command's `allowed-tools` as allow rules; a malformed one is left out (logged)."""
    rules = []
    for text in command.allowed_tools:
        try:
            rules.append(parse_rule(text, "allow"))
        except ValueError as exc:
            log.warning("/%s: allowed tool %r ignored: %s", command.name, text, exc)
    return rules


def _shortcut(session: AgentSession, text: str) -> tuple[str, LocalAction] | None:
    """A `!command` or `# note` message's local turn (its name and work), else None."""
    command_line = shell_command(text)
    if command_line is not None:
        return "!", shell_action(session, command_line)
    note = memory_note(text)
    if note is not None:
        return "#", note_action(session, note)
    return None


def _is_path(name: str) -> bool:
    try:
        return Path("/" + name).exists()
    except OSError:
        return False


def _local_action(
    manager: SessionManager, session: AgentSession, invocation: Invocation
) -> LocalAction:
    actions: dict[str, Callable[[AgentSession, str, str], Awaitable[str]]] = {
        "clear": _clear,
        "compact": _compact,
        "cost": _cost,
        "context": _context,
        "model": functools.partial(_model, manager),
        "mode": _mode,
        "help": _help,
    }
    return functools.partial(actions[invocation.name], session, invocation.arguments)


async def _clear(session: AgentSession, _arguments: str, turn_id: str) -> str:
    session.clear(turn_id)
    return "The conversation was cleared: the next message starts afresh."


async def _compact(session: AgentSession, arguments: str, turn_id: str) -> str:
    before, after = await session.compact(arguments or None, turn_id)
    return f"The conversation was compacted: about {before:,} tokens before, {after:,} after."


async def _cost(session: AgentSession, _arguments: str, _turn_id: str) -> str:
    meta = session.transcript.meta
    turns = f"{meta.turns} turn{'' if meta.turns == 1 else 's'}"
    if meta.cost_usd is not None or price_for(session.model, session.settings.prices):
        cost = f"${meta.cost_usd or 0:.4f}"
    else:
        cost = f"unknown (no price for {session.model}: see the `prices` setting)"
    used = session.context.budget.estimate(session.history)
    window = session.context.window
    return "\n".join(
        (
            f"Session {session.id}: {turns} on {session.model}",
            f"Tokens: {meta.input_tokens:,} in (cached ones included), {meta.output_tokens:,} out",
            f"Cost: {cost}",
            f"Context: about {used:,} of {window:,} tokens ({used / window:.0%})",
        )
    )


async def _context(session: AgentSession, _arguments: str, _turn_id: str) -> str:
    return context_report(session)


async def _model(
    manager: SessionManager, session: AgentSession, arguments: str, _turn_id: str
) -> str:
    words = arguments.split()
    if len(words) > 2:
        raise AgentError("Usage: /model [model] [provider]; a model name has no spaces.")
    if not words:
        return f"The model is {_model_of(session)}."
    await manager.set_model(session.id, words[0], words[1] if len(words) > 1 else None)
    return f"The model is now {_model_of(session)}: the next turn uses it."


def _model_of(session: AgentSession) -> str:
    return f"{session.model} (provider {session.provider.name})"


async def _mode(session: AgentSession, arguments: str, _turn_id: str) -> str:
    modes = ", ".join(PERMISSION_MODES)
    if not arguments:
        return f"The permission mode is {session.gate.mode} (one of {modes})."
    for mode in PERMISSION_MODES:
        if mode == arguments:
            session.set_permission_mode(mode)
            return f"The permission mode is now {mode}."
    raise AgentError(f"Unknown permission mode {arguments!r}: use one of {modes}.")


async def _help(session: AgentSession, _arguments: str, _turn_id: str) -> str:
    lines = ["Commands:"]
    for command in session.commands.listed():
        hint = f" {command.argument_hint}" if command.argument_hint else ""
        source = "" if command.source == "builtin" else f" ({command.source})"
        lines.append(f"/{command.name}{hint}: {command.description}{source}")
    return "\n".join(lines)
