"""A session's turns, run one after another.

`TurnQueue` holds the running turn and those waiting; `TurnRunner` is what happens to
one: its opening, the loop run, and the guarantee that it ends with exactly one
turn_completed whatever fails.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from agentls.errors import AgentError
from agentls.events import CommandOutput, TurnCompleted, TurnError
from agentls.loop.deps import LoopDeps
from agentls.loop.run import QueryState, drive_turn
from agentls.mcp_servers.servers import McpServers
from agentls.session.conversation import Conversation
from agentls.session.events_out import SessionEvents
from agentls.session.inline_turn import marked_for_review
from agentls.session.records import TurnBegan
from agentls.session.store import Transcript
from agentls.session.turn import LocalAction, Turn
from agentls.session.turn_start import TurnOpening
from agentls.usage import Usage

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

    async def idle(self) -> None:
        """Until no turn runs or waits; cancelling this wait leaves the turns running."""
        while (worker := self._worker) is not None:
            await asyncio.wait({worker})

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


@dataclass(frozen=True, slots=True)
class TurnRunner:
    """Runs one turn to its one end: opened, the MCP servers approved and started, the
    loop run with the deps the session builds for it; a local command's turn instead runs
    its action."""

    opening: TurnOpening
    events: SessionEvents
    transcript: Transcript
    conversation: Conversation
    # Asks, once, whether the project's own MCP servers may start (False: turn aborted).
    approve_mcp: Callable[[Turn], Awaitable[bool]]
    # The servers, once started, and how long a turn waits for those still starting.
    mcp: Callable[[], McpServers | None]
    mcp_wait: Callable[[], float]
    loop_deps: Callable[[Turn], LoopDeps]

    async def run_to_end(self, turn: Turn) -> None:
        """Run a turn; whatever fails inside it, the turn ends and the session stays usable."""
        self.events.turn_began()
        try:
            await self._run(turn)
        except asyncio.CancelledError:
            self.events.end_broken_turn(turn, "aborted", None)
            raise
        except Exception as exc:
            log.error("turn %s failed", turn.turn_id, exc_info=exc)
            message = f"Internal error: {type(exc).__name__}: {exc}"
            self.events.end_broken_turn(turn, "error", TurnError("internal_error", message, False))

    async def _run(self, turn: Turn) -> None:
        if turn.action is not None:
            await self._run_local(turn, turn.action)
            return
        self.transcript.write(TurnBegan(turn.turn_id))
        if turn.continued:
            self.opening.continuation(turn)
        elif not await self.opening.with_message(turn):
            return
        if not await self.approve_mcp(turn):
            return
        mcp = self.mcp()
        if mcp is not None:
            await mcp.wait_started(self.mcp_wait())
        conversation = self.conversation
        state = QueryState(
            turn.turn_id,
            conversation.history,
            pairing=conversation.pairing,
            alternation=conversation.alternation,
        )
        deps = self.loop_deps(turn)
        await drive_turn(state, deps, self.events.turn_sender(turn, marked_for_review))

    async def _run_local(self, turn: Turn, action: LocalAction) -> None:
        """A local command's turn: its output, then its end; no message, no model call."""
        command = turn.command or ""
        # Let the answer to the submit (which names this turn) go out before the turn's
        # events, as it does for a model turn: the action may not wait for anything.
        await asyncio.sleep(0)
        emit = self.events.emit
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
