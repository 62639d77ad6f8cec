"""SessionManager: creates, finds and closes sessions for any front end."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agentls.config import Settings, apply_layer, load_settings
from agentls.errors import InvalidParams, UnknownSession
from agentls.messages import new_id
from agentls.providers.factory import make_provider
from agentls.session.session import AgentSession, EventSink
from agentls.workspace.view import EditorState, EditSink, OpenDocument, WorkspaceView

log = logging.getLogger(__name__)


class SessionManager:
    """Sessions of one daemon; they share the editor's buffers and editor state."""

    def __init__(
        self,
        sink: EventSink,
        edit_sink_factory: Callable[[], EditSink | None] = lambda: None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.sessions: dict[str, AgentSession] = {}
        self.documents: dict[Path, OpenDocument] = {}
        self.editor = EditorState()
        self.client_options: dict[str, Any] = {}
        self.workspace_roots: list[Path] = []
        self.problems: list[str] = []
        self._sink = sink
        self._edit_sink_factory = edit_sink_factory
        self._env = dict(os.environ if env is None else env)

    def settings_for(self, cwd: Path, overrides: Mapping[str, Any]) -> Settings:
        """Settings for a new session at `cwd`, with the session's own params on top."""
        problems: list[str] = []
        settings = load_settings(cwd, self._env, self.client_options, problems)
        for problem in problems:
            # Files, environment and client options keep their defaults; the client sees
            # its own bad params as an error below.
            log.warning("settings: %s", problem)
        own: list[str] = []
        settings = apply_layer(settings, overrides, "agent/newSession", own)
        if own:
            raise InvalidParams("; ".join(own))
        return settings

    async def create(self, cwd: Path | None, overrides: Mapping[str, Any]) -> AgentSession:
        """A new session; the provider SDK is imported off the event loop."""
        root = cwd or (self.workspace_roots[0] if self.workspace_roots else Path.cwd())
        if not root.is_absolute() or not root.is_dir():
            raise InvalidParams(
                f"cwd {root} is not an existing absolute directory", {"field": "cwd"}
            )
        root = Path(os.path.realpath(root))
        settings = self.settings_for(root, overrides)
        provider = await asyncio.to_thread(make_provider, settings)
        extra = [
            Path(d) if Path(d).is_absolute() else root / d for d in settings.additional_directories
        ]
        view = WorkspaceView([root, *extra], self._edit_sink_factory(), self.documents, self.editor)
        session = AgentSession(new_id("sess"), root, settings, provider, view, self._sink)
        self.sessions[session.id] = session
        return session

    def get(self, session_id: str) -> AgentSession:
        """The session, or UnknownSession (1001)."""
        session = self.sessions.get(session_id)
        if session is None:
            raise UnknownSession(
                f"Unknown session {session_id!r}: it was never created or has been closed. "
                "Create one with agent/newSession."
            )
        return session

    async def set_model(self, session_id: str, model: str, provider: str | None) -> None:
        """Switch a session's model, and its provider when one is named."""
        session = self.get(session_id)
        layer: dict[str, Any] = {"model": model}
        if provider is not None:
            layer["provider"] = provider
        problems: list[str] = []
        settings = apply_layer(session.settings, layer, "agent/setModel", problems)
        if problems:
            raise InvalidParams("; ".join(problems))
        new_provider = session.provider
        if settings.resolved_provider() != session.settings.resolved_provider():
            new_provider = await asyncio.to_thread(make_provider, settings)
        session.set_model(settings, new_provider)

    async def close(self, session_id: str) -> None:
        """Abort and forget a session."""
        session = self.get(session_id)
        del self.sessions[session_id]
        await session.close()

    async def close_all(self) -> None:
        """Abort every session (on shutdown)."""
        sessions = list(self.sessions.values())
        self.sessions.clear()
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)
