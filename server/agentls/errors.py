"""Application errors; each maps to one JSON-RPC error code of the wire contract."""

from __future__ import annotations

from typing import Any


class AgentError(Exception):
    """An error a client caused or must act on; `code` is its JSON-RPC error code."""

    code = -32603

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data


class InvalidParams(AgentError):
    code = -32602


class UnknownSession(AgentError):
    code = 1001


class SessionBusy(AgentError):
    code = 1002


class UnknownPermissionRequest(AgentError):
    code = 1003


class ProviderNotConfigured(AgentError):
    code = 1004


class NothingToContinue(AgentError):
    """agent/continueTurn after a turn that did not stop at the turn limit."""

    code = 1006


class TooManySessions(AgentError):
    """A new live session would pass the `maxLiveSessions` cap."""

    code = 1008
