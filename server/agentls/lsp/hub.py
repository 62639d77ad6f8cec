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
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from agentls.lsp.handlers import AgentHandlers

log = logging.getLogger(__name__)


class Connection(Protocol):
    def send_event(self, payload: dict[str, Any]) -> None: ...


class Hub:
    """The shared core (loaded off the event loop on first use) and session attachments."""

    def __init__(self) -> None:
        self.attached: dict[str, list[Connection]] = {}
        self._handlers: AgentHandlers | None = None
        self._loading: asyncio.Task[AgentHandlers] | None = None

    @property
    def loaded(self) -> AgentHandlers | None:
        return self._handlers

    async def handlers(self) -> AgentHandlers:
        """The core, imported in a thread the first time any connection needs it."""
        if self._handlers is not None:
            return self._handlers
        if self._loading is None:
            self._loading = asyncio.get_running_loop().create_task(self._load())
        return await asyncio.shield(self._loading)

    async def _load(self) -> AgentHandlers:
        module = await asyncio.to_thread(importlib.import_module, "agentls.lsp.handlers")
        handlers: AgentHandlers = module.AgentHandlers(self)
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
        connections = self.attached.setdefault(session_id, [])
        if connection not in connections:
            connections.append(connection)

    def forget(self, session_id: str) -> None:
        self.attached.pop(session_id, None)

    async def detach(self, connection: Connection) -> None:
        """A connection went away: close the sessions no other connection sees."""
        orphans = []
        for session_id, connections in list(self.attached.items()):
            if connection in connections:
                connections.remove(connection)
                if not connections:
                    orphans.append(session_id)
        handlers = self._handlers
        for session_id in orphans:
            self.forget(session_id)
            if handlers is not None:
                await handlers.close_quietly(session_id)
