"""The hook points the loop, the executor and the session call: one method each.

`LoopHooks` carries a session's command hooks (settings) and an embedder's in-process
callbacks. With neither configured every method returns at once, so a session without
hooks pays nothing. Sub-agents' loops get a copy that knows the agent (their Stop is
SubagentStop); the trust decision is shared, since it is the session's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, TypeVar
from xml.sax.saxutils import escape

from agentls.config import project_settings_file
from agentls.events import Compaction, Emit, HookResult, PermissionRequest
from agentls.hooks.callbacks import (
    ContextCompact,
    IterationComplete,
    LoopCallbacks,
    LoopStart,
    call_safely,
)
from agentls.hooks.config import HookCommand, HookConfig
from agentls.hooks.decisions import (
    HookReply,
    ToolVerdict,
    contexts,
    first_block,
    read_run,
    tool_verdict,
)
from agentls.hooks.runner import run_hooks
from agentls.messages import Message, ToolUseBlock, new_id
from agentls.names import HookEvent
from agentls.permissions import trust
from agentls.permissions.asking import PermissionPrompter, ask_permission
from agentls.permissions.plugin_trust import PluginTrust
from agentls.usage import Usage

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(slots=True)
class CommandHooks:
    """A session's command hooks, and whether its project's own may run."""

    config: HookConfig
    session_id: str
    transcript_path: Path
    cwd: Path
    home: Path
    permission_mode: Callable[[], str] = lambda: "default"
    # None until decided: the project's hooks do not run before the user trusts them.
    project_trusted: bool | None = None
    session_started: bool = False
    # Plugins' hooks run only once the user trusts their plugin.
    plugin_trust: PluginTrust | None = None

    def runnable(self, event: HookEvent, subject: str | None) -> list[HookCommand]:
        found = self.config.commands(event, subject)
        return [c for c in found if (not c.project or self.project_trusted) and self._ok(c)]

    def _ok(self, command: HookCommand) -> bool:
        trusted = self.plugin_trust
        return command.plugin is None or (trusted is not None and trusted.allowed(command.plugin))

    async def run(
        self,
        event: HookEvent,
        subject: str | None,
        fields: Mapping[str, Any],
        emit: Emit,
        tool_call_id: str | None = None,
    ) -> list[HookReply]:
        """Run the event's hooks for `subject` at once; report the ones worth reporting."""
        commands = self.runnable(event, subject)
        if not commands:
            return []
        payload = {
            "session_id": self.session_id,
            "transcript_path": str(self.transcript_path),
            "cwd": str(self.cwd),
            "permission_mode": self.permission_mode(),
            "hook_event_name": event,
            **fields,
        }
        replies = [read_run(run, event) for run in await run_hooks(commands, payload, self.cwd)]
        for reply in replies:
            if reply.outcome in ("error", "timeout"):
                log.warning("%s hook %r: %s", event, reply.run.hook.command, reply.reason)
            if reply.visible():
                command, outcome = reply.run.hook.command, reply.outcome
                emit(HookResult(event, command, outcome, reply.message(), tool_call_id))
        return replies

    async def decide_trust(self, emit: Emit, prompter: PermissionPrompter) -> None:
        """Ask the user, once, whether the project's own hooks may run (unless remembered),
        and whether each plugin may."""
        if self.plugin_trust is not None:
            await self.plugin_trust.decide(emit, prompter)
        digest = self.config.project_digest
        commands = self.config.project_commands()
        if digest is None or not commands or self.project_trusted is not None:
            return
        remembered = trust.trusted(self.home, str(self.cwd), digest)
        if remembered is not None:
            self.project_trusted = remembered
            return
        settings_file = project_settings_file(self.cwd)
        request = PermissionRequest(
            new_id("perm"),
            new_id("hooks"),
            f"Run the hooks of {settings_file}? They run these commands with your rights: "
            + "; ".join(commands),
            {"settingsFile": str(settings_file), "hooks": self.config.project_hooks},
            trust.trust_options("this workspace's hooks"),
        )
        answer = await ask_permission(prompter, emit, request)
        self.project_trusted = answer.option_id.startswith("allow")
        if answer.option_id.endswith("always"):
            trust.remember(self.home, str(self.cwd), digest, self.project_trusted)


@dataclass(frozen=True, slots=True)
class PromptVerdict:
    """What the hooks before a user message said: why it is refused, or context for it."""

    blocked: str | None = None
    context: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LoopHooks:
    commands: CommandHooks | None = None
    callbacks: LoopCallbacks = field(default_factory=LoopCallbacks)
    # A sub-agent's loop: its id and type.
    agent: tuple[str, str] | None = None

    def for_subagent(self, agent_id: str, agent_type: str) -> LoopHooks:
        return replace(self, agent=(agent_id, agent_type))

    @property
    def agent_id(self) -> str | None:
        return self.agent[0] if self.agent else None

    async def before_prompt(
        self, prompt: str, source: str, emit: Emit, prompter: PermissionPrompter
    ) -> PromptVerdict:
        """Before a user message: the trust question (once), SessionStart (on the session's
        first message), then UserPromptSubmit, which may refuse the message."""
        hooks = self.commands
        if hooks is None:
            return PromptVerdict()
        await hooks.decide_trust(emit, prompter)
        context: list[str] = []
        if not hooks.session_started:
            hooks.session_started = True
            started = await hooks.run("SessionStart", source, {"source": source}, emit)
            context += [
                _context_block("SessionStart", t) for t in contexts(started, "SessionStart")
            ]
        replies = await hooks.run("UserPromptSubmit", None, {"prompt": prompt}, emit)
        blocked = first_block(replies)
        if blocked is not None:
            return PromptVerdict(blocked)
        added = contexts(replies, "UserPromptSubmit")
        return PromptVerdict(
            None, (*context, *(_context_block("UserPromptSubmit", t) for t in added))
        )

    async def pre_tool_use(self, block: ToolUseBlock, emit: Emit) -> ToolVerdict:
        """The PreToolUse hooks' verdict on a call: allow, deny or ask, and a new input."""
        if self.commands is None:
            return ToolVerdict()
        fields = {"tool_name": block.name, "tool_input": block.input, "tool_use_id": block.id}
        replies = await self.commands.run("PreToolUse", block.name, fields, emit, block.id)
        return tool_verdict(replies)

    async def post_tool_use(self, block: ToolUseBlock, output: str, emit: Emit) -> str:
        """The result the model reads after the PostToolUse hooks: with their feedback (a
        block's reason, added context) after the tool's output."""
        if self.commands is None:
            return output
        fields = {
            "tool_name": block.name,
            "tool_input": block.input,
            "tool_response": {"content": output},
            "tool_use_id": block.id,
        }
        replies = await self.commands.run("PostToolUse", block.name, fields, emit, block.id)
        notes = [r.reason or "" for r in replies if r.outcome == "blocked"]
        notes += contexts(replies, "PostToolUse")
        feedback = "".join(f"\n\n{_context_block('PostToolUse', n)}" for n in notes if n)
        return output + feedback

    async def stop(self, reply: Message, active: bool, emit: Emit) -> str | None:
        """Stop (SubagentStop for a sub-agent) hooks as the model ends its turn: the text
        that sends it back to work when one blocks, else None."""
        if self.commands is None:
            return None
        event: HookEvent = "SubagentStop" if self.agent else "Stop"
        fields: dict[str, Any] = {
            "stop_hook_active": active,
            "stop_reason": "end_turn",
            "last_assistant_message": reply.text(),
        }
        if self.agent is not None:
            fields.update(agent_id=self.agent[0], agent_type=self.agent[1])
        subject = self.agent[1] if self.agent else None
        reason = first_block(await self.commands.run(event, subject, fields, emit))
        if reason is None:
            return None
        note = f"A {event} hook did not let you stop yet; do what it asks."
        return f"{_context_block(event, reason)}\n{note}"

    async def pre_compact(
        self, trigger: Literal["manual", "auto"], instructions: str | None, emit: Emit
    ) -> None:
        """PreCompact hooks, before the history is compacted (they cannot stop it)."""
        if self.commands is not None:
            fields = {"trigger": trigger, "custom_instructions": instructions or ""}
            await self.commands.run("PreCompact", trigger, fields, emit)

    async def loop_started(self, turn_id: str, model: str, messages: int) -> None:
        start = LoopStart(turn_id, model, messages, self.agent_id)
        await call_safely(self.callbacks.on_loop_start, start)

    async def iteration_completed(
        self,
        turn_id: str,
        iteration: int,
        tool_calls: int,
        step: tuple[str | None, str | None],
        usage: Usage,
    ) -> None:
        if self.callbacks.on_iteration_complete is None:
            return
        transition, stop_reason = step
        info = IterationComplete(
            turn_id, iteration, tool_calls, transition, stop_reason, usage, self.agent_id
        )
        await call_safely(self.callbacks.on_iteration_complete, info)

    async def compacted(self, event: Compaction, turn_id: str | None) -> None:
        info = ContextCompact(
            event.trigger, event.tokens_before, event.tokens_after, turn_id, self.agent_id
        )
        await call_safely(self.callbacks.on_context_compact, info)


def _context_block(event: HookEvent, text: str) -> str:
    return f'<hookContext event="{event}">\n{escape(text)}\n</hookContext>'


class Aborted(Exception):
    """The turn was aborted while its hooks ran or waited for an answer."""


async def unless_aborted(abort: asyncio.Event, work: Awaitable[T]) -> T:
    """`work`'s result, or Aborted (with `work` cancelled, its hooks killed) on abort."""
    task = asyncio.ensure_future(work)
    waiter = asyncio.create_task(abort.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
        aborted = not task.done()
        if aborted:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    if aborted:
        raise Aborted
    return task.result()


def command_hooks(
    config: HookConfig,
    session_id: str,
    transcript_path: Path,
    cwd: Path,
    home: Path,
    permission_mode: Callable[[], str],
    plugin_trust: PluginTrust | None = None,
) -> CommandHooks | None:
    """The session's command hooks; None when the settings configure none."""
    if not config.matchers:
        return None
    hooks = CommandHooks(config, session_id, transcript_path, cwd, home, permission_mode)
    hooks.plugin_trust = plugin_trust
    return hooks
