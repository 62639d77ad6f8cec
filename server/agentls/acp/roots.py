"""A session's additional workspace roots, as ACP's session lifecycle requests name them.

agentls advertises `sessionCapabilities.additionalDirectories`, so the list on
`session/load`, `session/resume` and `session/fork` is the session's complete list of
additional roots from then on, whether the session was saved, made on another connection
or is open here already; an omitted or empty list activates no root of the client's (the
session keeps only what the settings give every session, as on `session/new`). Every
entry is an absolute path, as ACP says (agentls.acp.envelope refuses any other).
"""

from __future__ import annotations

from agentls.session.manager import SessionManager, session_roots
from agentls.session.session import AgentSession
from agentls.workspace.paths import PathPolicy


def activate(manager: SessionManager, session: AgentSession, directories: list[str] | None) -> None:
    """Make the session's roots its cwd, `directories` (the settings' own when there are
    none) and its spilled results' folder, as a new session's are made."""
    extra = directories or manager.settings_for(session.cwd, {}).additional_directories
    roots = session_roots(session.cwd, extra, session.transcript.spill_dir)
    session.workspace.policy = PathPolicy(roots)
