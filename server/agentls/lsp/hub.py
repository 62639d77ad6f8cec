"""One daemon, several editor windows: the core they share and who sees which session.

Over stdio there is one connection; over TCP every connection is its own pygls server
(its own client capabilities, buffers and editor state) in front of this one hub. A
session's events go to every connection attached to it: the one that opened it, and any
that resumed it while it was live or wrote to it. A permission request therefore reaches
all of them; the first answer wins and every window sees the `permission_resolved`. When
the last connection of a session goes away, the session is closed (it can be resumed).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import weakref
from typing import Any, Protocol

log = logging.getLogger(__name__)


class Connection(Protocol):
    def send_event(self, payload: dict[str, Any]) -> None: ...


class AgentCore(Protocol):
    """What the connections ask of the shared core (agentls.lsp.handlers.AgentHandlers,
    imported by name so that nothing heavy loads before a connection needs it)."""

    async def dispatch(self, method: str, params: Any, client: Any) -> Any: ...

    def editor_state(self, params: Any, client: Any) -> None: ...

    def announce_commands(self, session_id: str) -> None: ...

    def abort_turn(self, session_id: str, turn_id: str) -> None: ...

    async def close_quietly(self, session_id: str) -> None: ...


class Hub:
    """The shared core (loaded off the event loop on first use) and session attachments."""

    def __init__(self) -> None:
        self.attached: dict[str, list[Connection]] = {}
        self._handlers: AgentCore | None = None
        self._loading: asyncio.Task[AgentCore] | None = None
        # Connections that went away; a request of theirs may still be opening a session.
        self._gone: weakref.WeakSet[Connection] = weakref.WeakSet()
        self._closing: set[asyncio.Task[None]] = set()

    @property
    def loaded(self) -> AgentCore | None:
        return self._handlers

    async def handlers(self) -> AgentCore:
        """The core, imported in a thread the first time any connection needs it."""
        if self._handlers is not None:
            return self._handlers
        if self._loading is None:
            self._loading = asyncio.get_running_loop().create_task(self._load())
        return await asyncio.shield(self._loading)

    async def _load(self) -> AgentCore:
        module = await asyncio.to_thread(importlib.import_module, "agentls.lsp.handlers")
        handlers: AgentCore = module.AgentHandlers(self)
        self._handlers = handlers
        return handlers

    def deliver(self, payload: dict[str, Any]) -> None:
        """Send one session event to every connection attached to the session."""
        for connection in self.attached.get(payload["sessionId"], ()):
            try:
                connection.send_event(payload)
            except Exception:
                log.exception("an event of session %s was not delivered", payload["sessionId"])

    def attach(self, session_id: str, connection: Connection) -> None:
        """Let `connection` see the session's events from now on."""
        if connection in self._gone:
            # Its window closed while the session was being opened for it: a session nobody
            # sees would run on (its MCP servers too) until the daemon ends.
            if not self.attached.get(session_id):
                log.info("session %s closed: its connection went away first", session_id)
                task = asyncio.get_running_loop().create_task(self._close([session_id]))
                self._closing.add(task)
                task.add_done_callback(self._closing.discard)
            return
        connections = self.attached.setdefault(session_id, [])
        if connection not in connections:
            connections.append(connection)

    def forget(self, session_id: str) -> None:
        self.attached.pop(session_id, None)

    async def detach(self, connection: Connection) -> None:
        """A connection went away: close the sessions no other connection sees.

        They are closed while still attached, so the connection hears each aborted turn's
        `turn_completed`: an editor that sent `shutdown`, or a daemon ending on SIGTERM,
        still reads it (a connection already gone drops it)."""
        self._gone.add(connection)
        orphans = []
        for session_id, connections in list(self.attached.items()):
            if connections == [connection]:
                orphans.append(session_id)
            elif connection in connections:
                connections.remove(connection)
        await self._close(orphans)

    async def close_all(self) -> None:
        """The daemon is stopping: close every session while all its connections still
        see it, so each of them hears how its turns ended."""
        await self._close(list(self.attached))

    async def _close(self, session_ids: list[str]) -> None:
        handlers = self._handlers
        if handlers is not None:
            closing = (handlers.close_quietly(s) for s in session_ids)
            outcomes = await asyncio.gather(*closing, return_exceptions=True)
            for session_id, outcome in zip(session_ids, outcomes, strict=True):
                if isinstance(outcome, BaseException):
                    log.error("session %s did not close cleanly: %r", session_id, outcome)
        for session_id in session_ids:
            self.forget(session_id)
