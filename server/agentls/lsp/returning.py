"""Windows that come back: the sessions a reload leaves running, and what a resume resends.

The hub keeps a session that runs a turn when its last window on a socket daemon goes (see
agentls.lsp.hub); it asks here how long the session may run on, and waits here for its
turns to end. A resume of a live session is answered first; then, in one step, the window
is sent again the events it missed (held by the session's `RecentEvents`, after the
`lastSeq` it gave) and attached, so it sees every later event exactly once.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Mapping
from typing import Any

from agentls.lsp.hub import Connection, Hub
from agentls.session.display import DisplayHistory
from agentls.session.manager import SessionManager
from agentls.session.session import AgentSession
from agentls.wire import event_payload
from agentls.workspace.link import EditorLink


class ReturningWindows:
    """The sessions of `manager` as the hub sees them when windows leave and come back."""

    def __init__(self, manager: SessionManager, hub: Hub) -> None:
        self._manager = manager
        self._hub = hub
        # The `lastSeq` of a resume of a live session, by connection and session, until its
        # answer is sent (weakly: a connection gone before its answer is not kept).
        self._replay_after: weakref.WeakKeyDictionary[Connection, dict[str, int]] = (
            weakref.WeakKeyDictionary()
        )

    def detached_timeout(self, session_id: str) -> float | None:
        """How long the session's turns may run on with no window; None when it runs none."""
        session = self._manager.sessions.get(session_id)
        if session is None or not session.busy:
            return None
        timeout = session.settings.detached_turn_timeout
        return timeout if timeout > 0 else None

    async def until_idle(self, session_id: str, timeout: float) -> bool:
        """Whether the session's turns (queued ones too) all ended within `timeout` s."""
        session = self._manager.sessions.get(session_id)
        if session is None:
            return True
        try:
            await asyncio.wait_for(session.intake.queue.idle(), timeout)
        except TimeoutError:
            return False
        return True

    async def resume(
        self,
        session_id: str,
        last_seq: int | None,
        message_limit: int | None,
        overrides: Mapping[str, Any],
        link: EditorLink,
        client: Connection,
    ) -> tuple[AgentSession, DisplayHistory, str | None]:
        """`SessionManager.resume` (its `resume_tail` with a `message_limit`: also the
        cursor of older messages), holding a detached session open meanwhile; `client` is
        attached by `rejoin`, once the answer is out."""
        live = session_id in self._manager.sessions
        self._hub.claim(session_id)
        cursor = None
        try:
            if message_limit is None:
                session, display = await self._manager.resume(session_id, overrides, link)
            else:
                session, display, cursor = await self._manager.resume_tail(
                    session_id, message_limit, overrides, link
                )
        except BaseException:
            self._hub.release(session_id)
            raise
        # A rebuilt session numbers its events from 1 again: the client's seq means nothing.
        if live and last_seq is not None:
            self._replay_after.setdefault(client, {})[session_id] = last_seq
        return session, display, cursor

    def rejoin(self, session_id: str, answered_seq: int, client: Connection) -> None:
        """After a resume's answer (which gave `answered_seq` as `lastSeq`): send `client`
        the held events after the `lastSeq` it gave (else after `answered_seq`), then attach
        it, in one step, so no event falls between the two or comes twice."""
        since = self._replay_after.get(client, {}).pop(session_id, answered_seq)
        session = self._manager.sessions.get(session_id)
        if session is not None and client not in self._hub.attached.get(session_id, ()):
            for envelope in session.events.out.recent.since(since):
                client.send_event(event_payload(envelope))
        self._hub.attach(session_id, client)


def running_fields(session: AgentSession | None) -> dict[str, Any]:
    """A listing's `running` and `runningTurnId`, for a session open here that runs a turn."""
    running = session.intake.queue.running if session is not None else None
    return {} if running is None else {"running": True, "running_turn_id": running.turn_id}
