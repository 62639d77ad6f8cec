"""A session's turns: what one is, and the worker that runs them one after another.

`TurnQueue` holds the running turn and those waiting and runs them one after another;
`run_to_end` is what happens to one: its opening, the loop run, and the guarantee that it
ends with exactly one turn_completed whatever fails.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from agentls.errors import AgentError
from agentls.events import CommandOutput, TurnCompleted, TurnError
from agentls.loop.run import QueryState, run_turn
from agentls.session.loop_deps import loop_deps
from agentls.session.mcp_wiring import approve_mcp_servers
from agentls.session.records import TurnBegan
from agentls.session.turn import LocalAction, Turn
from agentls.session.turn_start import start_continuation, start_with_message
from agentls.usage import Usage

if TYPE_CHECKING:
    from agentls.session.session import AgentSession

log = logging.getLogger(__name__)
class TurnQueue:
    """A session's turns: the one running and those waiting, run one after another.

    `run` runs a turn to its end; `after` says what follows a turn that ended (a turn
    made of the steering that arrived too late for it), before the next queued one.
    """

    def __init__(
        self, run: Callable[[Turn], Awaitable[None]], after: Callable[[Turn], Turn | None]
    ) -> None:
        self._run = run
        self._after = after
        self._waiting: deque[Turn] = deque()
        self._running: Turn | None = None
        self._worker: asyncio.Task[None] | None = None

    @property
    def running(self) -> Turn | None:
        return self._running

    @property
    def busy(self) -> bool:
        return self._running is not None or bool(self._waiting)

    def enqueue(self, turn: Turn, front: bool) -> bool:
        """Queue `turn` (first in line when `front`, aborting the running one); whether
        it waits behind another."""
        running = self._running
        if front and running is not None:
            self._waiting.appendleft(turn)
            running.abort.set()
        else:
            self._waiting.append(turn)
        if self._worker is None:
            # The turn counts as running from now on, so a steer or an interrupt that
            # arrives before the worker's first step still finds it.
            self._running = self._waiting.popleft()
            self._worker = asyncio.create_task(self._work())
        return running is not None

    def drop_waiting(self, turn_id: str | None) -> list[Turn]:
        """Take the waiting turns out of the queue (all, or the one with `turn_id`)."""
        dropped = [t for t in self._waiting if turn_id is None or t.turn_id == turn_id]
        for turn in dropped:
            self._waiting.remove(turn)
        return dropped

    async def settled(self) -> None:
        """Wait until the worker has stopped (every turn ended)."""
        worker = self._worker
        if worker is not None:
            await asyncio.gather(worker, return_exceptions=True)

    async def _work(self) -> None:
        try:
            while self._running is not None:
                turn = self._running
                await self._run(turn)
                following = self._after(turn)
                if following is not None:
                    self._waiting.appendleft(following)
                self._running = self._waiting.popleft() if self._waiting else None
        finally:
            self._running = None
            self._worker = None


async def run_to_end(session: AgentSession, turn: Turn) -> None:
    """Run a turn; whatever fails inside it, the turn ends and the session stays usable."""
    try:
        await _run(session, turn)
    except asyncio.CancelledError:
        session.events.end_broken_turn(turn, "aborted", None)
        raise
    except Exception as exc:
        log.error("turn %s of session %s failed", turn.turn_id, session.id, exc_info=exc)
        message = f"Internal error: {type(exc).__name__}: {exc}"
        session.events.end_broken_turn(turn, "error", TurnError("internal_error", message, False))


async def _run(session: AgentSession, turn: Turn) -> None:
    if turn.action is not None:
        await _run_local(session, turn, turn.action)
        return
    session.transcript.write(TurnBegan(turn.turn_id))
    if turn.continued:
        start_continuation(session, turn)
    elif not await start_with_message(session, turn):
        return
    if not await approve_mcp_servers(session, turn):
        return
    if session.mcp is not None:
        await session.mcp.wait_started(session.settings.mcp_startup_timeout)
    state = QueryState(turn.turn_id, session.history)
    deps = loop_deps(session, turn)
    async for event in run_turn(state, deps):
        session.events.send(event, turn)


async def _run_local(session: AgentSession, turn: Turn, action: LocalAction) -> None:
    """A local command's turn: its output, then its end; no message, no model call."""
    command = turn.command or ""
    # Let the answer to the submit (which names this turn) go out before the turn's
    # events, as it does for a model turn: the action may not wait for anything.
    await asyncio.sleep(0)
    emit = session.events.emit
    try:
        text = await action(turn.turn_id)
    except AgentError as exc:
        emit(CommandOutput(command, exc.message, is_error=True), turn.turn_id)
        error = TurnError("command_failed", exc.message, False)
        completed = TurnCompleted(turn.turn_id, "error", 0, Usage(), error)
    else:
        emit(CommandOutput(command, text), turn.turn_id)
        completed = TurnCompleted(turn.turn_id, "end_turn", 0, Usage())
    turn.ended = True
    emit(completed, turn.turn_id)
