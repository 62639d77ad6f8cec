"""ACP `session/delete`, answered by the channel rather than the SDK.

The Python SDK (agent-client-protocol 0.12.1) has the request's schema and the `delete`
session capability, but `build_agent_router` routes no `session/delete`, the router is
built inside `AgentSideConnection.__init__` with no way for an agent to add a route, and
only `_`-prefixed methods reach `ext_method`. The channel (our Transport) reads every
message before the SDK does, so it takes this one and answers it here, in a task of its
own so the connection keeps reading.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from acp import RequestError
from acp import schema as acp
from acp.meta import AGENT_METHODS

log = logging.getLogger(__name__)
SESSION_DELETE = AGENT_METHODS["session_delete"]


class Deleter(Protocol):
    async def delete_session(self, session_id: str) -> acp.DeleteSessionResponse: ...


class LocalRequests:
    """Requests the channel answers itself; their tasks are kept until they end."""

    def __init__(self, agent: Deleter, send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        self._agent = agent
        self._send = send
        self._tasks: set[asyncio.Task[None]] = set()

    def take(self, message: dict[str, Any]) -> bool:
        """Start answering `message` if it is one of these requests (True), else False.
        Its params were checked already (agentls.acp.envelope)."""
        if message.get("method") != SESSION_DELETE or "id" not in message:
            return False
        task = asyncio.create_task(self._delete(message["id"], message["params"]))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return True

    async def _delete(self, request_id: Any, params: dict[str, Any]) -> None:
        request = acp.DeleteSessionRequest.model_validate(params)
        answer: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        try:
            done = await self._agent.delete_session(request.session_id)
            answer["result"] = done.model_dump(by_alias=True, exclude_none=True)
        except RequestError as exc:
            error: dict[str, Any] = {"code": exc.code, "message": str(exc)}
            if exc.data is not None:
                error["data"] = exc.data
            answer["error"] = error
        except Exception:  # an answer is owed whatever failed
            log.exception("session/delete failed")
            answer["error"] = {"code": -32603, "message": "Internal error"}
        try:
            await self._send(answer)
        except ConnectionError:
            log.warning("session/delete answered after the client left")
