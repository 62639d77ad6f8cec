"""Compaction the user asks for (agent/compact, /compact), as opposed to the loop's own.

It runs the PreCompact hooks, summarises the history with a model call outside any turn
(or inside a /compact command's), and refuses to apply the result when a turn started
meanwhile: the history then belongs to that turn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentls.errors import AgentError, SessionBusy
from agentls.loop.compaction_run import CompactionFailed, apply_compaction, compact
from agentls.session.loop_deps import loop_deps

if TYPE_CHECKING:
    from agentls.session.session import AgentSession


async def summarise(
    session: AgentSession, instructions: str | None, turn_id: str | None
) -> tuple[int, int]:
    """Compact the history now (AgentError when it fails): for agent/compact outside
    turns, or in `turn_id`, the turn of a /compact command; the tokens before and after."""
    deps = loop_deps(session, None)
    emit = session.events.emit
    await session.hooks.pre_compact("manual", instructions, lambda event: emit(event, turn_id))
    try:
        compacted = await compact(
            session.history,
            deps,
            session.context,
            summarize=True,
            instructions=instructions,
        )
    except CompactionFailed as exc:
        raise AgentError(f"Compaction failed: {exc}") from exc
    if turn_id is None and session.busy:
        # A message arrived during the summary call; its turn owns the history now.
        raise SessionBusy(
            f"A turn started in session {session.id} while it was being compacted; "
            "nothing was changed. Compact again when the turn has finished."
        )
    event = apply_compaction(session.history, deps, compacted, "manual")
    emit(event, turn_id)
    await session.hooks.compacted(event, turn_id)
    return compacted.tokens_before, compacted.tokens_after
