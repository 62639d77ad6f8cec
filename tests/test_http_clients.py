"""The model APIs' HTTP clients, shared by a daemon's sessions with the same connection
settings (issue 28's warm start): one pool and TLS set-up instead of one per session, never
shared across different credentials or servers, and left open when one session's provider
closes."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path

import anthropic

from agent_client import running_daemon
from agentls.messages import Message, TextBlock
from agentls.providers.anthropic import AnthropicProvider
from agentls.providers.base import ModelRequest, TextDelta
from agentls.providers.http_clients import SharedHttpClients, connection_key
from agentls.providers.openai_compat import OpenAIProvider
from replay_server import ReplayServer, anthropic_text_turn, openai_text_turn


class ConnectionCounter:
    """A TCP pass-through to the replay server that counts the connections made to it."""

    def __init__(self, upstream_port: int) -> None:
        self._upstream = upstream_port
        self.connections = 0
        self.port = 0

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self._upstream)
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[str]:
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        async with server:
            yield f"http://127.0.0.1:{self.port}"
            server.close()


REQUEST = ModelRequest(
    model="claude-replay",
    system_static="You answer.",
    system_dynamic="",
    messages=[Message("user", (TextBlock("Hello?"),))],
    tools=[],
    max_tokens=100,
)


def _port(base_url: str) -> int:
    return int(base_url.rsplit(":", 1)[1].split("/")[0])


def _project(root: Path, base_url: str) -> Path:
    """A project whose settings send its sessions' requests to `base_url`."""
    (root / ".agentls").mkdir(parents=True)
    settings = {"anthropicBaseUrl": base_url}
    (root / ".agentls" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    return root


async def test_sessions_with_the_same_settings_share_one_connection(tmp_path: Path) -> None:
    answers = [anthropic_text_turn(f"Answer {n}.") for n in range(3)]
    with ReplayServer(answers) as replay:
        shared = ConnectionCounter(_port(replay.base_url))
        own = ConnectionCounter(_port(replay.base_url))
        async with (
            shared.running() as url,
            own.running() as other_url,
            running_daemon(
                tmp_path,
                AGENTLS_PROVIDER="anthropic",
                ANTHROPIC_API_KEY="sk-test-shared",
                AGENTLS_MODEL="claude-replay",
            ) as client,
        ):
            first, second = _project(tmp_path / "one", url), _project(tmp_path / "two", other_url)
            for cwd in (first, first, second):
                session = await client.new_session(cwd)
                _turn, done = await client.run_turn(session["sessionId"], "Hello?")
                assert done["stopReason"] == "end_turn"
        # The second session's request went over the first one's kept-alive connection;
        # the project on another server got a client of its own.
        assert (shared.connections, own.connections) == (1, 1)
        assert [r.api_key() for r in replay.requests] == ["sk-test-shared"] * 3


def test_clients_are_shared_by_connection_settings_only() -> None:
    pool = SharedHttpClients()
    first = pool.get(connection_key("anthropic", None, "key-a"), anthropic.DefaultAsyncHttpxClient)
    again = pool.get(connection_key("anthropic", None, "key-a"), anthropic.DefaultAsyncHttpxClient)
    other_key = pool.get(
        connection_key("anthropic", None, "key-b"), anthropic.DefaultAsyncHttpxClient
    )
    other_url = pool.get(
        connection_key("anthropic", "http://127.0.0.1:9", "key-a"),
        anthropic.DefaultAsyncHttpxClient,
    )
    assert first is again
    assert len({id(first), id(other_key), id(other_url)}) == 3 and len(pool) == 3
    assert "key-a" not in repr(connection_key("anthropic", None, "key-a"))


async def test_closing_one_provider_leaves_the_shared_client_to_the_others() -> None:
    pool = SharedHttpClients()
    with ReplayServer([anthropic_text_turn("Still here.")]) as replay:
        first = AnthropicProvider("sk-test", replay.base_url, shared=pool)
        second = AnthropicProvider("sk-test", replay.base_url, shared=pool)
        await first.aclose()
        events = [e async for e in second.stream(REQUEST)]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Still here."
    await pool.aclose()
    # Closed with its owner; a provider made after that builds a client of its own.
    assert (
        pool.get(connection_key("anthropic", None, None), anthropic.DefaultAsyncHttpxClient) is None
    )


async def test_openai_providers_share_their_client_too() -> None:
    pool = SharedHttpClients()
    with ReplayServer([openai_text_turn("Still here.")]) as replay:
        first = OpenAIProvider("sk-test", replay.openai_base_url, shared=pool)
        second = OpenAIProvider("sk-test", replay.openai_base_url, shared=pool)
        await first.aclose()
        events = [e async for e in second.stream(REQUEST)]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Still here."
    assert len(pool) == 1
    await pool.aclose()
