"""One daemon, several editor windows: the core they share and who sees which session.

Over stdio there is one connection; over TCP every connection is its own pygls server
(its own client capabilities, buffers and editor state) in front of this one hub. A
session's events go to every connection attached to it: the one that opened it, and any
that resumed it while it was live or wrote to it. A permission request therefore reaches
all of them; the first answer wins and every window sees the `permission_resolved`.

When the last connection of a session goes away the session is closed (it can be resumed),
unless it runs a turn and the connection was one of several a socket daemon serves (a
window reload): the session then runs on **detached** until its turns end, or for at most
`detachedTurnTimeout` seconds before they are aborted, and then closes. A connection that
resumes or writes to it in the meantime takes it back (see `claim` for the resume).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import weakref
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

log = logging.getLogger(__name__)


class Connection(Protocol):
    # One of several connections to a socket daemon (TCP, Unix socket), not stdio's one.
    shared: bool

    def send_event(self, payload: dict[str, Any]) -> None: ...

    def send_event_json(self, params: str, envelope: Any) -> None:
        """Send an event whose params are JSON text already; `envelope`: its SessionEvent."""
        ...


class SessionsLeft(Protocol):
    """What the hub asks about a session its last connection left (agentls.lsp.returning)."""

    def detached_timeout(self, session_id: str) -> float | None:
        """How long the session may run on with no connection; None: it has no turn to run."""
        ...

    async def until_idle(self, session_id: str, timeout: float) -> bool:
        """Whether the session's turns all ended within `timeout` seconds."""
        ...


class AgentCore(Protocol):
    """What the connections ask of the shared core (agentls.lsp.handlers.AgentHandlers,
    imported by name so that nothing heavy loads before a connection needs it)."""

    async def dispatch(self, method: str, params: Any, client: Any) -> Any: ...

    def editor_state(self, params: Any, client: Any) -> None: ...

    @property
    def returning(self) -> SessionsLeft: ...

    def after_opening(self, method: str, result: dict[str, Any], client: Any) -> Callable[[], None]:
        """What to do once the answer to a request that opened a session is sent."""
        ...

    def abort_turn(self, session_id: str, turn_id: str) -> None: ...

    async def close_quietly(self, session_id: str) -> None: ...

    async def close_shared(self) -> None:
        """The daemon ends: close what its sessions shared (the model APIs' HTTP clients)."""
        ...


class Hub:
    """The shared core (loaded off the event loop on first use) and session attachments."""

    def __init__(self) -> None:
        self.attached: dict[str, list[Connection]] = {}
        self._handlers: AgentCore | None = None
        self._loading: asyncio.Task[AgentCore] | None = None
        # Connections that went away; a request of theirs may still be opening a session.
        self._gone: weakref.WeakSet[Connection] = weakref.WeakSet()
        self._closing: set[asyncio.Task[None]] = set()
        # Sessions running on with no connection, each watched until its turns end.
        self._detached: dict[str, asyncio.Task[None]] = {}
        # Detached sessions a resume is opening: they wait for it, not for their turns.
        self._claimed: set[str] = set()

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

    def event_sink(self, encode: Callable[[Any], str]) -> Callable[[Any], None]:
        """The sessions' event sink: each event (a SessionEvent) written once as JSON text
        by `encode` (agentls.wire.event_json) and sent to every connection attached to its
        session; not written at all while none is. One call per event, every streamed
        delta's: the sink does the writing and the delivering itself."""
        attached = self.attached

        def sink(envelope: Any) -> None:
            connections = attached.get(envelope.session_id)
            if not connections:
                return
            params = encode(envelope)
            for connection in connections:
                try:
                    connection.send_event_json(params, envelope)
                except Exception:
                    log.exception("an event of session %s was not delivered", envelope.session_id)

        return sink

    def attach(self, session_id: str, connection: Connection) -> None:
        """Let `connection` see the session's events from now on."""
        if connection in self._gone:
            # Its window closed while the session was being opened for it: a session nobody
            # sees would run on (its MCP servers too) until the daemon ends.
            if not self.attached.get(session_id):
                log.info("session %s: its connection went away first", session_id)
                self._claimed.discard(session_id)
                self._in_background(self._orphaned([session_id], connection.shared))
            return
        self._take_back(session_id)
        connections = self.attached.setdefault(session_id, [])
        if connection not in connections:
            connections.append(connection)

    def claim(self, session_id: str) -> None:
        """A resume is opening the session: if it runs detached, it no longer closes by
        itself; the resume's `attach` (or `release`, when it fails) follows."""
        if self._take_back(session_id):
            self._claimed.add(session_id)

    def release(self, session_id: str) -> None:
        """The resume that claimed the session failed: detached again, or closed."""
        if session_id in self._claimed and not self.attached.get(session_id):
            self._claimed.discard(session_id)
            self._in_background(self._orphaned([session_id], shared=True))

    def forget(self, session_id: str) -> None:
        self._take_back(session_id)
        self.attached.pop(session_id, None)

    def detached(self) -> list[str]:
        """The sessions running on with no connection (a daemon idle for want of
        connections should not end while there are)."""
        return list(self._detached)

    async def detach(self, connection: Connection) -> None:
        """A connection went away: close the sessions no other connection sees, but those
        running a turn on a socket daemon, which run on detached.

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
        await self._orphaned(orphans, connection.shared)

    async def _orphaned(self, session_ids: list[str], shared: bool) -> None:
        """Sessions no connection sees: those with turns to run go on detached over a
        socket daemon (over stdio the editor is the daemon's only user); the rest close."""
        handlers = self._handlers
        closing = []
        for session_id in session_ids:
            if session_id in self._detached:
                continue
            timeout = (
                handlers.returning.detached_timeout(session_id) if shared and handlers else None
            )
            if timeout is None:
                closing.append(session_id)
                continue
            log.info("session %s runs on with no window, for at most %g s", session_id, timeout)
            self.attached[session_id] = []
            self._detached[session_id] = self._in_background(
                self._run_detached(session_id, timeout)
            )
        await self._close(closing)

    async def _run_detached(self, session_id: str, timeout: float) -> None:
        handlers = self._handlers
        assert handlers is not None
        if not await handlers.returning.until_idle(session_id, timeout):
            log.warning(
                "session %s: its turn ran %g s with no window (detachedTurnTimeout): aborted",
                session_id,
                timeout,
            )
        # From here on the session closes: a window that comes back finds it closed.
        self._detached.pop(session_id, None)
        await self._close([session_id])

    def _take_back(self, session_id: str) -> bool:
        """A connection takes the session: it no longer closes by itself. Whether it ran
        detached."""
        self._claimed.discard(session_id)
        watch = self._detached.pop(session_id, None)
        if watch is None:
            return False
        watch.cancel()
        log.info("session %s: a window came back", session_id)
        return True

    def _in_background(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        # Held until done: the event loop keeps only a weak reference to a task.
        task = asyncio.get_running_loop().create_task(work)
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)
        return task

    async def close_all(self) -> None:
        """The daemon is stopping: close every session while all its connections still
        see it, so each of them hears how its turns ended (detached sessions' turns too)."""
        for watch in self._detached.values():
            watch.cancel()
        self._detached.clear()
        await self._close(list(self.attached))
        if self._handlers is not None:
            await self._handlers.close_shared()

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
