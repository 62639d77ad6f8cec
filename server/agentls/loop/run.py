"""The agent loop, top to bottom: sample the model, run its tools, feed results back, repeat.

`run_turn` drives one user turn to exactly one `TurnCompleted`. Each trip round the loop
records why it went round again (`QueryState.transitions`), so tests can tell which path
ran. Abort is task cancellation: whatever is in flight is settled so the history stays
paired, and the turn ends `aborted`.
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Literal

from agentls.events import (
    LoopEvent,
    MessageCompleted,
    MessageDiscarded,
    Notice,
    TurnCompleted,
    TurnError,
    TurnLimitReached,
    TurnStopReason,
    UsageEvent,
)
from agentls.loop.assemble import AssistantAssembler, ToolCallReady
from agentls.loop.compaction_run import Compacted, CompactionFailed, apply_compaction, compact
from agentls.loop.deps import LoopDeps, LoopSettings
from agentls.loop.executor import ToolExecutor
from agentls.loop.guards import BUDGET_SPENT, WRAP_UP_TEXT, StuckDetector
from agentls.messages import ContentBlock, Message, TextBlock, ToolResultBlock
from agentls.output_limits import learn_output_limit
from agentls.pairing import alternating, pairing_problems, repair_pairing
from agentls.providers.base import ModelRequest, ProviderError, StopReason
from agentls.usage import Usage

__all__ = ["LoopDeps", "LoopSettings", "QueryState", "announces_action", "run_turn"]

log = logging.getLogger(__name__)

HARD_TURN_CAP = 100
Transition = Literal[
    "next_turn",
    "retry",
    "nudge",
    "steer",
    "stream_error_with_tools",
    "auto_compact",
    "reactive_compact_retry",
    "max_tokens_escalate",
    "max_tokens_continue",
    "output_limit_retry",
    "budget_wrap_up",
    "stuck_nudge",
    "stop_hook_blocking",
]

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


@dataclass(slots=True)
class _Inflight:
    assembler: AssistantAssembler
    executor: ToolExecutor
    message_appended: bool = False


@dataclass(slots=True)
class QueryState:
    turn_id: str
    messages: list[Message]
    turn_count: int = 0
    nudges: int = 0
    model_errors: int = 0
    # Seconds waited before retries since the last successful model call.
    retry_waited: float = 0.0
    tool_failures: int = 0
    usage: Usage = field(default_factory=Usage)
    transitions: list[Transition] = field(default_factory=list)
    inflight: _Inflight | None = None
    max_tokens_override: int | None = None
    continuations: int = 0
    reactive_tried: bool = False
    output_limit_tried: bool = False
    # The budget is spent: the next model call is the last, with no tool allowed to run.
    wrapping_up: bool = False
    # Tokens of the last request and reply: the prefix the next request sends again.
    last_prompt: int = 0
    stuck: StuckDetector = field(default_factory=lambda: StuckDetector(0))
    # A Stop hook sent the model back to work in this turn (hooks are told, to avoid loops).
    stop_hook_active: bool = False


@dataclass(frozen=True, slots=True)
class TurnStop:
    reason: TurnStopReason
    error: TurnError | None = None


@dataclass(frozen=True, slots=True)
class _Sampled:
    message: Message
    stop_reason: StopReason
    results: list[ToolResultBlock]
    declined: set[str]


async def run_turn(state: QueryState, deps: LoopDeps) -> AsyncIterator[LoopEvent]:
    """Run one user turn (its user message is already in `state.messages`) to completion."""
    channel: asyncio.Queue[LoopEvent | None] = asyncio.Queue()
    driver = asyncio.create_task(_drive(state, deps, channel.put_nowait))
    driver.add_done_callback(lambda _task: channel.put_nowait(None))
    watcher = asyncio.create_task(_cancel_on_abort(deps.abort, driver))
    try:
        while (event := await channel.get()) is not None:
            yield event
    finally:
        watcher.cancel()
        if not driver.done():
            driver.cancel()
            await asyncio.gather(driver, return_exceptions=True)


async def _cancel_on_abort(abort: asyncio.Event, driver: asyncio.Task[None]) -> None:
    await abort.wait()
    driver.cancel()


async def _drive(state: QueryState, deps: LoopDeps, emit: Callable[[LoopEvent], None]) -> None:
    try:
        stop = await _loop(state, deps, emit)
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
        await _settle_abort(state, deps, emit)
        stop = TurnStop("aborted")
    except Exception as exc:
        log.exception("turn %s failed", state.turn_id)
        await _settle_abort(state, deps, emit)
        message = f"Internal error: {type(exc).__name__}: {exc}"
        stop = TurnStop("error", TurnError("internal_error", message, False))
    if stop.reason == "max_turns":
        emit(TurnLimitReached(state.turn_count, _turn_limit(deps.settings)))
    emit(TurnCompleted(state.turn_id, stop.reason, state.turn_count, state.usage, stop.error))


def _turn_limit(settings: LoopSettings) -> int:
    return HARD_TURN_CAP if settings.max_turns < 0 else min(settings.max_turns, HARD_TURN_CAP)


async def _loop(state: QueryState, deps: LoopDeps, emit: Callable[[LoopEvent], None]) -> TurnStop:
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
        over = None if state.wrapping_up else _over_budget(state, deps, state.messages)
        if over is not None:
            # Only a reply's follow-up (or the first call) gets here: nothing waits on it.
            emit(Notice("warning", f"Stopped before the next model call: {over}."))
            return TurnStop("budget_exceeded")
        last_call = state.wrapping_up
        sampled = await _sample(state, deps, emit)
        if isinstance(sampled, TurnStop):
            return sampled
        state.turn_count += 1
        if sampled.results:
            step = _after_tools(state, deps, emit, sampled, limit)
        else:
            step = _after_reply(state, deps, emit, sampled, limit)
        if isinstance(step, TurnStop) and step.reason == "end_turn":
            step = await _stop_hooks(state, deps, emit, sampled.message, limit)
        await _iteration_completed(state, deps, sampled, step)
        if last_call and not isinstance(step, TurnStop):
            return TurnStop("budget_exceeded")
        if isinstance(step, TurnStop):
            return step
        state.transitions.append(step)


def _after_tools(
    state: QueryState,
    deps: LoopDeps,
    emit: Callable[[LoopEvent], None],
    sampled: _Sampled,
    limit: int,
) -> TurnStop | Transition:
    """Feed the results back; stop on repeated failures, repetition or the turn limit."""
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
        content = _wrap_up_if_spent(state, deps, emit, content)
    _append(state, deps, emit, Message("user", content))
    if state.tool_failures >= settings.max_consecutive_errors:
        message = (
            f"Stopped after {state.tool_failures} rounds in a row where every tool call failed."
        )
        return TurnStop("error", TurnError("tool_failures", message, False))
    if verdict == "stop":
        return _stuck(state, emit)
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


def _after_reply(
    state: QueryState,
    deps: LoopDeps,
    emit: Callable[[LoopEvent], None],
    sampled: _Sampled,
    limit: int,
) -> TurnStop | Transition:
    """A reply without tool calls: continue a cut one, steer, nudge, or end the turn."""
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
        _append(state, deps, emit, Message("user", (TextBlock(CONTINUE_TEXT),)))
        return "max_tokens_continue"
    if state.turn_count >= limit:
        # Pending steering stays with the session, which runs it as the next turn.
        return TurnStop("end_turn")
    follow_up, transition = _follow_up(state, deps, sampled.message)
    if follow_up is None:
        return TurnStop("end_turn")
    verdict = state.stuck.see_reply(sampled.message)
    if verdict == "stop":
        return _stuck(state, emit)
    if verdict == "nudge":
        follow_up = (*follow_up, TextBlock(state.stuck.nudge_text()))
    _append(state, deps, emit, Message("user", follow_up))
    return transition


async def _stop_hooks(
    state: QueryState,
    deps: LoopDeps,
    emit: Callable[[LoopEvent], None],
    reply: Message,
    limit: int,
) -> TurnStop | Transition:
    """The model would end the turn: a blocking Stop hook sends it back to work, within the
    turn limit (the hook is told when it already did, so it can let the model stop)."""
    text = await deps.hooks.stop(reply, state.stop_hook_active, emit)
    if text is None or state.turn_count >= limit:
        return TurnStop("end_turn")
    # The same reply to a hook that keeps blocking is a loop: nudged, then stopped.
    verdict = state.stuck.see_reply(reply)
    if verdict == "stop":
        return _stuck(state, emit)
    nudge = (TextBlock(state.stuck.nudge_text()),) if verdict == "nudge" else ()
    state.stop_hook_active = True
    _append(state, deps, emit, Message("user", (TextBlock(text), *nudge)))
    return "stop_hook_blocking"


async def _iteration_completed(
    state: QueryState, deps: LoopDeps, sampled: _Sampled, step: TurnStop | Transition
) -> None:
    done = (None, step.reason) if isinstance(step, TurnStop) else (step, None)
    calls = len(sampled.message.tool_uses())
    await deps.hooks.iteration_completed(state.turn_id, state.turn_count, calls, done, state.usage)


def _stuck(state: QueryState, emit: Callable[[LoopEvent], None]) -> TurnStop:
    emit(Notice("warning", f"Stopped: the model kept repeating {state.stuck.repeated}."))
    return TurnStop("stuck")


def _over_budget(state: QueryState, deps: LoopDeps, messages: list[Message]) -> str | None:
    """Why a request with `messages` would take the turn past its budget, if it would."""
    settings = deps.settings
    if settings.budget.tokens is None and settings.budget.usd is None:
        return None
    if deps.context is not None:
        prompt = deps.context.budget.estimate(messages)
    else:
        prompt = sum(len(m.text()) for m in messages) // 4
    # The turn's spending so far, its sub-agents' included (they share `spend`).
    return settings.budget.overrun(deps.spend.usage, prompt, state.last_prompt, settings.price)


def _wrap_up_if_spent(
    state: QueryState,
    deps: LoopDeps,
    emit: Callable[[LoopEvent], None],
    content: tuple[ContentBlock, ...],
) -> tuple[ContentBlock, ...]:
    """With the budget spent, the results go back with an instruction to finish now."""
    over = _over_budget(state, deps, [*state.messages, Message("user", content)])
    if over is None:
        return content
    state.wrapping_up = True
    emit(Notice("warning", f"Budget reached: {over}. The model is asked to finish now."))
    return (*content, TextBlock(WRAP_UP_TEXT))


def _follow_up(
    state: QueryState, deps: LoopDeps, message: Message
) -> tuple[tuple[ContentBlock, ...] | None, Transition]:
    """What to send after a message without tool calls: steering, a nudge, or nothing."""
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


async def _sample(
    state: QueryState, deps: LoopDeps, emit: Callable[[LoopEvent], None]
) -> _Sampled | TurnStop:
    """One model call with its tool calls, retried on retryable provider errors."""
    while True:
        stop = await _prepare_context(state, deps, emit)
        if stop is not None:
            return stop
        request = _build_request(state, deps, emit)
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
        inflight = state.inflight = _Inflight(AssistantAssembler(), executor)
        try:
            await _stream(deps, request, inflight, emit)
        except ProviderError as exc:
            stop = await _on_provider_error(state, deps, emit, exc)
            if stop is not None:
                return stop
            continue
        finally:
            _account(state, deps, emit, inflight.assembler.usage)
        state.model_errors, state.retry_waited = 0, 0.0
        state.reactive_tried = state.output_limit_tried = False
        assembler = inflight.assembler
        if _escalate(state, deps, emit, inflight):
            continue
        message = _finish_message(state, deps, emit, inflight)
        if deps.context is not None and assembler.usage != Usage():
            deps.context.budget.record_usage(assembler.usage.context_tokens, len(state.messages))
        results = await executor.results()
        state.usage = state.usage + executor.subagent_usage
        state.inflight = None
        return _Sampled(message, assembler.stop_reason or "end_turn", results, executor.declined)


def _escalate(
    state: QueryState, deps: LoopDeps, emit: Callable[[LoopEvent], None], inflight: _Inflight
) -> bool:
    """Ask again once with a higher output cap when a response was cut and nothing ran."""
    settings = deps.settings
    cap = settings.output_tokens(settings.escalated_max_tokens)
    if (
        inflight.assembler.stop_reason != "max_tokens"
        or inflight.assembler.dispatched_calls()
        or state.max_tokens_override is not None
        or cap <= settings.output_tokens()
    ):
        return False
    state.max_tokens_override = cap
    state.inflight = None
    _discard(inflight, emit, "max_tokens_escalate")
    emit(
        Notice(
            "info",
            f"The response hit the output limit of {settings.output_tokens()} tokens; asking "
            f"again with {cap}.",
        )
    )
    state.transitions.append("max_tokens_escalate")
    return True


def _discard(
    inflight: _Inflight | None,
    emit: Callable[[LoopEvent], None],
    reason: Literal["retry", "max_tokens_escalate", "compacted", "error"],
) -> None:
    """Tell clients to drop an attempt's streamed text before the model is asked again."""
    if inflight is not None and not inflight.message_appended and inflight.assembler.streamed():
        emit(MessageDiscarded(inflight.assembler.message_id, reason))


async def _prepare_context(
    state: QueryState, deps: LoopDeps, emit: Callable[[LoopEvent], None]
) -> TurnStop | None:
    """Warn, compact or refuse before a request, by how full the window would be."""
    window = deps.context
    if window is None:
        return None
    tokens = window.budget.estimate(state.messages)
    level = window.budget.level(tokens)
    if level == "normal":
        return None
    if level == "warn":
        if not window.warned:
            window.warned = True
            percent = window.budget.fraction(tokens)
            emit(
                Notice(
                    "warning",
                    f"The context is {percent:.0%} full; it is compacted at "
                    f"{window.settings.thresholds.compact:.0%}.",
                )
            )
        return None
    await deps.hooks.pre_compact("auto", None, emit)
    while True:
        try:
            compacted = await compact(state.messages, deps, window, summarize=False)
        except CompactionFailed as exc:
            window.failures += 1
            if window.failures >= window.settings.max_failures:
                message = f"Compaction failed {window.failures} times in a row: {exc}"
                return TurnStop("error", TurnError("compaction_failed", message, False))
            if level == "compact":
                emit(Notice("warning", f"Compaction failed ({exc}); continuing without it."))
                return None
            emit(Notice("warning", f"Compaction failed ({exc}); trying again."))
            continue
        await _compacted(state, deps, emit, compacted, "auto")
        state.transitions.append("auto_compact")
        return None


async def _stream(
    deps: LoopDeps, request: ModelRequest, inflight: _Inflight, emit: Callable[[LoopEvent], None]
) -> None:
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


async def _on_provider_error(
    state: QueryState, deps: LoopDeps, emit: Callable[[LoopEvent], None], exc: ProviderError
) -> TurnStop | None:
    """Settle a failed model call; None means go round again (after a backoff)."""
    inflight = state.inflight
    if _lower_output_limit(state, deps, emit, exc):
        state.inflight = None
        return None
    if await _reactive_compact(state, deps, emit, exc):
        state.inflight = None
        _discard(inflight, emit, "compacted")
        return None
    state.model_errors += 1
    if inflight is not None and inflight.assembler.dispatched_calls():
        # Calls already ran (or run) for this partial message: keep it, so nothing is redone.
        _finish_message(state, deps, emit, inflight)
        results = await inflight.executor.results()
        _append(state, deps, emit, Message("user", tuple(results)))
        state.turn_count += 1
        state.transitions.append("stream_error_with_tools")
    state.inflight = None
    if not exc.retryable:
        # The attempt's partial text never joins the history: clients drop it too.
        _discard(inflight, emit, "error")
        return TurnStop("error", TurnError(exc.kind, _describe(exc), False))
    settings = deps.settings
    delay = _retry_delay(settings, state.model_errors, exc.retry_after)
    if (
        state.model_errors > settings.model_retries
        or state.retry_waited + delay > settings.retry_budget
    ):
        message = (
            f"{_describe(exc)} Gave up after {state.model_errors} attempts and "
            f"{state.retry_waited:.0f} s of waiting (settings modelRetries, retryBudget)."
        )
        _discard(inflight, emit, "error")
        return TurnStop("error", TurnError("model_errors", message, True))
    _discard(inflight, emit, "retry")
    emit(
        Notice(
            "warning",
            f"{_describe(exc)} Retrying in {delay:.1f} s "
            f"(attempt {state.model_errors + 1} of {settings.model_retries + 1}).",
            retrying=True,
            attempt=state.model_errors,
            delay=round(delay, 3),
        )
    )
    # Abort cancels this task, which ends the wait at once.
    await deps.clock.sleep(delay)
    state.retry_waited += delay
    state.transitions.append("retry")
    return None


def _lower_output_limit(
    state: QueryState, deps: LoopDeps, emit: Callable[[LoopEvent], None], exc: ProviderError
) -> bool:
    """When the server refused the output limit and said its cap: ask once more within it."""
    limit = exc.output_limit
    asked = deps.settings.output_tokens(state.max_tokens_override)
    if limit is None or limit <= 0 or limit >= asked or state.output_limit_tried:
        return False
    state.output_limit_tried = True
    learn_output_limit(deps.settings.model, limit)
    state.max_tokens_override = limit
    emit(
        Notice(
            "info",
            f"The server allows at most {limit} output tokens for {deps.settings.model}; "
            f"asking again with {limit} (setting maxOutputTokens).",
        )
    )
    state.transitions.append("output_limit_retry")
    return True


async def _reactive_compact(
    state: QueryState, deps: LoopDeps, emit: Callable[[LoopEvent], None], exc: ProviderError
) -> bool:
    """On "prompt too long": one summary and one retry per model call."""
    window = deps.context
    if exc.kind != "prompt_too_long" or window is None or state.reactive_tried:
        return False
    if state.inflight is not None and state.inflight.assembler.dispatched_calls():
        return False
    state.reactive_tried = True
    await deps.hooks.pre_compact("auto", None, emit)
    try:
        compacted = await compact(state.messages, deps, window, summarize=True)
    except CompactionFailed as failure:
        window.failures += 1
        emit(Notice("warning", f"Compaction after a too-long prompt failed: {failure}"))
        return False
    await _compacted(state, deps, emit, compacted, "reactive")
    state.transitions.append("reactive_compact_retry")
    return True


async def _compacted(
    state: QueryState,
    deps: LoopDeps,
    emit: Callable[[LoopEvent], None],
    compacted: Compacted,
    trigger: Literal["auto", "reactive"],
) -> None:
    """Make the compacted history the turn's, count its summary call, tell everyone."""
    _account(state, deps, emit, compacted.usage)
    event = apply_compaction(state.messages, deps, compacted, trigger)
    emit(event)
    await deps.hooks.compacted(event, state.turn_id)


def _budgeted(deps: LoopDeps, results: list[ToolResultBlock]) -> list[ToolResultBlock]:
    # Applied once, before the message joins the history, so later requests reuse the
    # same replacement and the prompt prefix stays byte-stable.
    return deps.context.budget_results(results) if deps.context is not None else results


def _describe(exc: ProviderError) -> str:
    status = f" (HTTP {exc.status})" if exc.status else ""
    return f"Model error {exc.kind}{status}: {exc.message}"


def _retry_delay(settings: LoopSettings, attempt: int, retry_after: float | None) -> float:
    """The server's retry-after when it sent one, else exponential backoff with jitter."""
    if retry_after is not None and retry_after >= 0:
        return retry_after
    backoff = min(settings.retry_base_delay * 2.0 ** (attempt - 1), settings.retry_max_delay)
    return float(backoff * (1 - 0.25 * random.random()))


def _build_request(
    state: QueryState, deps: LoopDeps, emit: Callable[[LoopEvent], None]
) -> ModelRequest:
    messages: list[Message] = state.messages
    problems = pairing_problems(messages)
    if problems:
        log.error("history pairing broken before a model call: %s", problems)
        emit(Notice("error", "The history had unpaired tool calls; they were repaired."))
        messages = repair_pairing(messages)
    settings = deps.settings
    return ModelRequest(
        model=settings.model,
        system_static=deps.system.static,
        system_dynamic=deps.system.dynamic,
        messages=alternating(messages),
        tools=deps.registry.specs(),
        max_tokens=settings.output_tokens(state.max_tokens_override),
        thinking_budget=settings.thinking_budget,
        tool_choice="none" if state.wrapping_up else "auto",
    )


def _finish_message(
    state: QueryState, deps: LoopDeps, emit: Callable[[LoopEvent], None], inflight: _Inflight
) -> Message:
    message = inflight.assembler.message()
    if message.content and not inflight.message_appended:
        _append(state, deps, emit, message)
    inflight.message_appended = True
    return message


def _account(
    state: QueryState, deps: LoopDeps, emit: Callable[[LoopEvent], None], usage: Usage
) -> None:
    """Count one model call's usage in the turn and report it."""
    if usage == Usage():
        return
    state.usage = state.usage + usage
    state.last_prompt = usage.context_tokens
    deps.spend.add(usage)
    emit(
        UsageEvent(
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens,
            usage.context_tokens,
            deps.settings.context_window,
            round(deps.settings.price.cost(usage), 6) if deps.settings.price else None,
        )
    )


def _append(
    state: QueryState, deps: LoopDeps, emit: Callable[[LoopEvent], None], message: Message
) -> None:
    # Journal first: a message that is complete is on disk before anything else happens.
    deps.journal.record_message(message, state.turn_id)
    state.messages.append(message)
    emit(MessageCompleted(message.id, message.role, message.content))


async def _settle_abort(
    state: QueryState, deps: LoopDeps, emit: Callable[[LoopEvent], None]
) -> None:
    """Keep what the model said, and give every dispatched call a result."""
    inflight = state.inflight
    state.inflight = None
    if inflight is None:
        return
    _finish_message(state, deps, emit, inflight)
    results = await inflight.executor.interrupt()
    if results:
        _append(state, deps, emit, Message("user", tuple(results)))
