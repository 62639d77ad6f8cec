"""The agent loop, top to bottom: sample the model, run its tools, feed results back, repeat.

`run_turn` drives one user turn to exactly one `TurnCompleted`. Each trip round the loop
records why it went round again (`QueryState.transitions`), so tests can tell which path
ran. Abort is task cancellation: whatever is in flight is settled so the history stays
paired, and the turn ends `aborted`. Every step takes the running turn (`TurnRun`: its
state, its parts, where its events go); what happens when a call fails or the window
fills is in recovery.py.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass

from agentls.events import (
    Emit,
    LoopEvent,
    Notice,
    TurnCompleted,
    TurnError,
    TurnLimitReached,
)
from agentls.loop.assemble import AssistantAssembler, ToolCallReady
from agentls.loop.channel import EventChannel
from agentls.loop.deps import LoopDeps, LoopSettings
from agentls.loop.executor import ToolExecutor
from agentls.loop.guards import BUDGET_SPENT, WRAP_UP_TEXT, StuckDetector
from agentls.loop.recovery import escalate, on_provider_error, prepare_context
from agentls.loop.turn_state import Inflight, QueryState, Transition, TurnRun, TurnStop
from agentls.messages import ContentBlock, Message, TextBlock, ToolResultBlock
from agentls.pairing import repair_pairing
from agentls.pricing import add_cost
from agentls.providers.base import ModelRequest, ProviderError, StopReason, TextDelta
from agentls.usage import Usage

__all__ = ["LoopDeps", "LoopSettings", "QueryState", "announces_action", "drive_turn", "run_turn"]

log = logging.getLogger(__name__)

HARD_TURN_CAP = 100

CONTINUE_TEXT = (
    "Your response was cut off by the output token limit. Continue exactly where you "
    "stopped: no apology, no recap. Break the remaining work into smaller pieces."
)
NUDGE_TEXT = (
    "You announced a next step but did not call a tool. If there is more to do, do it now "
    "with a tool call; if the task is complete, say so briefly."
)
_ANNOUNCES_ACTION = re.compile(
    r"(?:^|\n|[.!]\s+)(?:let me|let's|i'll|i will|i am going to|i'm going to|now i'll|"
    r"next,? i'll|first,? i'll)\b[^\n?]*$",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class _Sampled:
    message: Message
    stop_reason: StopReason
    results: list[ToolResultBlock]
    declined: set[str]


async def run_turn(state: QueryState, deps: LoopDeps) -> AsyncIterator[LoopEvent]:
    """Run one user turn (its user message is already in `state.messages`) to completion."""
    channel = EventChannel()
    driver = _start(state, deps, channel)
    try:
        while await channel.ready():
            while channel.events:
                yield channel.events.popleft()
    finally:
        await _stop(driver)


async def drive_turn(state: QueryState, deps: LoopDeps, emit: Emit) -> None:
    """Run one user turn as `run_turn` does, handing its events to `emit` (the same events,
    at the same moments), without an async generator between the loop and `emit`."""
    channel = EventChannel()
    driver = _start(state, deps, channel)
    events = channel.events
    try:
        while await channel.ready():
            while events:
                emit(events.popleft())
    finally:
        await _stop(driver)


_Driver = tuple["asyncio.Task[None]", "asyncio.Task[None]"]


def _start(state: QueryState, deps: LoopDeps, channel: EventChannel) -> _Driver:
    """The turn's task, which ends the channel when it ends, and its abort watcher."""
    driver = asyncio.create_task(_drive(TurnRun(state, deps, channel.put)))
    driver.add_done_callback(channel.close)
    return driver, asyncio.create_task(_cancel_on_abort(deps.abort, driver))


async def _stop(tasks: _Driver) -> None:
    driver, watcher = tasks
    watcher.cancel()
    if not driver.done():
        driver.cancel()
        await asyncio.gather(driver, return_exceptions=True)


async def _cancel_on_abort(abort: asyncio.Event, driver: asyncio.Task[None]) -> None:
    await abort.wait()
    driver.cancel()


async def _drive(run: TurnRun) -> None:
    state, deps = run.state, run.deps
    try:
        stop = await _loop(run)
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
        await run.settle_abort()
        stop = TurnStop("aborted")
    except Exception as exc:
        log.exception("turn %s failed", state.turn_id)
        await run.settle_abort()
        message = f"Internal error: {type(exc).__name__}: {exc}"
        stop = TurnStop("error", TurnError("internal_error", message, False))
    if stop.reason == "max_turns":
        run.emit(TurnLimitReached(state.turn_count, _turn_limit(deps.settings)))
    cost = _turn_cost(state, deps.settings)
    run.emit(
        TurnCompleted(state.turn_id, stop.reason, state.turn_count, state.usage, stop.error, cost)
    )


def _turn_cost(state: QueryState, settings: LoopSettings) -> float | None:
    """The turn's dollars, rounded as usage events are; None when its model has no price."""
    if settings.price is None or state.cost_usd is None:
        return None
    return round(state.cost_usd, 6)


def _turn_limit(settings: LoopSettings) -> int:
    return HARD_TURN_CAP if settings.max_turns < 0 else min(settings.max_turns, HARD_TURN_CAP)


async def _loop(run: TurnRun) -> TurnStop:
    state, deps, emit = run.state, run.deps, run.emit
    limit = _turn_limit(deps.settings)
    await deps.hooks.loop_started(state.turn_id, deps.settings.model, len(state.messages))
    if limit == 0:
        message = "Chat is disabled for this session (maxTurns is 0). Set maxTurns to 1 or more."
        return TurnStop("error", TurnError("chat_disabled", message, False))
    state.stuck = StuckDetector(deps.settings.stuck_threshold)
    if deps.settings.budget.usd is not None and deps.settings.price is None:
        emit(
            Notice(
                "warning",
                f"maxBudgetUsd is set, but {deps.settings.model} has no known price (setting "
                "prices): the dollar budget is not enforced.",
            )
        )
    while True:
        over = None if state.wrapping_up else _over_budget(run, state.messages)
        if over is not None:
            # Only a reply's follow-up (or the first call) gets here: nothing waits on it.
            emit(Notice("warning", f"Stopped before the next model call: {over}."))
            return TurnStop("budget_exceeded")
        last_call = state.wrapping_up
        sampled = await _sample(run)
        if isinstance(sampled, TurnStop):
            return sampled
        state.turn_count += 1
        if sampled.results:
            step = _after_tools(run, sampled, limit)
        else:
            step = _after_reply(run, sampled, limit)
        if isinstance(step, TurnStop) and step.reason == "end_turn":
            step = await _stop_hooks(run, sampled.message, limit)
        await _iteration_completed(run, sampled, step)
        if last_call and not isinstance(step, TurnStop):
            return TurnStop("budget_exceeded")
        if isinstance(step, TurnStop):
            return step
        state.transitions.append(step)


def _after_tools(run: TurnRun, sampled: _Sampled, limit: int) -> TurnStop | Transition:
    """Feed the results back; stop on repeated failures, repetition or the turn limit."""
    state, deps = run.state, run.deps
    settings = deps.settings
    counted = [r for r in sampled.results if r.tool_use_id not in sampled.declined]
    all_failed = bool(counted) and all(r.is_error for r in counted)
    state.tool_failures = state.tool_failures + 1 if all_failed else 0
    content = _with_steering(_budgeted(deps, sampled.results), deps)
    cut = sampled.stop_reason == "max_tokens"
    continuing = cut and state.continuations < settings.max_tokens_continuations
    if continuing:
        content = (*content, TextBlock(CONTINUE_TEXT))
    verdict = state.stuck.see_calls(sampled.message, sampled.results)
    if verdict == "nudge":
        content = (*content, TextBlock(state.stuck.nudge_text()))
    elif verdict is None and not state.wrapping_up and state.turn_count < limit:
        content = _wrap_up_if_spent(run, content)
    run.append(Message("user", content))
    if state.tool_failures >= settings.max_consecutive_errors:
        message = (
            f"Stopped after {state.tool_failures} rounds in a row where every tool call failed."
        )
        return TurnStop("error", TurnError("tool_failures", message, False))
    if verdict == "stop":
        return _stuck(run)
    if state.turn_count >= limit:
        return TurnStop("max_turns")
    if cut and not continuing:
        return TurnStop("max_tokens")
    if continuing:
        state.continuations += 1
        return "max_tokens_continue"
    if verdict == "nudge":
        return "stuck_nudge"
    if state.wrapping_up:
        return "budget_wrap_up"
    return "next_turn"


def _after_reply(run: TurnRun, sampled: _Sampled, limit: int) -> TurnStop | Transition:
    """A reply without tool calls: continue a cut one, steer, nudge, or end the turn."""
    state, deps = run.state, run.deps
    if state.wrapping_up:
        # The wrap-up reply is the last word; pending steering becomes the next turn.
        return TurnStop("budget_exceeded")
    if sampled.stop_reason == "refusal":
        return TurnStop("refusal")
    if sampled.stop_reason == "max_tokens":
        if state.continuations >= deps.settings.max_tokens_continuations:
            return TurnStop("max_tokens")
        if state.turn_count >= limit:
            return TurnStop("max_turns")
        state.continuations += 1
        run.append(Message("user", (TextBlock(CONTINUE_TEXT),)))
        return "max_tokens_continue"
    if state.turn_count >= limit:
        # Pending steering stays with the session, which runs it as the next turn.
        return TurnStop("end_turn")
    follow_up, transition = _follow_up(run, sampled.message)
    if follow_up is None:
        return TurnStop("end_turn")
    verdict = state.stuck.see_reply(sampled.message)
    if verdict == "stop":
        return _stuck(run)
    if verdict == "nudge":
        follow_up = (*follow_up, TextBlock(state.stuck.nudge_text()))
    run.append(Message("user", follow_up))
    return transition


async def _stop_hooks(run: TurnRun, reply: Message, limit: int) -> TurnStop | Transition:
    """The model would end the turn: a blocking Stop hook sends it back to work, within the
    turn limit (the hook is told when it already did, so it can let the model stop)."""
    state = run.state
    text = await run.deps.hooks.stop(reply, state.stop_hook_active, run.emit)
    if text is None or state.turn_count >= limit:
        return TurnStop("end_turn")
    # The same reply to a hook that keeps blocking is a loop: nudged, then stopped.
    verdict = state.stuck.see_reply(reply)
    if verdict == "stop":
        return _stuck(run)
    nudge = (TextBlock(state.stuck.nudge_text()),) if verdict == "nudge" else ()
    state.stop_hook_active = True
    run.append(Message("user", (TextBlock(text), *nudge)))
    return "stop_hook_blocking"


async def _iteration_completed(
    run: TurnRun, sampled: _Sampled, step: TurnStop | Transition
) -> None:
    state = run.state
    done = (None, step.reason) if isinstance(step, TurnStop) else (step, None)
    calls = len(sampled.message.tool_uses())
    await run.deps.hooks.iteration_completed(
        state.turn_id, state.turn_count, calls, done, state.usage
    )


def _stuck(run: TurnRun) -> TurnStop:
    run.emit(Notice("warning", f"Stopped: the model kept repeating {run.state.stuck.repeated}."))
    return TurnStop("stuck")


def _over_budget(run: TurnRun, messages: list[Message]) -> str | None:
    """Why a request with `messages` would take the turn past its budget, if it would."""
    deps = run.deps
    settings = deps.settings
    if settings.budget.tokens is None and settings.budget.usd is None:
        return None
    if deps.context is not None:
        prompt = deps.context.budget.estimate(messages)
    else:
        prompt = sum(len(m.text()) for m in messages) // 4
    # The turn's spending so far, its sub-agents' included (they share `spend`).
    return settings.budget.overrun(deps.spend.usage, prompt, run.state.last_prompt, settings.price)


def _wrap_up_if_spent(run: TurnRun, content: tuple[ContentBlock, ...]) -> tuple[ContentBlock, ...]:
    """With the budget spent, the results go back with an instruction to finish now."""
    over = _over_budget(run, [*run.state.messages, Message("user", content)])
    if over is None:
        return content
    run.state.wrapping_up = True
    run.emit(Notice("warning", f"Budget reached: {over}. The model is asked to finish now."))
    return (*content, TextBlock(WRAP_UP_TEXT))


def _follow_up(
    run: TurnRun, message: Message
) -> tuple[tuple[ContentBlock, ...] | None, Transition]:
    """What to send after a message without tool calls: steering, a nudge, or nothing."""
    state, deps = run.state, run.deps
    steering = deps.take_steering()
    if steering:
        return tuple(TextBlock(text) for text in steering), "steer"
    if state.nudges < deps.settings.nudge_limit and announces_action(message.text()):
        state.nudges += 1
        return (TextBlock(NUDGE_TEXT),), "nudge"
    return None, "next_turn"


def announces_action(text: str) -> bool:
    """True when text ends by announcing an action ("Let me…", a trailing colon)."""
    tail = text.strip()
    if not tail:
        return False
    return tail.endswith(":") or bool(_ANNOUNCES_ACTION.search(tail[-300:]))


def _with_steering(results: list[ToolResultBlock], deps: LoopDeps) -> tuple[ContentBlock, ...]:
    # Steering joins the tool-results message, so the model reads it before its next step.
    return (*results, *(TextBlock(text) for text in deps.take_steering()))


async def _sample(run: TurnRun) -> _Sampled | TurnStop:
    """One model call with its tool calls, retried on retryable provider errors."""
    state, deps, emit = run.state, run.deps, run.emit
    while True:
        stop = await prepare_context(run)
        if stop is not None:
            return stop
        request = _build_request(run)
        executor = ToolExecutor(
            deps.registry,
            deps.tool_context,
            deps.gate,
            deps.prompter,
            emit,
            deps.settings.read_concurrency,
            refusal=BUDGET_SPENT if state.wrapping_up else None,
            hooks=deps.hooks,
        )
        inflight = state.inflight = Inflight(AssistantAssembler(), executor)
        try:
            await _stream(deps, request, inflight, emit)
        except ProviderError as exc:
            stop = await on_provider_error(run, exc)
            if stop is not None:
                return stop
            continue
        finally:
            run.account(inflight.assembler.usage)
        state.model_errors, state.retry_waited = 0, 0.0
        state.reactive_tried = state.output_limit_tried = False
        assembler = inflight.assembler
        if escalate(run, inflight):
            continue
        message = run.finish_message(inflight)
        if deps.context is not None and assembler.usage != Usage():
            deps.context.budget.record_usage(assembler.usage.context_tokens, len(state.messages))
        results = await executor.results()
        state.usage = state.usage + executor.subagent_usage
        state.cost_usd = add_cost(state.cost_usd, executor.subagent_cost)
        state.inflight = None
        return _Sampled(message, assembler.stop_reason or "end_turn", results, executor.declined)


async def _stream(deps: LoopDeps, request: ModelRequest, inflight: Inflight, emit: Emit) -> None:
    """Feed the provider's stream through the assembler; a silent stream is an error."""
    timeout = deps.settings.idle_timeout
    loop = asyncio.get_running_loop()
    stream = deps.provider.stream(request)
    assembler, executor = inflight.assembler, inflight.executor
    # Moving the deadline on every delta costs a timer handle each; it moves only when it
    # has fallen behind by a tenth of the timeout (at most a second).
    slack = min(1.0, timeout / 10)
    deadline = loop.time() + timeout
    try:
        async with asyncio.timeout_at(deadline) as watchdog:
            async for event in stream:
                now = loop.time()
                if now + timeout - deadline > slack:
                    deadline = now + timeout
                    watchdog.reschedule(deadline)
                if event.__class__ is TextDelta:
                    delta = assembler.text(event)
                    if delta is not None:
                        emit(delta)
                    continue
                for item in assembler.feed(event):
                    if isinstance(item, ToolCallReady):
                        executor.submit(item)
                    else:
                        emit(item)
    except TimeoutError:
        raise ProviderError(
            "idle", f"The model stream sent nothing for {timeout:g} s.", retryable=True
        ) from None
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
    if assembler.stop_reason is None:
        raise ProviderError(
            "connection", "The model stream ended before the message was complete.", retryable=True
        )


def _budgeted(deps: LoopDeps, results: list[ToolResultBlock]) -> list[ToolResultBlock]:
    # Applied once, before the message joins the history, so later requests reuse the
    # same replacement and the prompt prefix stays byte-stable.
    return deps.context.budget_results(results) if deps.context is not None else results


def _build_request(run: TurnRun) -> ModelRequest:
    state, deps = run.state, run.deps
    messages: list[Message] = state.messages
    problems = state.pairing.problems(messages)
    if problems:
        log.error("history pairing broken before a model call: %s", problems)
        run.emit(Notice("error", "The history had unpaired tool calls; they were repaired."))
        messages = repair_pairing(messages)
    settings = deps.settings
    return ModelRequest(
        model=settings.model,
        system_static=deps.system.static,
        system_dynamic=deps.system.dynamic,
        messages=state.alternation(messages),
        tools=deps.registry.specs(),
        max_tokens=settings.output_tokens(state.max_tokens_override),
        thinking_budget=settings.thinking_budget,
        tool_choice="none" if state.wrapping_up else "auto",
    )
