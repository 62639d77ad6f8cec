"""The questions a session's turns are waiting on, and the answers that release them.

`PendingAnswers` is the session's PermissionPrompter: a turn (or a hook, or the MCP
approval) parks on a future here until the client answers with agent/respondPermission or
agent/respondAskUser. It is apart from the session because the bookkeeping (the options a
request offers, which requests may be answered with an edited text) concerns nothing else.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from agentls.errors import InvalidParams, UnknownPermissionRequest
from agentls.events import AskUserRequest, PermissionRequest
from agentls.permissions.asking import PermissionAnswer
from agentls.tools.base import SessionData


class PendingAnswers:
    """Permission requests and AskUser questions of one session that await the user."""

    def __init__(self, session_id: str, data: SessionData, save_state: Callable[[], None]) -> None:
        self._session_id = session_id
        # Open questions are kept in the session's state, so a resume can recap them.
        self._data = data
        self._save_state = save_state
        self._permissions: dict[str, asyncio.Future[PermissionAnswer]] = {}
        self._questions: dict[str, asyncio.Future[str]] = {}
        self._options: dict[str, tuple[str, ...]] = {}
        # Pending requests that carry a proposed file change (they may be answered with
        # the text the user accepted).
        self._reviewable: set[str] = set()

    def respond_permission(self, request_id: str, answer: PermissionAnswer) -> None:
        """Answer a pending permission request (UnknownPermissionRequest if there is none)."""
        future = self._permissions.get(request_id)
        if future is None or future.done():
            raise UnknownPermissionRequest(
                f"No pending permission request {request_id!r} in session {self._session_id}; "
                "it was answered already, or its turn ended."
            )
        options = self._options.get(request_id, ())
        if answer.option_id not in options:
            raise InvalidParams(
                f"optionId {answer.option_id!r} is not an option of request {request_id}; "
                f"use one of {', '.join(options)}",
                {"field": "optionId"},
            )
        if answer.accepted_text is not None:
            reviewable = request_id in self._reviewable
            _check_accepted_text(request_id, answer.option_id, answer.updated_input, reviewable)
        future.set_result(answer)

    def respond_ask_user(self, request_id: str, answer: str) -> None:
        """Answer a pending AskUser question (UnknownPermissionRequest if there is none)."""
        future = self._questions.get(request_id)
        if future is None or future.done():
            raise UnknownPermissionRequest(
                f"No pending question {request_id!r} in session {self._session_id}; it was "
                "answered already, or its turn ended."
            )
        future.set_result(answer)

    async def wait_for_user_answer(self, request: AskUserRequest) -> str:
        """The prompter seam for AskUser: park until `respond_ask_user` answers."""
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._questions[request.request_id] = future
        pending = {"requestId": request.request_id, "question": request.question}
        self._data.pending_questions.append(pending)
        self._save_state()
        try:
            return await future
        finally:
            self._questions.pop(request.request_id, None)
            self._data.pending_questions.remove(pending)
            self._save_state()

    async def wait_for_answer(self, request: PermissionRequest) -> PermissionAnswer:
        """The PermissionPrompter seam: park until `respond_permission` answers."""
        future: asyncio.Future[PermissionAnswer] = asyncio.get_running_loop().create_future()
        self._permissions[request.request_id] = future
        self._options[request.request_id] = tuple(o.option_id for o in request.options)
        if request.diff is not None and request.diffs is None:
            # A patch's one-file `diff` is shown, not reviewed: acceptedText is Edit's.
            self._reviewable.add(request.request_id)
        try:
            return await future
        finally:
            self._permissions.pop(request.request_id, None)
            self._options.pop(request.request_id, None)
            self._reviewable.discard(request.request_id)


def _check_accepted_text(
    request_id: str, option_id: str, updated_input: dict[str, Any] | None, reviewable: bool
) -> None:
    """acceptedText answers only an allowed request that proposed a file change."""
    if not reviewable:
        raise InvalidParams(
            f"acceptedText is only for a request with a proposed change (diff); {request_id} "
            "has none",
            {"field": "acceptedText"},
        )
    if not option_id.startswith("allow"):
        raise InvalidParams(
            "acceptedText goes with an allow option; to refuse the change, reject it",
            {"field": "acceptedText"},
        )
    if updated_input is not None:
        raise InvalidParams(
            "give acceptedText or updatedInput, not both", {"field": "acceptedText"}
        )
