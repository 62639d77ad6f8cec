"""Compaction the user asks for (agent/compact, /compact), as opposed to the loop's own.

It runs the PreCompact hooks, summarises the history with a model call outside any turn
(or inside a /compact command's), and refuses to apply the result when a turn started
meanwhile: the history then belongs to that turn.
"""

from __future__ import annotations

from collections.abc import Callable

from agentls.context.window import ContextWindow
from agentls.errors import AgentError, SessionBusy
from agentls.events import LoopEvent
from agentls.loop.compaction_run import CompactionFailed, apply_compaction, compact
from agentls.loop.deps import LoopDeps
from agentls.messages import Message


async def summarise(
    session_id: str,
    history: list[Message],
    deps: LoopDeps,
    context: ContextWindow,
    emit: Callable[[LoopEvent, str | None], None],
    busy: Callable[[], bool],
    instructions: str | None,
    turn_id: str | None,
) -> tuple[int, int]:
    """Compact `history` now (AgentError when it fails): for agent/compact outside turns
    (refused when a turn started meanwhile: `busy`), or in `turn_id`, the turn of a
    /compact command; the tokens before and after."""
    hooks = deps.hooks
    await hooks.pre_compact("manual", instructions, lambda event: emit(event, turn_id))
    try:
        compacted = await compact(history, deps, context, summarize=True, instructions=instructions)
    except CompactionFailed as exc:
        raise AgentError(f"Compaction failed: {exc}") from exc
    if turn_id is None and busy():
        # A message arrived during the summary call; its turn owns the history now.
        raise SessionBusy(
            f"A turn started in session {session_id} while it was being compacted; "
            "nothing was changed. Compact again when the turn has finished."
        )
    event = apply_compaction(history, deps, compacted, "manual")
    emit(event, turn_id)
    await hooks.compacted(event, turn_id)
    return compacted.tokens_before, compacted.tokens_after
