"""Compaction's run in a turn: the steps of agentls.context.compaction_steps, cheapest
first (snip old tool results, shrink oversized ones), then the summary's model call.

The summary is one model call over the history before a boundary; the most recent turns
stay verbatim. The journal records the boundary and the history the model sees from now
on, while the transcript keeps everything that came before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from agentls.context.budget import estimate_message_tokens, estimate_messages_tokens
from agentls.context.compaction_steps import (
    choose_boundary,
    compacted_history,
    microcompact,
    parse_summary,
    snip_old_tool_results,
    summary_message,
    summary_request,
)
from agentls.context.window import ContextWindow
from agentls.events import Compaction
from agentls.loop.deps import LoopDeps
from agentls.messages import Message
from agentls.providers.base import (
    ModelRequest,
    ProviderError,
    TextDelta,
    ToolUseStart,
    UsageUpdate,
)
from agentls.tools.todo import plan_text
from agentls.usage import Usage

Trigger = Literal["auto", "manual", "reactive"]


class CompactionFailed(Exception):
    """The history could not be made smaller; the message says why."""


@dataclass(frozen=True, slots=True)
class Compacted:
    messages: list[Message]
    tokens_before: int
    tokens_after: int
    steps: tuple[str, ...]
    # What the summary call cost (zero when no summary was needed).
    usage: Usage = field(default_factory=Usage)


async def compact(
    messages: Sequence[Message],
    deps: LoopDeps,
    window: ContextWindow,
    *,
    summarize: bool,
    instructions: str | None = None,
) -> Compacted:
    """A smaller history; cheap steps first unless `summarize` asks for the summary."""
    settings = window.settings
    # Before and after are estimated alike, so the numbers compare.
    before = _fresh(window, messages)
    current = list(messages)
    steps: list[str] = []
    if not summarize:
        current, stats = snip_old_tool_results(current, settings.keep_recent_turns)
        if stats.results_snipped:
            steps.append("snip")
        current, removed = microcompact(current, settings.micro_max_chars)
        if removed:
            steps.append("microcompact")
        if steps and _fresh(window, current) < window.budget.window * settings.thresholds.compact:
            return Compacted(current, before, _fresh(window, current), tuple(steps))
    # Asked for outright (manual, or the provider said "too long"), a summary keeps only the
    # latest turn; automatically, recent turns up to a fifth of the window stay verbatim.
    keep = 0 if summarize else min(settings.keep_recent_tokens, window.budget.window // 5)
    current, usage = await _summarize(current, deps, keep, instructions)
    after = _fresh(window, current)
    if after >= window.budget.window * settings.thresholds.block:
        raise CompactionFailed(
            f"Even after summarising, the context needs about {after:,} tokens of "
            f"{window.budget.window:,}: the latest turn alone is too large."
        )
    return Compacted(current, before, after, (*steps, "summary"), usage)


def apply_compaction(
    history: list[Message], deps: LoopDeps, compacted: Compacted, trigger: Trigger
) -> Compaction:
    """Make `compacted` the history, journal the boundary; returns the event to send."""
    history[:] = compacted.messages
    event = Compaction(trigger, compacted.tokens_before, compacted.tokens_after)
    deps.journal.record_compaction(history, event, compacted.steps)
    if deps.context is not None:
        deps.context.compacted()
    return event


def _fresh(window: ContextWindow, messages: Sequence[Message]) -> int:
    return window.budget.overhead_tokens + estimate_messages_tokens(messages)


async def _summarize(
    messages: list[Message], deps: LoopDeps, keep_recent_tokens: int, instructions: str | None
) -> tuple[list[Message], Usage]:
    boundary = choose_boundary(messages, keep_recent_tokens, estimate_message_tokens)
    if boundary is None:
        raise CompactionFailed("There is nothing before the latest turn to summarise.")
    before, kept = messages[:boundary], messages[boundary:]
    request = ModelRequest(
        model=deps.settings.model,
        system_static=deps.system.static,
        system_dynamic=deps.system.dynamic,
        messages=summary_request(before, instructions),
        # The same tools as every request: providers refuse tool_use history without them,
        # and the cached prefix stays shared.
        tools=deps.registry.specs(),
        max_tokens=deps.settings.output_tokens(),
    )
    text, usage = await _summary_text(deps, request)
    summary = parse_summary(text)
    if summary is None:
        raise CompactionFailed("The summary call returned no summary.")
    plan = plan_text(deps.tool_context.data.plan)
    return compacted_history(summary_message(summary, len(before), plan), kept), usage


async def _summary_text(deps: LoopDeps, request: ModelRequest) -> tuple[str, Usage]:
    parts: list[str] = []
    usage = Usage()
    try:
        async for event in deps.provider.stream(request):
            if isinstance(event, ToolUseStart):
                raise CompactionFailed("The model called a tool instead of writing the summary.")
            if isinstance(event, TextDelta):
                parts.append(event.text)
            elif isinstance(event, UsageUpdate):
                usage = event.usage
    except ProviderError as exc:
        raise CompactionFailed(f"The summary call failed: {exc.message}") from exc
    return "".join(parts), usage
