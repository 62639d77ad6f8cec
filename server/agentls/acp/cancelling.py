"""`$/cancel_request` for the requests a client sends: the Python SDK (0.12) routes no
`$/` method, so the channel takes the notification itself and cancels here.

The channel sets REQUEST_ID before it hands a request to the SDK, which starts the
request's handler as a task right then: the task copies the context, so the handler
reads its own JSON-RPC id and registers how to stop its work under it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from contextvars import ContextVar

log = logging.getLogger(__name__)
# -32800 is JSON-RPC's (LSP's) "request cancelled", which ACP's cancellation adopts.
REQUEST_CANCELLED = -32800
RequestId = str | int
REQUEST_ID: ContextVar[RequestId | None] = ContextVar("acp_request_id", default=None)


class CancellableRequests:
    """The running requests that can be stopped, by their JSON-RPC id."""

    def __init__(self) -> None:
        self._stops: dict[RequestId, Callable[[], object]] = {}
        self.cancelled: set[RequestId] = set()

    @contextlib.contextmanager
    def running(self, stop: Callable[[], object]) -> Iterator[RequestId | None]:
        """While the current request runs, `$/cancel_request` of its id calls `stop`."""
        request_id = REQUEST_ID.get()
        if request_id is not None:
            self._stops[request_id] = stop
        try:
            yield request_id
        finally:
            if request_id is not None:
                self._stops.pop(request_id, None)
                self.cancelled.discard(request_id)

    def cancel(self, request_id: object) -> None:
        """A client's `$/cancel_request`: an unknown or finished request is ignored."""
        if not isinstance(request_id, str | int) or isinstance(request_id, bool):
            log.info("$/cancel_request without a usable requestId ignored")
            return
        stop = self._stops.get(request_id)
        if stop is None:
            return
        self.cancelled.add(request_id)
        stop()
