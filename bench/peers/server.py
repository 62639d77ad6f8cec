"""tests/replay_server.py's ReplayServer, answering by what each request is.

A peer's real model calls get the task's replies in order (each built from the request, so
a reply can use the tool names the peer offered); anything else it sends first or beside
them (a quota check, a token count, a title) gets `other`'s answer and is counted apart.
Every request is stamped on arrival, relative to `started`.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from replay_server import RecordedRequest, ReplayServer, ScriptedResponse

Reply = Callable[[RecordedRequest], ScriptedResponse]


@dataclass(frozen=True, slots=True)
class Arrival:
    """One request as the bench reports it."""

    at: float
    method: str
    path: str
    model: str
    tools: int
    size: int
    stream: bool
    model_call: bool

    def describe(self) -> str:
        kind = "model call" if self.model_call else "other"
        stream = ", stream" if self.stream else ""
        return (
            f"{self.method} {self.path} [{kind}] model={self.model or '-'} tools={self.tools} "
            f"{self.size / 1024:.1f} kB{stream} at {self.at * 1000:.0f} ms"
        )


def _body(request: RecordedRequest) -> dict[str, Any]:
    return request.body if isinstance(request.body, dict) else {}


class PeerServer(ReplayServer):
    def __init__(
        self,
        replies: Sequence[Reply],
        is_model_call: Callable[[RecordedRequest], bool],
        other: Reply,
    ) -> None:
        super().__init__()
        self.started = time.perf_counter()
        self.arrivals: list[Arrival] = []
        self.model_calls: list[RecordedRequest] = []
        self._replies = deque(replies)
        self._is_model_call = is_model_call
        self._other = other
        self._guard = threading.Lock()
        self._answer = threading.local()

    def record(self, request: RecordedRequest) -> None:
        """Stamp the request and choose its answer (handed over by next_response)."""
        at = time.perf_counter() - self.started
        reply: Reply | None = None
        model_call = request.method == "POST" and self._is_model_call(request)
        with self._guard:
            if model_call and self._replies:
                reply = self._replies.popleft()
                self.model_calls.append(request)
            elif request.method == "POST":
                reply = self._other
            body = _body(request)
            tools = body.get("tools")
            self.arrivals.append(
                Arrival(
                    at,
                    request.method,
                    request.path,
                    str(body.get("model", "")),
                    len(tools) if isinstance(tools, list) else 0,
                    len(request.raw_body),
                    bool(body.get("stream")),
                    reply is not None and reply is not self._other,
                )
            )
        self._answer.response = None if reply is None else reply(request)
        super().record(request)

    @property
    def pending(self) -> int:
        """1 when this request has an answer (a GET without one gets the server's 404)."""
        return 0 if getattr(self._answer, "response", None) is None else 1

    def next_response(self, body: Any = None) -> ScriptedResponse:
        response: ScriptedResponse = self._answer.response
        self._answer.response = None
        return response
