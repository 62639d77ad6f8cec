"""The HTTP clients a daemon's sessions share for the model APIs.

Each SDK client builds its own httpx client unless given one, and with it a TLS context
read from the CA bundle: tens of milliseconds of CPU for every session the warm daemon
opens, before its first request, and a connection pool that starts cold. Sessions whose
connection settings are the same (the SDK, its base URL, its credentials) share one
client here, and so its pool and TLS context. Different settings never share one: a
client's cookies and connections stay with one set of credentials and one server.

The SDK client stays per session (it holds the key and the base URL and builds each
request's URL and headers itself); only the transport under it is shared, so a provider
closing its SDK client must leave a shared one open. They are closed with their owner
(the SessionManager, when the daemon ends).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from typing import Protocol, TypeVar, cast


class HttpClient(Protocol):
    """What the pool needs of a client: httpx's AsyncClient (whatever the SDK's httpx)."""

    async def aclose(self) -> None: ...


C = TypeVar("C", bound=HttpClient)


def connection_key(sdk: str, base_url: str | None, credential: str | None) -> tuple[str, ...]:
    """What decides whether two sessions may share a client; the credential only as a
    digest, so no key is held (or logged) twice."""
    digest = hashlib.sha256(credential.encode()).hexdigest() if credential else ""
    return (sdk, base_url or "", digest)


class SharedHttpClients:
    """One HTTP client per connection key, made on first use and closed by `aclose`."""

    def __init__(self) -> None:
        self._clients: dict[tuple[str, ...], HttpClient] = {}
        # Providers are made in worker threads (asyncio.to_thread), several at once.
        self._lock = threading.Lock()
        self._closed = False

    def get(self, key: tuple[str, ...], make: Callable[[], C]) -> C | None:
        """The client for `key` (made now if there is none); None once closed."""
        with self._lock:
            if self._closed:
                return None
            client = self._clients.get(key)
            if client is None:
                client = self._clients[key] = make()
            return cast(C, client)

    def __len__(self) -> int:
        return len(self._clients)

    async def aclose(self) -> None:
        """Close every client; later sessions build their own again."""
        with self._lock:
            self._closed = True
            clients = list(self._clients.values())
            self._clients.clear()
        for client in clients:
            await client.aclose()
