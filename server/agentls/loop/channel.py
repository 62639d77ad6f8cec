"""A turn's events on their way from the task that runs the turn to the one that sends them.

`run_turn` and `drive_turn` run the loop in a task of its own (so an abort cancels only
it); its events cross to the caller's task here. A streamed turn sends thousands of deltas,
so this is a deque and one waiter rather than an `asyncio.Queue` with its per-item
book-keeping, handing events over at the same moments a queue did.
"""

from __future__ import annotations

import asyncio
from collections import deque

from agentls.events import LoopEvent


class EventChannel:
    """The turn's events on their way from the turn's task to the one that sends them.

    The sender takes them when it next runs, all that have come by then, as it did from an
    `asyncio.Queue`: so events sent from outside the loop (a sub-agent's, an answer's) fall
    between the turn's exactly where they did. Without a queue's per-item book-keeping."""

    __slots__ = ("_closed", "_waiter", "events")

    def __init__(self) -> None:
        self.events: deque[LoopEvent] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._closed = False

    def put(self, event: LoopEvent) -> None:
        self.events.append(event)
        if self._waiter is not None:
            self._wake()

    def close(self, _driver: object = None) -> None:
        """The turn's task ended: no more events will come."""
        self._closed = True
        self._wake()

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def ready(self) -> bool:
        """Wait until events have come; False once the turn has ended and all were taken."""
        while not self.events:
            if self._closed:
                return False
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        return True
