"""Asking the user: a permission request sent, the answer waited for, its end announced.

The loop's executor, the hooks (trusting a project's hooks) and the MCP servers (approving
a project's servers) all ask through here; the session is the `PermissionPrompter` that
holds each question until a client answers it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Protocol

from agentls.events import AskUserRequest, Emit, PermissionRequest, PermissionResolved


@dataclass(frozen=True, slots=True)
class PermissionAnswer:
    option_id: str
    message: str | None = None
    updated_input: dict[str, Any] | None = None
    # The file text the user accepted after reviewing the proposed change.
    accepted_text: str | None = None


class PermissionPrompter(Protocol):
    """The session's side of the questions a turn asks the user."""

    async def wait_for_answer(self, request: PermissionRequest) -> PermissionAnswer:
        """Wait for the user's answer to a permission request that was just emitted."""

    async def wait_for_user_answer(self, request: AskUserRequest) -> str:
        """Wait for the user's answer to an AskUser question that was just emitted."""


async def ask_permission(
    prompter: PermissionPrompter, emit: Emit, request: PermissionRequest
) -> PermissionAnswer:
    """Send a permission request and wait for the answer; its resolution is sent either way."""
    emit(request)
    try:
        answer = await prompter.wait_for_answer(request)
    except asyncio.CancelledError:
        emit(PermissionResolved(request.request_id, "cancelled"))
        raise
    emit(PermissionResolved(request.request_id, "selected", answer.option_id))
    return answer
