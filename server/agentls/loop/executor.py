"""Run tool calls as they arrive: read-only calls concurrently, the rest in a serial lane.

A call may start when every earlier call that is still unfinished is read-only and it is
read-only itself (bounded by a semaphore: it is shown `in_progress` only once it holds a
slot), or, for a write, when every earlier call is done. Results are returned in call
order whatever order the calls finish in; progress is emitted as it happens. Every call
ends with exactly one tool_result, errors included.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from agentls.events import (
    PERMISSION_OPTIONS,
    PLAN_OPTIONS,
    SANDBOX_ESCALATION_OPTIONS,
    AskUserRequest,
    AskUserResolved,
    Emit,
    PermissionOption,
    PermissionRequest,
    PlanEvent,
    SandboxEscalation,
    ToolCallEvent,
    ToolCallStatus,
    ToolCallUpdate,
)
from agentls.loop.assemble import ToolCallReady
from agentls.loop.review import revision_note
from agentls.messages import TextBlock, ToolResultBlock, ToolUseBlock, new_id
from agentls.pairing import INTERRUPTED
from agentls.permissions.asking import PermissionPrompter, ask_permission
from agentls.permissions.gate import Decision, PermissionGate, rule_for_always
from agentls.permissions.rules import Rule
from agentls.pricing import add_cost
from agentls.tool_values import FileDiff, changed_places, diffs_of
from agentls.tools.base import (
    PlanVerdict,
    ProposesChange,
    ProposesChanges,
    Tool,
    ToolContext,
    ToolError,
    ToolOutput,
)
from agentls.tools.editor import ProblemsWatch
from agentls.tools.exit_plan_mode import plan_verdict
from agentls.tools.registry import ToolRegistry, validate_input
from agentls.usage import Usage

if TYPE_CHECKING:
    from agentls.hooks.points import LoopHooks

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Call:
    block: ToolUseBlock
    tool: Tool[Any] | None
    args: BaseModel | None
    error: str | None
    read_only: bool
    done: asyncio.Event = field(default_factory=asyncio.Event)
    result: ToolResultBlock | None = None
    task: asyncio.Task[ToolResultBlock] | None = None


class ToolExecutor:
    """One assistant message's tool calls, from dispatch to ordered results."""

    def __init__(
        self,
        registry: ToolRegistry,
        context: ToolContext,
        gate: PermissionGate,
        prompter: PermissionPrompter,
        emit: Emit,
        read_concurrency: int = 10,
        refusal: str | None = None,
        hooks: LoopHooks | None = None,
    ) -> None:
        self._registry = registry
        self._hooks = hooks
        # When set, no call runs: each fails with this reason (a turn forced to finish).
        self._refusal = refusal
        self._context = context
        self._gate = gate
        self._prompter = prompter
        self._emit = emit
        self._read_slots = asyncio.Semaphore(read_concurrency)
        self._calls: list[_Call] = []
        # Calls the user or a rule refused: their error results are not tool failures.
        self.declined: set[str] = set()
        # What sub-agents (Task calls) of this message spent: the turn counts it too.
        self.subagent_usage = Usage()
        # And what that cost in dollars; None once one agent's price was unknown.
        self.subagent_cost: float | None = 0.0

    def submit(self, ready: ToolCallReady) -> None:
        """Validate a complete call, announce it and start it as soon as its lane allows."""
        call = self._prepare(ready)
        earlier = list(self._calls)
        self._calls.append(call)
        tool = call.tool
        self._emit(tool_call_event(tool, call.args, call.block, self._context.cwd))
        call.task = asyncio.create_task(self._run(call, earlier))

    async def results(self) -> list[ToolResultBlock]:
        """Every call's result, in call order, once all have finished."""
        return [await call.task for call in self._calls if call.task is not None]

    async def interrupt(self) -> list[ToolResultBlock]:
        """Cancel what still runs; unfinished calls get an "interrupted" result."""
        pending = [c.task for c in self._calls if c.task is not None and not c.task.done()]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        results = []
        for call in self._calls:
            if call.result is None:
                call.result = ToolResultBlock(call.block.id, INTERRUPTED, is_error=True)
                self._emit(ToolCallUpdate(call.block.id, "cancelled", INTERRUPTED))
            results.append(call.result)
        return results

    def _prepare(self, ready: ToolCallReady) -> _Call:
        block = ready.block
        tool = self._registry.get(block.name)
        if self._refusal is not None:
            return _Call(block, tool, None, self._refusal, read_only=True)
        if tool is None:
            known = ", ".join(self._registry.names())
            error = f"Unknown tool {block.name!r}. Available tools: {known}."
            return _Call(block, None, None, error, read_only=True)
        if ready.input_error is not None:
            return _Call(block, tool, None, ready.input_error, read_only=True)
        args = validate_input(tool, block.input)
        if isinstance(args, str):
            return _Call(block, tool, None, args, read_only=True)
        try:
            read_only = tool.is_read_only(args)
        except Exception:
            read_only = False  # fail closed: an unclassifiable call takes the write lane
        return _Call(block, tool, args, None, read_only)

    async def _run(self, call: _Call, earlier: list[_Call]) -> ToolResultBlock:
        try:
            await self._wait_for_lane(call, earlier)
            call.result = await self._execute(call)
            return call.result
        finally:
            call.done.set()

    @staticmethod
    async def _wait_for_lane(call: _Call, earlier: list[_Call]) -> None:
        blockers = [c for c in earlier if not call.read_only or not c.read_only]
        for blocker in blockers:
            await blocker.done.wait()

    async def _execute(self, call: _Call) -> ToolResultBlock:
        block = call.block
        if call.error is not None or call.tool is None or call.args is None:
            return self._finish(block, "failed", call.error or "Invalid tool call.", True)
        tool = call.tool
        await self._sync_buffers(tool, call.args)
        approved = await self._approve(tool, call.args, block)
        if isinstance(approved, ToolResultBlock):
            return approved
        args, block, revision = approved
        # A read waits for one of the read slots (after its permission: an unanswered
        # question holds none); only then is it shown running.
        async with self._read_slots if call.read_only else contextlib.nullcontext():
            self._emit(ToolCallUpdate(block.id, "in_progress"))
            watch = await self._problems_watch(tool, args)
            output = await self._run_tool(tool, args, block)
        if revision and not output.is_error:
            output = replace(output, content=f"{output.content}\n\n{revision}")
        if watch is not None and output.diff is not None and not output.is_error:
            problems = await watch.new_errors(self._context.cwd)
            if problems:
                output = replace(output, content=f"{output.content}\n\n{problems}")
        status: ToolCallStatus = "failed" if output.is_error else "completed"
        truncated = True if output.truncated else None
        changed = changed_places(diffs_of(output.diff, output.diffs)) if not output.is_error else ()
        update = ToolCallUpdate(
            block.id, status, output.content, output.diff, truncated, output.diffs, changed or None
        )
        self._emit(update)
        if output.plan is not None:
            self._emit(PlanEvent(output.plan))
        if output.usage is not None:
            self.subagent_usage = self.subagent_usage + output.usage
            self.subagent_cost = add_cost(self.subagent_cost, output.cost_usd)
        text = output.content or f"({block.name} completed with no output)"
        if self._hooks is not None and not output.is_error:
            text = await self._hooks.post_tool_use(block, text, self._emit)
        if output.images:
            return ToolResultBlock(block.id, (TextBlock(text), *output.images), output.is_error)
        return ToolResultBlock(block.id, text, output.is_error)

    async def _run_tool(self, tool: Tool[Any], args: BaseModel, block: ToolUseBlock) -> ToolOutput:
        """The tool's output, or its failure as an error output for the model."""
        context = replace(
            self._context,
            progress=lambda text: self._emit(ToolCallUpdate(block.id, "in_progress", text)),
            ask_user=lambda question, choices: self._ask_user(block.id, question, choices),
            review_plan=lambda plan: self._review_plan(block, plan),
            leave_sandbox=lambda command, why, trigger: self._leave_sandbox(
                block, SandboxEscalation(command, why, _trigger(trigger))
            ),
            tool_call_id=block.id,
        )
        try:
            return await tool.run(args, context)
        except ToolError as exc:
            return ToolOutput(str(exc), is_error=True)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("tool %s failed", block.name)
            return ToolOutput(f"{block.name} failed: {type(exc).__name__}: {exc}", is_error=True)

    async def _approve(
        self, tool: Tool[Any], args: BaseModel, block: ToolUseBlock
    ) -> tuple[BaseModel, ToolUseBlock, str | None] | ToolResultBlock:
        """PreToolUse hooks, then the permission check: the input to run (as the hooks or
        the user revised it), the call as it runs, a note on the user's revision; or the
        refusal."""
        hooked = await self._pre_tool_use(tool, args, block)
        if isinstance(hooked, ToolResultBlock):
            return hooked
        args, block, hook = hooked
        approved = await self._check_permission(tool, args, block, hook)
        if isinstance(approved, ToolResultBlock):
            return approved
        return approved[0], block, approved[1]

    async def _pre_tool_use(
        self, tool: Tool[Any], args: BaseModel, block: ToolUseBlock
    ) -> tuple[BaseModel, ToolUseBlock, Decision | None] | ToolResultBlock:
        """The PreToolUse hooks' decision for the gate, and the input they rewrote (checked
        like the model's), or the failure of a rewritten input."""
        if self._hooks is None:
            return args, block, None
        verdict = await self._hooks.pre_tool_use(block, self._emit)
        if verdict.updated_input is not None:
            updated = validate_input(tool, verdict.updated_input)
            if isinstance(updated, str):
                text = f"A PreToolUse hook rewrote this call's input, and it is invalid: {updated}"
                return self._finish(block, "failed", text, True)
            args, block = updated, replace(block, input=verdict.updated_input)
        if verdict.behavior is None:
            return args, block, None
        return args, block, Decision(verdict.behavior, verdict.reason)

    async def _sync_buffers(self, tool: Tool[Any], args: BaseModel) -> None:
        """With an editor that gives buffers on request: its text of the files a read or
        a change names, before the review shows them or the tool reads them."""
        workspace = self._context.workspace
        if workspace.buffers is None or tool.kind not in ("read", "edit"):
            return
        # Keyed as the tools resolve them (symlink-free), so their reads find the buffers.
        paths = [
            Path(os.path.realpath(loc.path)) for loc in tool.locations(args, self._context.cwd)
        ]
        await workspace.sync_buffers([p for p in paths if workspace.policy.contains(p)])

    async def _problems_watch(self, tool: Tool[Any], args: BaseModel) -> ProblemsWatch | None:
        """For a change of one file, with an editor that reports diagnostics: its errors
        before the change, so the model hears of the ones the change adds."""
        if tool.kind != "edit" or self._context.diagnostics_wait <= 0:
            return None
        locations = tool.locations(args, self._context.cwd)
        if len(locations) != 1:
            return None
        path = Path(locations[0].path)
        return await ProblemsWatch.start(self._context, path, self._context.diagnostics_wait)

    async def _check_permission(
        self, tool: Tool[Any], args: BaseModel, block: ToolUseBlock, hook: Decision | None
    ) -> tuple[BaseModel, str | None] | ToolResultBlock:
        """The (possibly user-updated) input to run with and a note on the user's revision
        of it for the model, or the refusal result."""
        contents = tool.rule_contents_in(args, self._context)
        # A tool whose own calls meet the gate (Task's agent) is asked about by rules only.
        read_only = tool.is_read_only(args) and tool.read_only_skips_asking
        harmless = read_only or getattr(tool, "calls_are_gated", False)
        decision = self._gate.decide_all(tool.name, tool.kind, harmless, contents, hook)
        if decision.behavior == "allow":
            return args, None
        if decision.behavior == "deny":
            return self._finish(block, "declined", decision.reason, True)
        refusal = tool.refusal_before_asking(args, self._context)
        if refusal is not None:
            return self._finish(block, "failed", refusal, True)
        # A file change carries what it would do, so the user can review it first.
        diff, diffs = self._proposal(tool, args)
        request = PermissionRequest(
            new_id("perm"),
            block.id,
            _request_title(tool, args, block, self._context),
            block.input,
            _options_with_rules(tool, contents),
            diff or (diffs[0] if diffs and len(diffs) == 1 else None),
            diffs,
        )
        answer = await ask_permission(self._prompter, self._emit, request)
        if answer.option_id in ("allow_always", "reject_always"):
            for content in contents:
                self._gate.remember(_always_rule(tool, content, answer.option_id))
        if answer.option_id.startswith("reject"):
            reason = "The user rejected this tool call."
            if answer.message:
                reason += f" They said: {answer.message}"
            return self._finish(block, "declined", reason, True)
        if answer.accepted_text is not None and diff is not None:
            return self._reviewed(tool, args, block, diff, answer.accepted_text)
        if answer.updated_input is not None:
            updated = validate_input(tool, answer.updated_input)
            if isinstance(updated, str):
                return self._finish(block, "failed", updated, True)
            return updated, None
        return args, None

    def _proposal(
        self, tool: Tool[Any], args: BaseModel
    ) -> tuple[FileDiff | None, tuple[FileDiff, ...] | None]:
        """The change of one file (reviewable), or of several (each shown), the call makes."""
        if isinstance(tool, ProposesChange):
            return tool.proposed_change(args, self._context), None
        if isinstance(tool, ProposesChanges):
            return None, tool.proposed_changes(args, self._context)
        return None, None

    def _reviewed(
        self, tool: Tool[Any], args: BaseModel, block: ToolUseBlock, diff: FileDiff, accepted: str
    ) -> tuple[BaseModel, str | None] | ToolResultBlock:
        """The call as the user accepted it after review: all of it, part of it, or none."""
        if accepted == diff.new_text:
            return args, None
        if accepted == (diff.old_text or "") and diff.old_text is not None:
            text = "The user reviewed this change and rejected all of it; the file is unchanged."
            return self._finish(block, "declined", text, True)
        assert isinstance(tool, ProposesChange)
        return tool.revised_input(args, diff.old_text, accepted), revision_note(diff, accepted)

    async def _ask_user(self, tool_call_id: str, question: str, choices: list[str] | None) -> str:
        request = AskUserRequest(
            new_id("ask"), tool_call_id, question, tuple(choices) if choices else None
        )
        self._emit(request)
        try:
            answer = await self._prompter.wait_for_user_answer(request)
        except asyncio.CancelledError:
            self._emit(AskUserResolved(request.request_id, "cancelled"))
            raise
        self._emit(AskUserResolved(request.request_id, "answered", answer))
        return answer

    async def _review_plan(self, block: ToolUseBlock, plan: str) -> PlanVerdict:
        """A plan goes to the user as a permission request with the plan's own options."""
        request = PermissionRequest(
            new_id("perm"), block.id, "Approve the plan", block.input, PLAN_OPTIONS, plan=plan
        )
        answer = await ask_permission(self._prompter, self._emit, request)
        return plan_verdict(answer.option_id, answer.message)

    async def _leave_sandbox(
        self, block: ToolUseBlock, escalation: SandboxEscalation
    ) -> str | None:
        """Ask to run one command outside the sandbox: None when the user allows it, else
        why not. bypassPermissions promises not to ask, and the box is no permission it
        may waive, so there the command stays in (Codex's "never" approval)."""
        if self._context.permission_mode() == "bypassPermissions":
            return "bypassPermissions mode asks nobody, and only the user can let a command out"
        command = " ".join(escalation.command.split())
        if len(command) > 60:
            command = command[:59] + "…"
        request = PermissionRequest(
            new_id("perm"),
            block.id,
            f"Run outside the sandbox: {command}",
            block.input,
            SANDBOX_ESCALATION_OPTIONS,
            sandbox_escalation=escalation,
        )
        answer = await ask_permission(self._prompter, self._emit, request)
        if answer.option_id == "allow_once":
            return None
        said = f" They said: {answer.message}" if answer.message else ""
        return f"the user kept it in the sandbox.{said}"

    def _finish(
        self, block: ToolUseBlock, status: ToolCallStatus, text: str, is_error: bool
    ) -> ToolResultBlock:
        self._emit(ToolCallUpdate(block.id, status, text))
        if status == "declined":
            self.declined.add(block.id)
        return ToolResultBlock(block.id, text, is_error)


def tool_call_event(
    tool: Tool[Any] | None, args: BaseModel | None, block: ToolUseBlock, cwd: Path
) -> ToolCallEvent:
    """How a call is announced: its kind, title and the places it touches."""
    return ToolCallEvent(
        block.id,
        block.name,
        tool.kind if tool else "other",
        _title(tool, args, block),
        block.input,
        tuple(tool.locations(args, cwd)) if tool and args else None,
    )


def recorded_call_event(registry: ToolRegistry, block: ToolUseBlock, cwd: Path) -> ToolCallEvent:
    """A call from the history, announced as it was when it ran (for a replay)."""
    tool = registry.get(block.name)
    args = validate_input(tool, block.input) if tool is not None else None
    return tool_call_event(tool, args if isinstance(args, BaseModel) else None, block, cwd)


def _title(tool: Tool[Any] | None, args: BaseModel | None, block: ToolUseBlock) -> str:
    if tool is None or args is None:
        return block.name
    try:
        return tool.title(args)
    except Exception:
        return block.name


def _request_title(
    tool: Tool[Any], args: BaseModel, block: ToolUseBlock, context: ToolContext
) -> str:
    try:
        return tool.request_title(args, context)
    except Exception:
        return _title(tool, args, block)


def _always_rule(tool: Tool[Any], content: str | None, option_id: str) -> Rule:
    """The session rule an allow_always / reject_always answer saves."""
    behavior: Literal["allow", "deny"] = "allow" if option_id == "allow_always" else "deny"
    return rule_for_always(tool.name, tool.kind, content, behavior)


def _options_with_rules(
    tool: Tool[Any], contents: tuple[str | None, ...]
) -> tuple[PermissionOption, ...]:
    """The four options, the "always" ones naming the exact rules they would save (one per
    path for a call on several)."""
    return tuple(
        replace(option, rule=", ".join(str(_always_rule(tool, c, option.kind)) for c in contents))
        if option.kind in ("allow_always", "reject_always")
        else option
        for option in PERMISSION_OPTIONS
    )


def _trigger(name: str) -> Literal["failed_in_sandbox", "model_request"]:
    return "model_request" if name == "model_request" else "failed_in_sandbox"
