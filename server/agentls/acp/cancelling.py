"""`$/cancel_request` for the requests a client sends: the Python SDK (0.12) routes no
`$/` method, so the channel takes the notification itself and cancels here.

The channel registers a `session/prompt` (and sets REQUEST_ID) before it hands it to
the SDK, which starts the request's handler as a task right then: the task copies the
context, so the handler finds its own entry and says how to stop its work.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass

log = logging.getLogger(__name__)
# -32800 is JSON-RPC's (LSP's) "request cancelled", which ACP's cancellation adopts.
REQUEST_CANCELLED = -32800
RequestId = str | int
REQUEST_ID: ContextVar[RequestId | None] = ContextVar("acp_request_id", default=None)


@dataclass(slots=True)
class RunningRequest:
    """One request that can be cancelled; its work's stop is known once it has started,
    and a cancel that came before that stops it as soon as it is."""

    cancelled: bool = False
    stop: Callable[[], object] | None = None

    def started(self, stop: Callable[[], object]) -> None:
        self.stop = stop
        if self.cancelled:
            stop()

    def cancel(self) -> None:
        self.cancelled = True
        if self.stop is not None:
            self.stop()


class CancellableRequests:
    """The running requests that can be stopped, by their JSON-RPC id. The channel
    registers a request as it reads it, so a cancel that follows at once (before the
    SDK has started the handler) is not lost."""

    def __init__(self) -> None:
        self._running: dict[RequestId, RunningRequest] = {}

    def arrived(self, request_id: RequestId) -> None:
        """The channel read a cancellable request: its handler task, started next,
        finds it through REQUEST_ID."""
        self._running[request_id] = RunningRequest()
        REQUEST_ID.set(request_id)

    @contextlib.contextmanager
    def running(self) -> Iterator[RunningRequest]:
        """The current request, cancellable by its id until the block ends."""
        request_id = REQUEST_ID.get()
        request = self._running.get(request_id) if request_id is not None else None
        try:
            yield request if request is not None else RunningRequest()
        finally:
            if request_id is not None:
                self._running.pop(request_id, None)

    def cancel(self, request_id: object) -> None:
        """A client's `$/cancel_request`: an unknown or finished request is ignored."""
        if not isinstance(request_id, str | int) or isinstance(request_id, bool):
            log.info("$/cancel_request without a usable requestId ignored")
            return
        request = self._running.get(request_id)
        if request is not None:
            request.cancel()
