"""The `agentls:` mentions of a message, resolved when its turn starts: the editor's
current problems (asked of it as the Diagnostics tool asks) and another saved session's
last words. What cannot be had becomes an error line for the model, never a failed turn.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agentls.context.prompt import (
    DiagnosticsMention,
    Mention,
    SessionMention,
    SubmittedAttachment,
    UserAttachment,
)
from agentls.messages import Message, TextBlock, ToolUseBlock, is_id
from agentls.session.store import LoadedSession, transcript_path
from agentls.session.transcript_map import load_tail
from agentls.tools.base import display_path
from agentls.tools.editor import open_files, problems_report
from agentls.workspace.view import WorkspaceView

log = logging.getLogger(__name__)
# How much of another session the model gets, and how many of its last messages are read.
SESSION_CHARS = 8_000
SESSION_MESSAGES = 60


@dataclass(frozen=True, slots=True)
class MentionResolver:
    workspace: WorkspaceView
    cwd: Path
    # Where saved sessions are (the settings' home).
    home: Path

    async def resolve(self, attachments: Sequence[SubmittedAttachment]) -> list[UserAttachment]:
        """The attachments with each mention replaced by its text (or its error)."""
        resolved: list[UserAttachment] = []
        for att in attachments:
            if isinstance(att, DiagnosticsMention):
                resolved.append(await self._diagnostics(att.path))
            elif isinstance(att, SessionMention):
                resolved.append(await asyncio.to_thread(self._session, att.session_id))
            else:
                resolved.append(att)
        return resolved

    async def _diagnostics(self, path: Path | None) -> Mention:
        uri = "agentls:diagnostics"
        shown = None if path is None else display_path(path, self.cwd)
        intel = self.workspace.intel
        if intel is None or not intel.has_diagnostics:
            error = "the editor does not report diagnostics (it does not serve agent/diagnostics)"
            return Mention(uri, error=error, path=shown)
        if path is not None and not self.workspace.policy.contains(path):
            return Mention(uri, error="not in the workspace", path=shown)
        paths = [path] if path is not None else open_files(self.workspace)
        if not paths:
            return Mention(uri, "No files are open in the editor.")
        return Mention(uri, await problems_report(intel, paths, self.cwd), path=shown)

    def _session(self, session_id: str) -> Mention:
        uri = f"agentls:session/{session_id}"
        path = transcript_path(self.home, session_id)
        if not is_id(session_id, "sess") or not path.is_file():
            return Mention(uri, error=f"no saved session {session_id}")
        try:
            loaded = load_tail(path, SESSION_MESSAGES)
        except (OSError, ValueError) as exc:
            log.warning("session %s could not be read for a mention: %s", session_id, exc)
            return Mention(uri, error=f"the session {session_id} cannot be read")
        return Mention(uri, session_text(loaded))


def session_text(loaded: LoadedSession) -> str:
    """A session's title, then the text of its last messages, newest kept when cut."""
    meta = loaded.meta
    head = f"Session {meta.session_id}: {meta.title or '(untitled)'} ({meta.turns} turns)"
    room = SESSION_CHARS - len(head)
    kept: list[str] = []
    cut = loaded.display_start > 0
    for message in reversed(loaded.display):
        said = _said(message)
        if not said:
            continue
        if len(said) + 2 > room:
            if room > 200:
                kept.append("…" + said[len(said) - room + 3 :])
            cut = True
            break
        kept.append(said)
        room -= len(said) + 2
    lines = [head, *(["… (earlier messages left out)"] if cut else []), *reversed(kept)]
    return "\n\n".join(lines)


def _said(message: Message) -> str:
    """A message's words: the user's text (not the editor's context block), the model's
    text and the names of the tools it called; tool results leave nothing."""
    texts = [
        b.text
        for b in message.content
        if isinstance(b, TextBlock) and not b.text.startswith("<userContext>")
    ]
    calls = [b.name for b in message.content if isinstance(b, ToolUseBlock)]
    if calls:
        texts.append(f"(called {', '.join(calls)})")
    body = "\n".join(t.strip() for t in texts if t.strip())
    return f"{message.role}: {body}" if body else ""
