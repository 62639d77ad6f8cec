"""SessionManager: creates, finds and closes sessions for any front end."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from agentls.config import Settings, apply_layer, load_settings
from agentls.errors import InvalidParams, TooManySessions, UnknownSession
from agentls.hooks.callbacks import LoopCallbacks
from agentls.messages import Message, ToolResultBlock, is_id, new_id
from agentls.pairing import repair_pairing
from agentls.providers.base import Provider
from agentls.providers.factory import make_provider
from agentls.providers.http_clients import SharedHttpClients
from agentls.redact import Masker
from agentls.session.deletion import check_deletable, delete_saved
from agentls.session.display import DisplayHistory
from agentls.session.events_out import EventSink
from agentls.session.idle import IdleSweeper
from agentls.session.index import SessionIndex
from agentls.session.records import SessionStarted
from agentls.session.session import AgentSession
from agentls.session.store import (
    LoadedSession,
    SessionMeta,
    Transcript,
    load_transcript,
    transcript_path,
)
from agentls.session.transcript_map import display_page, load_tail
from agentls.workspace.link import EditorLink, bind
from agentls.workspace.view import EditorState, EditSink, OpenDocument, WorkspaceView

log = logging.getLogger(__name__)


def session_roots(cwd: Path, directories: Sequence[str], spill_dir: Path) -> list[Path]:
    """A session's workspace roots: its cwd, its additional directories (a relative one is
    from the cwd), and the folder of its spilled tool results, which its own Read reads."""
    return [cwd, *(cwd / d for d in directories), spill_dir]


class SessionManager:
    """Sessions of one daemon; they share the editor's buffers and editor state."""

    def __init__(
        self,
        sink: EventSink,
        edit_sink_factory: Callable[[], EditSink | None] = lambda: None,
        env: Mapping[str, str] | None = None,
        documents: dict[Path, OpenDocument] | None = None,
        editor: EditorState | None = None,
        callbacks: LoopCallbacks | None = None,
    ) -> None:
        self.sessions: dict[str, AgentSession] = {}
        # An embedder's in-process hooks, for every session of this manager.
        self.callbacks = callbacks
        self.documents: dict[Path, OpenDocument] = {} if documents is None else documents
        self.editor = EditorState() if editor is None else editor
        self.client_options: dict[str, Any] = {}
        self.workspace_roots: list[Path] = []
        self.problems: list[str] = []
        self._sink = sink
        self._edit_sink_factory = edit_sink_factory
        self._env = dict(os.environ if env is None else env)
        self.masker = Masker.from_environment(self._env)
        # The listing of the sessions on disk, kept between agent/listSessions requests.
        self._index: SessionIndex | None = None
        self.idle = IdleSweeper(
            self.sessions, self._close_idle, lambda s: s.settings.session_idle_timeout
        )
        # One HTTP client per model API and connection settings, for all the sessions.
        self.http_clients = SharedHttpClients()
        # Resuming and deleting one id take turns: two resumes would start two sessions
        # on one transcript, and a resume during a delete would reopen a removed file.
        self._id_locks: dict[str, asyncio.Lock] = {}

    def settings_for(
        self, cwd: Path, overrides: Mapping[str, Any], options: Mapping[str, Any] | None = None
    ) -> Settings:
        """Settings for a new session at `cwd`, with the session's own params on top."""
        problems: list[str] = []
        client = self.client_options if options is None else options
        settings = load_settings(cwd, self._env, client, problems)
        for problem in problems:
            # Files, environment and client options keep their defaults; the client sees
            # its own bad params as an error below.
            log.warning("settings: %s", problem)
        own: list[str] = []
        settings = apply_layer(settings, overrides, "agent/newSession", own)
        if own:
            raise InvalidParams("; ".join(own))
        return settings

    def default_link(self) -> EditorLink:
        """The manager's own buffers and editor state (one editor, or none)."""
        return EditorLink(
            self.documents,
            self.editor,
            self._edit_sink_factory(),
            self.client_options,
            self.workspace_roots,
        )

    @contextlib.asynccontextmanager
    async def default_provider(self, link: EditorLink) -> AsyncIterator[tuple[Provider, str]]:
        """A provider and model from the settings a new session would get, closed after use."""
        root = link.roots[0] if link.roots else Path.cwd()
        settings = self.settings_for(root, {}, link.options)
        provider = await asyncio.to_thread(make_provider, settings, self.http_clients)
        try:
            yield provider, settings.resolved_model()
        finally:
            aclose = getattr(provider, "aclose", None)
            if aclose is not None:
                await aclose()

    async def create(
        self, cwd: Path | None, overrides: Mapping[str, Any], link: EditorLink | None = None
    ) -> AgentSession:
        """A new session seen through `link`; the provider SDK is imported off the event loop."""
        link = link or self.default_link()
        root = cwd or (link.roots[0] if link.roots else Path.cwd())
        if not root.is_absolute() or not root.is_dir():
            raise InvalidParams(
                f"cwd {root} is not an existing absolute directory", {"field": "cwd"}
            )
        root = Path(os.path.realpath(root))
        settings = self.settings_for(root, overrides, link.options)
        self._check_room(settings)
        provider = await asyncio.to_thread(make_provider, settings, self.http_clients)
        session_id = new_id("sess")
        meta = SessionMeta(session_id, str(root), **_identity(settings))
        transcript = Transcript(transcript_path(settings.home, session_id), meta, self.masker)
        transcript.write(
            SessionStarted(session_id, str(root), **_identity(settings), settings=dict(overrides))
        )
        transcript.touch()
        return self._start(session_id, root, settings, provider, transcript, link)

    async def resume(
        self,
        session_id: str,
        overrides: Mapping[str, Any] | None = None,
        link: EditorLink | None = None,
    ) -> tuple[AgentSession, DisplayHistory]:
        """A live session, or one rebuilt from its transcript; also its display history."""
        session, loaded = await self._resume(session_id, overrides, link, load_transcript)
        return session, loaded.shown()

    async def resume_tail(
        self,
        session_id: str,
        limit: int,
        overrides: Mapping[str, Any] | None = None,
        link: EditorLink | None = None,
    ) -> tuple[AgentSession, DisplayHistory, str | None]:
        """As `resume`, with only the last `limit` messages of the display read; also the
        cursor of the older ones (for `messages_before`), None when there are none."""
        session, loaded = await self._resume(
            session_id, overrides, link, lambda path: load_tail(path, limit)
        )
        return session, loaded.shown(), page_cursor(loaded.display_start)

    async def messages_before(
        self, session_id: str, before: str | None, limit: int
    ) -> tuple[DisplayHistory, str | None]:
        """A page of a session's display (live or closed) that ends before the cursor
        `before` (at the end when None), and the cursor of the page before it."""
        position = cursor_position(before)
        path = self._transcript_of(session_id, "to read")
        try:
            page, start = await asyncio.to_thread(display_page, path, position, limit)
        except (OSError, ValueError) as exc:
            raise InvalidParams(f"The transcript of {session_id} cannot be read: {exc}") from exc
        return page, page_cursor(start)

    @contextlib.asynccontextmanager
    async def _exclusive(self, session_id: str) -> AsyncIterator[None]:
        """Hold `session_id` against other resumes and deletes of it."""
        lock = self._id_locks.setdefault(session_id, asyncio.Lock())
        try:
            async with lock:
                yield
        finally:
            if not lock.locked() and self._id_locks.get(session_id) is lock:
                del self._id_locks[session_id]

    async def _resume(
        self,
        session_id: str,
        overrides: Mapping[str, Any] | None,
        link: EditorLink | None,
        load: Callable[[Path], LoadedSession],
    ) -> tuple[AgentSession, LoadedSession]:
        async with self._exclusive(session_id):
            live = self.sessions.get(session_id)
            if live is not None:
                self.idle.touch(session_id)
                if link is not None:
                    bind(live.workspace, link)
            path = live.transcript.path if live else self._transcript_of(session_id, "to resume")
            try:
                # The model's history is what follows the last compaction: `load` parses
                # that, and of the display only what it is asked for (the whole
                # conversation's display for a live session too).
                loaded = await asyncio.to_thread(load, path)
            except (OSError, ValueError) as exc:
                raise InvalidParams(
                    f"The transcript of {session_id} cannot be read: {exc}"
                ) from exc
            if live is not None:
                return live, loaded
            return await self._restart(session_id, path, loaded, overrides, link), loaded

    async def _restart(
        self,
        session_id: str,
        path: Path,
        loaded: LoadedSession,
        overrides: Mapping[str, Any] | None,
        link: EditorLink | None,
    ) -> AgentSession:
        """A closed session started again from its loaded transcript."""
        root = Path(loaded.meta.cwd)
        if not root.is_dir():
            raise InvalidParams(f"The session's directory {root} no longer exists.")
        layer = {k: v for k, v in _identity_of(loaded.meta).items() if v}
        layer.update(loaded.overrides)
        layer.update(overrides or {})
        settings = self.settings_for(root, layer, link.options if link else None)
        self._check_room(settings)
        provider = await asyncio.to_thread(make_provider, settings, self.http_clients)
        transcript = Transcript(path, loaded.meta, self.masker)
        for message in loaded.repaired:
            transcript.record_message(message, None)
        session = self._start(session_id, root, settings, provider, transcript, link)
        session.conversation.restore(loaded.history, loaded.state)
        return session

    def _transcript_of(self, session_id: str, purpose: str) -> Path:
        """The transcript of a live session, or of a closed one under the home (1001)."""
        live = self.sessions.get(session_id)
        if live is not None:
            return live.transcript.path
        home = self.settings_for(Path.cwd(), {}).home
        if not is_id(session_id, "sess") or not transcript_path(home, session_id).is_file():
            raise UnknownSession(f"No session {_shown(session_id)} {purpose} under {home}.")
        return transcript_path(home, session_id)

    async def fork(
        self, session_id: str, message_id: str | None, link: EditorLink | None = None
    ) -> tuple[AgentSession, DisplayHistory]:
        """A new session holding a copy of another's history, whole or up to `message_id`
        (see `cut_at`); also the new session's display history. The copied messages keep
        their turns, so the fork can rewind them (its conversation: their files were the
        other session's changes)."""
        live = self.sessions.get(session_id)
        home = self.settings_for(Path.cwd(), {}).home
        if live is None and (
            not is_id(session_id, "sess") or not transcript_path(home, session_id).is_file()
        ):
            raise UnknownSession(f"No session {_shown(session_id)} to fork under {home}.")
        path = live.transcript.path if live else transcript_path(home, session_id)
        try:
            loaded = await asyncio.to_thread(load_transcript, path)
        except (OSError, ValueError) as exc:
            raise InvalidParams(f"The transcript of {session_id} cannot be read: {exc}") from exc
        history, display = loaded.history, loaded.display
        if message_id is not None:
            history = cut_at(history, message_id)
            display = cut_at(display, message_id)
        layer = {k: v for k, v in _identity_of(loaded.meta).items() if v}
        layer.update(loaded.overrides)
        root = Path(loaded.meta.cwd)
        if not root.is_dir():
            raise InvalidParams(f"The session's directory {root} no longer exists.")
        session = await self.create(root, layer, link)
        turn_of = dict(zip((m.id for m in loaded.display), loaded.display_turns, strict=True))
        for message in history:
            session.transcript.record_message(message, turn_of.get(message.id))
        session.transcript.touch(title=f"Fork: {loaded.meta.title}" if loaded.meta.title else None)
        session.conversation.adopt(history, loaded.state, save=True)
        # Only a turn the fork holds can be rewound in it.
        kept = {turn_of.get(m.id) for m in history}
        starts = {m: t for m, t in loaded.turn_starts.items() if t in kept}
        return session, DisplayHistory(display, starts)

    def list(
        self, cwd: Path | None, cursor: str | None, limit: int = 50
    ) -> tuple[list[SessionMeta], str | None]:
        """Sessions newest first, `limit` a page; the cursor is the last one's id."""
        home = self.settings_for(Path.cwd(), {}).home
        if self._index is None or self._index.home != home:
            self._index = SessionIndex(home)
        metas = self._index.metas()
        if cwd is not None:
            wanted = os.path.realpath(cwd)
            # Sessions share a few directories: each is resolved once, not once a session.
            resolved = {c: os.path.realpath(c) for c in {m.cwd for m in metas}}
            metas = [m for m in metas if resolved[m.cwd] == wanted]
        start = 0
        if cursor is not None:
            ids = [m.session_id for m in metas]
            if cursor not in ids:
                raise InvalidParams(f"cursor {cursor!r} is not a session of this listing")
            start = ids.index(cursor) + 1
        page = metas[start : start + limit]
        more = start + limit < len(metas)
        return page, page[-1].session_id if more and page else None

    def _start(
        self,
        session_id: str,
        root: Path,
        settings: Settings,
        provider: Provider,
        transcript: Transcript,
        link: EditorLink | None,
    ) -> AgentSession:
        view = WorkspaceView(
            session_roots(root, settings.additional_directories, transcript.spill_dir)
        )
        link = link or self.default_link()
        bind(view, link)
        # Memory files are read from the editor's workspace root down to the session's cwd.
        project = next((r for r in link.roots if root.is_relative_to(r)), root)
        session = AgentSession(
            session_id,
            root,
            settings,
            provider,
            view,
            self._sink,
            transcript,
            project,
            self.masker,
            self.callbacks,
        )
        self.sessions[session_id] = session
        self.idle.touch(session_id)
        session.mcp_wiring.start()
        return session

    def _check_room(self, settings: Settings) -> None:
        """TooManySessions (1008) when another live session would pass the cap."""
        cap = settings.max_live_sessions
        if len(self.sessions) >= cap:
            raise TooManySessions(
                f"This daemon already has {len(self.sessions)} live sessions (maxLiveSessions "
                f"is {cap}). Close sessions you no longer use with agent/closeSession (they "
                "stay resumable), or raise maxLiveSessions in the settings.",
                {"live": len(self.sessions), "maxLiveSessions": cap},
            )

    async def _close_idle(self, session_id: str) -> None:
        if session_id in self.sessions:
            await self.close(session_id)

    def attach(self, session_id: str, link: EditorLink) -> AgentSession:
        """Make `link` the editor a live session reads and edits through (UnknownSession)."""
        session = self.get(session_id)
        bind(session.workspace, link)
        return session

    def get(self, session_id: str) -> AgentSession:
        """The session, or UnknownSession (1001)."""
        session = self.sessions.get(session_id)
        if session is not None:
            self.idle.touch(session_id)
        if session is None:
            raise UnknownSession(
                f"Unknown session {_shown(session_id)}: it was never created or has been closed. "
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
            new_provider = await asyncio.to_thread(make_provider, settings, self.http_clients)
        session.set_model(settings, new_provider)

    async def close(self, session_id: str) -> None:
        """Abort and forget a session."""
        session = self.get(session_id)
        del self.sessions[session_id]
        self.idle.forget(session_id)
        await session.close()

    async def delete(self, session_id: str) -> tuple[str, ...]:
        """Delete a saved session for good (closed first when live: its turn aborted);
        the warnings of leftovers not removed (see agentls.session.deletion)."""
        async with self._exclusive(session_id):
            home = self.settings_for(Path.cwd(), {}).home
            live = self.sessions.get(session_id)
            if live is not None:
                home = live.settings.home
                await self.close(session_id)
            warnings = await delete_saved(check_deletable(home, session_id))
        if self._index is not None and self._index.home == home:
            # The index file drops the entry now, not at the next listing.
            self._index.metas()
        return tuple(warnings)

    async def close_all(self) -> None:
        """Abort every session (on shutdown)."""
        await self.idle.stop()
        sessions = list(self.sessions.values())
        self.sessions.clear()
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)
        await self.close_shared()

    async def close_shared(self) -> None:
        """Close what the sessions shared (the model APIs' HTTP clients): the daemon ends."""
        await self.http_clients.aclose()


def _identity(settings: Settings) -> dict[str, Any]:
    return {"provider": settings.resolved_provider(), "model": settings.resolved_model()}


def _identity_of(meta: SessionMeta) -> dict[str, Any]:
    return {"provider": meta.provider, "model": meta.model}


def cut_at(messages: list[Message], message_id: str) -> list[Message]:
    """The history a fork at `message_id` keeps: before a message the user wrote (to say
    something else there), or through a reply and the results of its tool calls."""
    index = next((i for i, m in enumerate(messages) if m.id == message_id), None)
    if index is None:
        raise InvalidParams(
            f"No message {message_id!r} in the session's history (a message before its last "
            "compaction cannot be a fork point).",
            {"field": "messageId"},
        )
    message = messages[index]
    if message.role == "user" and not _results_only(message):
        return messages[:index]
    end = index + 1
    if end < len(messages) and message.role == "assistant" and _results_only(messages[end]):
        end += 1
    return repair_pairing(messages[:end])


def _results_only(message: Message) -> bool:
    """A user message that carries tool results (steering text may ride along)."""
    return message.role == "user" and any(isinstance(b, ToolResultBlock) for b in message.content)


def page_cursor(start: int) -> str | None:
    """A page cursor: where the page began in the conversation (None: at its start)."""
    return str(start) if start > 0 else None


def cursor_position(cursor: str | None) -> int | None:
    """The position a page cursor names (-32602 for anything else)."""
    if cursor is None:
        return None
    if not cursor.isdigit() or len(cursor) > 12:
        raise InvalidParams(
            f"cursor {cursor[:40]!r} is not a messagesCursor or nextCursor", {"field": "before"}
        )
    return int(cursor)


def _shown(session_id: str) -> str:
    """An id as an error message quotes it: a hostile one is cut short."""
    return repr(session_id if len(session_id) <= 80 else session_id[:80] + "…")
