"""The order in which an ACP connection speaks: one writer sends the updates in the order
the core made them, and whatever must follow earlier updates (a permission request after
its tool call, an answer after its turn's last update) waits its turn in the same queue.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from agentls.acp.updates import Update

log = logging.getLogger(__name__)


class Outbox:
    """Updates to the client, in order; steps started after them; work held until done."""

    def __init__(self, client: Callable[[], Any]) -> None:
        # The client connection, looked up when sending (it is set once connected).
        self._client = client
        self._queue: asyncio.Queue[Callable[[], Awaitable[None]]] = asyncio.Queue()
        self._writer: asyncio.Task[None] | None = None
        self._running: set[asyncio.Task[None]] = set()

    def send(self, session_id: str, update: Update) -> None:
        async def send() -> None:
            try:
                await self._client().session_update(session_id=session_id, update=update)
            except ConnectionError:
                log.debug("session/update not sent: the client has gone")

        self._enqueue(send)

    def after(self, step: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Start `step` once every update before it is written (it runs on its own, so a
        slow answer never holds the updates after it)."""

        async def start() -> None:
            self.spawn(step())

        self._enqueue(start)

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` on its own, held until it ends (the loop keeps only weak refs)."""
        task = asyncio.get_running_loop().create_task(work)
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def flushed(self) -> None:
        """Wait until every update queued so far is written."""
        done = asyncio.get_running_loop().create_future()

        async def mark() -> None:
            # The waiter may be gone (its request cancelled, the connection closing): its
            # future is then cancelled, and the queue goes on.
            if not done.done():
                done.set_result(None)

        self._enqueue(mark)
        await done

    def close(self) -> None:
        if self._writer is not None:
            self._writer.cancel()

    def _enqueue(self, item: Callable[[], Awaitable[None]]) -> None:
        self._queue.put_nowait(item)
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._write())

    async def _write(self) -> None:
        while True:
            item = await self._queue.get()
            try:
                await item()
            except Exception:
                log.exception("an ACP update failed")
