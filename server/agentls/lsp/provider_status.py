"""agent/providerStatus: what a new session would run on, read from the settings alone, so
a client can offer its first-run setup before the user's first message fails with 1004."""

from __future__ import annotations

from pathlib import Path

from agentls import api
from agentls.errors import InvalidParams
from agentls.lsp.server import AgentServer
from agentls.names import PROVIDERS
from agentls.session.manager import SessionManager


async def status_before_session(
    manager: SessionManager, p: api.ProviderStatusParams, client: AgentServer
) -> api.ProviderStatusResult:
    """The provider, model and mode of a session at `p.cwd` (default: the client's first
    root), and whether it could start; nothing is imported or contacted."""
    roots = client.workspace_roots
    root = Path(p.cwd) if p.cwd else (roots[0] if roots else Path.cwd())
    if not root.is_absolute() or not root.is_dir():
        raise InvalidParams(f"cwd {root} is not an existing absolute directory", {"field": "cwd"})
    settings = manager.settings_for(root, {}, client.client_options)
    problem = settings.missing_credentials()
    provider = settings.resolved_provider()
    return api.ProviderStatusResult(
        provider=provider if provider in PROVIDERS else None,
        model=settings.resolved_model(),
        permission_mode=settings.permission_mode,
        configured=problem is None,
        problem=problem,
    )
