"""When a model call goes wrong or the window fills: the turn's ways to go on.

Before a request, a window that is too full is compacted (`prepare_context`). After a
failed call (`on_provider_error`): a server that names a lower output cap is asked again
within it, a prompt that is too long is summarised and sent again, a retryable error is
retried with backoff within the turn's budget of attempts and seconds. After a reply cut
by the output limit with nothing run (`escalate`): asked once more with a higher cap.
"""

from __future__ import annotations

import random

from agentls.events import Notice, TurnError
from agentls.loop.compaction_run import CompactionFailed, compact
from agentls.loop.deps import LoopSettings
from agentls.loop.turn_state import Inflight, TurnRun, TurnStop
from agentls.messages import Message
from agentls.output_limits import learn_output_limit
from agentls.providers.base import ProviderError


async def prepare_context(run: TurnRun) -> TurnStop | None:
    """Warn, compact or refuse before a request, by how full the window would be."""
    state, deps, emit = run.state, run.deps, run.emit
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
        await run.compacted(compacted, "auto")
        state.transitions.append("auto_compact")
        return None


def escalate(run: TurnRun, inflight: Inflight) -> bool:
    """Ask again once with a higher output cap when a response was cut and nothing ran."""
    state, settings = run.state, run.deps.settings
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
    run.discard(inflight, "max_tokens_escalate")
    run.emit(
        Notice(
            "info",
            f"The response hit the output limit of {settings.output_tokens()} tokens; asking "
            f"again with {cap}.",
        )
    )
    state.transitions.append("max_tokens_escalate")
    return True


async def on_provider_error(run: TurnRun, exc: ProviderError) -> TurnStop | None:
    """Settle a failed model call; None means go round again (after a backoff)."""
    state, settings = run.state, run.deps.settings
    inflight = state.inflight
    if _lower_output_limit(run, exc):
        state.inflight = None
        return None
    if await _reactive_compact(run, exc):
        state.inflight = None
        run.discard(inflight, "compacted")
        return None
    state.model_errors += 1
    if inflight is not None and inflight.assembler.dispatched_calls():
        # Calls already ran (or run) for this partial message: keep it, so nothing is redone.
        run.finish_message(inflight)
        results = await inflight.executor.results()
        run.append(Message("user", tuple(results)))
        state.turn_count += 1
        state.transitions.append("stream_error_with_tools")
    state.inflight = None
    if not exc.retryable:
        # The attempt's partial text never joins the history: clients drop it too.
        run.discard(inflight, "error")
        return TurnStop("error", TurnError(exc.kind, describe(exc), False))
    delay = retry_delay(settings, state.model_errors, exc.retry_after)
    if (
        state.model_errors > settings.model_retries
        or state.retry_waited + delay > settings.retry_budget
    ):
        message = (
            f"{describe(exc)} Gave up after {state.model_errors} attempts and "
            f"{state.retry_waited:.0f} s of waiting (settings modelRetries, retryBudget)."
        )
        run.discard(inflight, "error")
        return TurnStop("error", TurnError("model_errors", message, True))
    run.discard(inflight, "retry")
    run.emit(
        Notice(
            "warning",
            f"{describe(exc)} Retrying in {delay:.1f} s "
            f"(attempt {state.model_errors + 1} of {settings.model_retries + 1}).",
            retrying=True,
            attempt=state.model_errors,
            delay=round(delay, 3),
        )
    )
    # Abort cancels this task, which ends the wait at once.
    await run.deps.clock.sleep(delay)
    state.retry_waited += delay
    state.transitions.append("retry")
    return None


def _lower_output_limit(run: TurnRun, exc: ProviderError) -> bool:
    """When the server refused the output limit and said its cap: ask once more within it."""
    state, settings = run.state, run.deps.settings
    limit = exc.output_limit
    asked = settings.output_tokens(state.max_tokens_override)
    if limit is None or limit <= 0 or limit >= asked or state.output_limit_tried:
        return False
    state.output_limit_tried = True
    learn_output_limit(settings.model, limit)
    state.max_tokens_override = limit
    run.emit(
        Notice(
            "info",
            f"The server allows at most {limit} output tokens for {settings.model}; "
            f"asking again with {limit} (setting maxOutputTokens).",
        )
    )
    state.transitions.append("output_limit_retry")
    return True


async def _reactive_compact(run: TurnRun, exc: ProviderError) -> bool:
    """On "prompt too long": one summary and one retry per model call."""
    state, deps = run.state, run.deps
    window = deps.context
    if exc.kind != "prompt_too_long" or window is None or state.reactive_tried:
        return False
    if state.inflight is not None and state.inflight.assembler.dispatched_calls():
        return False
    state.reactive_tried = True
    await deps.hooks.pre_compact("auto", None, run.emit)
    try:
        compacted = await compact(state.messages, deps, window, summarize=True)
    except CompactionFailed as failure:
        window.failures += 1
        run.emit(Notice("warning", f"Compaction after a too-long prompt failed: {failure}"))
        return False
    await run.compacted(compacted, "reactive")
    state.transitions.append("reactive_compact_retry")
    return True


def describe(exc: ProviderError) -> str:
    status = f" (HTTP {exc.status})" if exc.status else ""
    return f"Model error {exc.kind}{status}: {exc.message}"


def retry_delay(settings: LoopSettings, attempt: int, retry_after: float | None) -> float:
    """The server's retry-after when it sent one, else exponential backoff with jitter."""
    if retry_after is not None and retry_after >= 0:
        return retry_after
    backoff = min(settings.retry_base_delay * 2.0 ** (attempt - 1), settings.retry_max_delay)
    return float(backoff * (1 - 0.25 * random.random()))
