"""What an ACP request's params become in the core, and the core's errors as JSON-RPC
errors: the auth methods offered, a session's settings from `session/new`'s fields.

An unknown session is ACP's -32002 (resource not found) with the requested id in `data`
(`{"sessionId": …}`, ACP's session-not-found error data), not the LSP wire's 1001."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from acp import RequestError
from acp import schema as acp

from agentls import api
from agentls.errors import AgentError, ProviderNotConfigured, UnknownSession

AUTH_REQUIRED = -32000
RESOURCE_NOT_FOUND = -32002
# Why a session id is not found: one that must be open here (prompt, mode, close) ...
NOT_OPEN = (
    "is not open in this agent (never created, closed or deleted; "
    "session/load or session/resume opens a saved one)"
)
# ... or one that must be saved (load, resume, fork).
NOT_SAVED = "has no saved transcript (never created, or deleted)"
McpServerParam = acp.HttpMcpServer | acp.SseMcpServer | acp.AcpMcpServer | acp.McpServerStdio
AUTH_METHODS = [
    acp.EnvVarAuthMethod(
        type="env_var",
        id=f"{provider}-api-key",
        name=f"{label} API key",
        description=f"Start the agent with {var} set (or set apiKey in agentls settings).",
        vars=[acp.AuthEnvVar(name=var, label=f"{label} API key", secret=True)],
    )
    for provider, label, var in (
        ("anthropic", "Anthropic", "ANTHROPIC_API_KEY"),
        ("openai", "OpenAI", "OPENAI_API_KEY"),
    )
]


def session_not_found(session_id: str, why: str = NOT_OPEN) -> RequestError:
    """ACP's -32002 for a session id the agent does not know, naming it."""
    shown = repr(session_id if len(session_id) <= 80 else session_id[:80] + "…")
    message = f"Resource not found: session {shown} {why}"
    return RequestError(RESOURCE_NOT_FOUND, message, {"sessionId": session_id})


@contextlib.contextmanager
def as_request_errors(session_id: str | None = None, why: str = NOT_OPEN) -> Iterator[None]:
    """The core's errors as JSON-RPC errors; a missing API key is ACP's auth_required, an
    unknown `session_id` ACP's resource_not_found."""
    try:
        yield
    except UnknownSession as exc:
        if session_id is None:
            raise RequestError(RESOURCE_NOT_FOUND, exc.message, exc.data) from None
        raise session_not_found(session_id, why) from None
    except ProviderNotConfigured as exc:
        raise RequestError(AUTH_REQUIRED, exc.message, exc.data) from None
    except AgentError as exc:
        raise RequestError(exc.code, exc.message, exc.data) from None


def session_overrides(
    mcp_servers: list[McpServerParam] | None,
    additional_directories: list[str] | None,
    own: Any,
) -> dict[str, Any]:
    """Session settings: `_meta.agentls` takes agent/newSession's params (a model, a
    permission mode, a scripted model for tests), then the ACP fields."""
    overrides: dict[str, Any] = {}
    if own is not None:
        if not isinstance(own, dict):
            raise RequestError.invalid_params({"field": "_meta.agentls"})
        try:
            overrides = api.session_overrides(api.NewSessionParams.model_validate(own))
        except ValueError as exc:
            problem = {"field": "_meta.agentls", "message": str(exc)}
            raise RequestError.invalid_params(problem) from None
    if mcp_servers:
        overrides["mcpServers"] = [
            s.model_dump(mode="json", by_alias=True, exclude_none=True) for s in mcp_servers
        ]
    if additional_directories:
        overrides["additionalDirectories"] = list(additional_directories)
    return overrides
