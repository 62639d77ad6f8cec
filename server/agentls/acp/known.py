"""What an ACP connection keeps of each session, and what it last told the client.

A mode, model or title the client has not heard of yet (after /mode, /model, the picker,
a first message) goes out as updates; the model picker's choices are kept per session.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from acp import schema as acp

from agentls.acp.options import config_options
from agentls.acp.updates import SessionUpdates, Update
from agentls.names import PermissionMode
from agentls.session.session import AgentSession


@dataclass(slots=True)
class Known:
    """What this connection keeps of one session: its updates' state, the model list for
    its picker, and the mode, model and title the client was last told (None: nothing)."""

    updates: SessionUpdates = field(default_factory=SessionUpdates)
    models: list[tuple[str, str]] = field(default_factory=list)
    told: tuple[PermissionMode, str, str] | None = None


def _told(session: AgentSession) -> tuple[PermissionMode, str, str]:
    return session.gate.mode, session.model, session.transcript.meta.title


class KnownSessions:
    def __init__(self) -> None:
        self._known: dict[str, Known] = {}

    def of(self, session_id: str) -> Known:
        return self._known.setdefault(session_id, Known())

    def opened(self, session: AgentSession) -> None:
        """A session this connection opened: what the client was told, what it has cost."""
        known = self.of(session.id)
        known.told = told(session)
        known.updates.cost_usd = session.transcript.meta.cost_usd or 0.0

    def forget(self, session_id: str) -> None:
        self._known.pop(session_id, None)

    def config(
        self, session: AgentSession
    ) -> list[acp.SessionConfigOptionSelect | acp.SessionConfigOptionBoolean]:
        """The session's options (mode, model) as the client's pickers show them."""
        return config_options(session.gate.mode, session.model, self.of(session.id).models)

    def changes(self, session: AgentSession) -> list[Update]:
        """The updates that tell the client what changed since it was last told."""
        known = self.of(session.id)
        before, now = known.told, told(session)
        if before == now:
            return []
        known.told = now
        meta = session.transcript.meta
        updates: list[Update] = []
        if before is None or before[0] != now[0]:
            mode = session.gate.mode
            updates.append(
                acp.CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode)
            )
        if before is None or before[:2] != now[:2]:
            config = self.config(session)
            updates.append(
                acp.ConfigOptionUpdate(session_update="config_option_update", config_options=config)
            )
        if meta.title and (before is None or before[2] != meta.title):
            updates.append(
                acp.SessionInfoUpdate(
                    session_update="session_info_update",
                    title=meta.title,
                    updated_at=iso(meta.updated_at),
                )
            )
        return updates


def told(session: AgentSession) -> tuple[PermissionMode, str, str]:
    return session.gate.mode, session.model, session.transcript.meta.title


def iso(timestamp: float) -> str:
    moment = dt.datetime.fromtimestamp(timestamp, dt.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
