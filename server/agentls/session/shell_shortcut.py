"""`!command`: the user runs a shell command themselves, in a turn of its own.

The command runs as the model's Bash calls do: announced as a `Bash` tool call, through
the permission gate (rules, mode, hooks), in the sandbox, its output streamed, its file
changes checkpointed. No model is called; the command and its output wait in the inbox
and reach the model with the user's next message, as a `<userAction>`.
"""

from __future__ import annotations

import asyncio
import contextlib

from agentls.loop.assemble import ToolCallReady
from agentls.loop.executor import ToolExecutor
from agentls.messages import TextBlock, ToolResultBlock, ToolUseBlock, new_id
from agentls.session.loop_deps import loop_deps
from agentls.session.session import AgentSession
from agentls.session.turn import LocalAction

SHELL_PREFIX = "!"
# What of the output the model is told (Bash caps its own at 30,000 characters).
NOTE_CHARS = 10_000


def shell_command(text: str) -> str | None:
    """The command of a `!command` message; None when the message is not one."""
    if not text.startswith(SHELL_PREFIX):
        return None
    command = text[len(SHELL_PREFIX) :].strip()
    return command or None


def shell_action(session: AgentSession, command: str) -> LocalAction:
    """The local turn's work: run `command`, show it, keep it for the model."""

    async def run(turn_id: str) -> str:
        result = await _run_bash(session, turn_id, command)
        output = _text(result)
        session.inbox.note_user_action(_note(command, output, result.is_error))
        return output

    return run


async def _run_bash(session: AgentSession, turn_id: str, command: str) -> ToolResultBlock:
    turn = session.intake.queue.running
    assert turn is not None and turn.turn_id == turn_id, "a local turn runs as the running one"
    deps = loop_deps(session, turn)
    executor = ToolExecutor(
        deps.registry,
        deps.tool_context,
        deps.gate,
        deps.prompter,
        lambda event: session.events.send(event, turn),
        hooks=deps.hooks,
    )
    block = ToolUseBlock(new_id("toolu"), "Bash", {"command": command})
    executor.submit(ToolCallReady(block))
    results = asyncio.ensure_future(executor.results())
    aborted = asyncio.ensure_future(turn.abort.wait())
    await asyncio.wait((results, aborted), return_when=asyncio.FIRST_COMPLETED)
    aborted.cancel()
    if not results.done():
        results.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await results
        return (await executor.interrupt())[0]
    return results.result()[0]


def _text(result: ToolResultBlock) -> str:
    """The result's text (Bash returns text; parts are joined should it ever not)."""
    if isinstance(result.content, str):
        return result.content
    return "\n".join(part.text for part in result.content if isinstance(part, TextBlock))


def _note(command: str, output: str, is_error: bool) -> str:
    """What the model is told: the command and what it printed (or why it did not run)."""
    if len(output) > NOTE_CHARS:
        output = output[:NOTE_CHARS] + f"\n… ({len(output) - NOTE_CHARS:,} more characters)"
    failed = " (it failed or did not run)" if is_error else ""
    return f"The user ran a shell command themselves{failed}: {command}\nOutput:\n{output}"
