"""Idle sessions are closed: a daemon that runs for weeks keeps only the sessions in use.

A session is idle when no request has named it for its `sessionIdleTimeout` seconds and no
turn of it runs or waits (a turn that outlives its window is never cut short here: while
it runs, the session counts as used). Closing it frees its file handle, MCP servers and
history; it stays on disk, so `agent/resumeSession` brings it back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Generic, Protocol, TypeVar

log = logging.getLogger(__name__)
# How often the sweep looks, as a share of the shortest timeout, within these bounds.
SWEEP_SHARE = 0.25
SWEEP_MIN, SWEEP_MAX = 0.1, 60.0


class Sweepable(Protocol):
    """What the sweep needs of a session: whether a turn of it runs or waits."""

    @property
    def busy(self) -> bool: ...


S = TypeVar("S", bound=Sweepable)


class IdleSweeper(Generic[S]):
    """Remembers when each live session was last used and closes those idle too long."""

    def __init__(
        self,
        sessions: Mapping[str, S],
        close: Callable[[str], Awaitable[None]],
        timeout_of: Callable[[S], float],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sessions = sessions
        self._close = close
        self._timeout_of = timeout_of
        self._clock = clock
        self._used: dict[str, float] = {}
        self._task: asyncio.Task[None] | None = None

    def touch(self, session_id: str) -> None:
        """The session was used now; the sweep starts with the first session."""
        self._used[session_id] = self._clock()
        if self._task is None or self._task.done():
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return  # used outside the event loop (a test driving the manager directly)
            self._task = loop.create_task(self._run())

    def forget(self, session_id: str) -> None:
        self._used.pop(session_id, None)

    async def sweep(self) -> list[str]:
        """Close every session idle past its timeout; their ids."""
        now = self._clock()
        idle = []
        for session_id, session in list(self._sessions.items()):
            if session.busy:
                self._used[session_id] = now
            elif 0 < self._timeout_of(session) <= now - self._used.setdefault(session_id, now):
                idle.append(session_id)
        for session_id in idle:
            unused = now - self._used.pop(session_id, now)
            log.info("session %s closed after %.0f s unused", session_id, unused)
            try:
                await self._close(session_id)
            except Exception:
                log.exception("idle session %s did not close cleanly", session_id)
        return idle

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while self._sessions:
            await asyncio.sleep(self._interval())
            await self.sweep()

    def _interval(self) -> float:
        timeouts = [t for t in map(self._timeout_of, self._sessions.values()) if t > 0]
        share = min(timeouts, default=SWEEP_MAX) * SWEEP_SHARE
        return min(SWEEP_MAX, max(SWEEP_MIN, share))
