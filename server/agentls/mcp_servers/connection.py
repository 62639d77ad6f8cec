"""One MCP server of one session, through the official SDK: started in the background,
listed, watched, and restarted with backoff when it exits.

The SDK's client is entered and left in this connection's own task (its anyio task groups
demand that); calls come from tool tasks and share it. A stdio server that exits is seen
at once (its output stream ends); an HTTP server that goes away, at its next call. Either
way the call fails with a message the model can read, and the server is started again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

import httpx2
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.dispatcher import ProgressFnT as Progress
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import CONNECTION_CLOSED

from agentls.mcp_servers.config import McpServerConfig
from agentls.mcp_servers.state import (
    McpPromptArgument,
    McpPromptInfo,
    McpResourceInfo,
    McpServerState,
    McpToolInfo,
)
from agentls.tools.process_guard import guard_child_groups

log = logging.getLogger(__name__)
# Seconds before each restart; the last repeats.
BACKOFF = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0)
# Starts in a row that never reached ready before the server is given up.
MAX_FAILED_STARTS = 3
_PAGES = 50
_STDERR_TAIL = 2000


class McpUnavailable(Exception):
    """The server cannot take calls now (starting, restarting, failed or stopped)."""


class McpConnection:
    """A server's connection for the life of its session; `state` is what clients see."""

    def __init__(
        self,
        config: McpServerConfig,
        cwd: Path,
        log_dir: Path,
        on_change: Callable[[McpServerState], None],
        startup_timeout: float,
    ) -> None:
        self.config = config
        self.state = McpServerState(config.name, config.transport, config.source)
        self._cwd = cwd
        self._log_path = log_dir / f"{config.name}.stderr.log"
        self._on_change = on_change
        self._startup_timeout = startup_timeout
        self._client: Client | None = None
        self._lost = asyncio.Event()
        self._closing = asyncio.Event()
        # Set whenever the status is not `starting`: callers waiting for the start wake.
        self._settled = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stderr_start = 0
        self._gave_up = False

    def start(self) -> None:
        self._task = asyncio.create_task(self._serve(), name=f"mcp:{self.config.name}")

    async def wait_settled(self, timeout: float) -> None:
        """Until the server is ready or has failed, at most `timeout` seconds."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._settled.wait(), timeout)

    async def close(self) -> None:
        self._closing.set()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)

    async def restart(self) -> None:
        """Stop the server and start it afresh, also one that gave up; a start under way is
        cut short rather than waited for."""
        if self._task is not None and self.state.status == "starting":
            self._task.cancel()
        await self.close()
        self._closing = asyncio.Event()
        self._gave_up = False
        self._client = None
        self.start()

    async def call_tool(
        self, name: str, arguments: dict[str, Any], timeout: float, progress: Progress
    ) -> types.CallToolResult:
        client = await self._connected()
        try:
            return await client.call_tool(
                name, arguments, read_timeout_seconds=timeout, progress_callback=progress
            )
        except MCPError as exc:
            raise self._call_error(exc, f"tool {name}") from exc

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        client = await self._connected()
        try:
            return await client.read_resource(uri)
        except MCPError as exc:
            raise self._call_error(exc, f"resource {uri}") from exc

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> types.GetPromptResult:
        client = await self._connected()
        try:
            return await client.get_prompt(name, arguments)
        except MCPError as exc:
            raise self._call_error(exc, f"prompt {name}") from exc

    async def _connected(self) -> Client:
        """The client once the server is ready; a server that is starting, or restarting
        after it hung up, is waited for (up to the start-up timeout)."""
        deadline = time.monotonic() + self._startup_timeout
        while True:
            client = self._client
            if client is not None and self.state.status == "ready" and not self._lost.is_set():
                return client
            coming = self.state.status == "starting" or self._lost.is_set()
            if self._gave_up or self._closing.is_set() or not coming:
                break
            if time.monotonic() > deadline:
                break
            await asyncio.sleep(0.05)
        why = f": {self.state.error}" if self.state.error else ""
        again = "" if self._gave_up or self._closing.is_set() else " It will be restarted."
        raise McpUnavailable(f"MCP server {self.config.name!r} is {self.state.status}{why}.{again}")

    def _call_error(self, exc: MCPError, what: str) -> Exception:
        if exc.code == CONNECTION_CLOSED:
            self._lost.set()
            return McpUnavailable(
                f"MCP server {self.config.name!r} closed the connection during the call to "
                f"{what}; it is being restarted."
            )
        return RuntimeError(f"MCP server {self.config.name!r}: {exc.error.message}")

    async def _serve(self) -> None:
        failed_starts = 0
        while not self._closing.is_set():
            self._update(status="starting", error=None, attempts=self.state.attempts + 1)
            self._lost = asyncio.Event()
            self._stderr_start = self._stderr_size()
            reached_ready = False
            try:
                async with contextlib.AsyncExitStack() as stack:
                    async with asyncio.timeout(self._startup_timeout):
                        client = await stack.enter_async_context(self._new_client(stack))
                        await self._list(client)
                    self._client = client
                    reached_ready = True
                    self._update(status="ready")
                    await _first(self._lost.wait(), self._closing.wait())
                    self._client = None
                reason = "the server closed the connection"
            except TimeoutError:
                reason = f"it did not start within {self._startup_timeout:g} s"
            except Exception as exc:
                reason = _describe(exc)
            self._client = None
            if self._closing.is_set():
                break
            failed_starts = 0 if reached_ready else failed_starts + 1
            reason += self._stderr_tail()
            log.warning("MCP server %s: %s", self.config.name, reason)
            if failed_starts >= MAX_FAILED_STARTS:
                self._gave_up = True
                self._update(
                    status="failed", error=f"{reason} (gave up after {failed_starts} tries)"
                )
                await self._closing.wait()
                break
            self._update(status="failed", error=reason)
            # A server that ran and hung up is started again at once; one that keeps
            # failing to start, after a growing pause.
            delay = 0.0 if reached_ready else BACKOFF[min(failed_starts, len(BACKOFF)) - 1]
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), delay)
        self._update(status="stopped")

    def _new_client(self, stack: contextlib.AsyncExitStack) -> Client:
        config = self.config
        info = types.Implementation(name="agentls", version="0.1.0")
        if config.transport == "http":
            assert config.url is not None
            http = httpx2.AsyncClient(
                headers=dict(config.headers), timeout=httpx2.Timeout(30.0, read=300.0)
            )
            stack.push_async_callback(http.aclose)
            transport = streamable_http_client(config.url, http_client=http)
            return Client(_Watched(transport, self._lost), client_info=info, cache=None)
        assert config.command is not None
        self._log_path.parent.mkdir(parents=True, exist_ok=True)
        errlog: TextIO = stack.enter_context(self._log_path.open("a", encoding="utf-8"))
        params = StdioServerParameters(
            command=config.command,
            args=list(config.args),
            env=dict(config.env) or None,
            cwd=config.cwd or str(self._cwd),
        )
        transport = stdio_client(params, errlog=errlog)
        # Its group is killed by the watchdog if the daemon dies (the SDK does not give
        # out the server's pid: the guard finds it among the daemon's children).
        watched = _Watched(transport, self._lost, opened=guard_child_groups)
        return Client(watched, client_info=info, cache=None)

    async def _list(self, client: Client) -> None:
        """Read what the server offers into the state (tools; resources and prompts when
        it has them)."""
        capabilities = client.server_capabilities
        tools = [_tool_info(t) for t in await _all(client.list_tools, "tools")]
        resources: list[McpResourceInfo] = []
        if capabilities.resources is not None:
            resources = [_resource_info(r) for r in await _all(client.list_resources, "resources")]
        prompts: list[McpPromptInfo] = []
        if capabilities.prompts is not None:
            prompts = [_prompt_info(p) for p in await _all(client.list_prompts, "prompts")]
        version = client.server_info.version if client.server_info else None
        self.state = replace(
            self.state,
            tools=tuple(tools),
            resources=tuple(resources),
            prompts=tuple(prompts),
            server_version=version or None,
        )

    def _stderr_size(self) -> int:
        try:
            return self._log_path.stat().st_size
        except OSError:
            return 0

    def _stderr_tail(self) -> str:
        """The last lines this start of the server wrote to stderr."""
        if self.config.transport != "stdio":
            return ""
        try:
            with self._log_path.open("rb") as log_file:
                log_file.seek(max(self._stderr_start, self._stderr_size() - _STDERR_TAIL))
                tail = log_file.read().decode("utf-8", "replace").strip()
        except OSError:
            return ""
        lines = tail.splitlines()[-5:]
        return f"; its stderr ends: {' | '.join(lines)}" if lines else ""

    def _update(self, **changes: Any) -> None:
        self.state = replace(self.state, **changes)
        if self.state.status == "starting":
            self._settled.clear()
        else:
            self._settled.set()
        try:
            self._on_change(self.state)
        except Exception:
            log.exception("MCP server %s: status not delivered", self.config.name)


class _Watched:
    """A transport whose read stream's end sets `lost`: the server exited or hung up.
    `opened` runs once the transport is open (for stdio: the server process runs)."""

    def __init__(
        self, inner: Any, lost: asyncio.Event, opened: Callable[[], None] = lambda: None
    ) -> None:
        self._inner = inner
        self._lost = lost
        self._opened = opened

    async def __aenter__(self) -> tuple[Any, Any]:
        read, write = await self._inner.__aenter__()
        self._opened()
        return _WatchedRead(read, self._lost), write

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        self._lost.set()
        result: bool | None = await self._inner.__aexit__(exc_type, exc, tb)
        return result


class _WatchedRead:
    def __init__(self, inner: Any, lost: asyncio.Event) -> None:
        self._inner = inner
        self._lost = lost

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def __aenter__(self) -> _WatchedRead:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        self._lost.set()
        result: bool | None = await self._inner.__aexit__(*exc)
        return result

    def __aiter__(self) -> _WatchedRead:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._inner.__anext__()
        except StopAsyncIteration:
            self._lost.set()
            raise

    async def receive(self) -> Any:
        return await self._inner.receive()

    async def aclose(self) -> None:
        self._lost.set()
        await self._inner.aclose()


async def _first(*waits: Awaitable[Any]) -> None:
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()


async def _all(list_page: Callable[..., Awaitable[Any]], field: str) -> list[Any]:
    """Every item of a paginated listing (at most `_PAGES` pages)."""
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(_PAGES):
        page = await list_page(cursor=cursor)
        items += getattr(page, field)
        cursor = page.next_cursor
        if not cursor:
            break
    return items


def _tool_info(tool: types.Tool) -> McpToolInfo:
    annotations = tool.annotations
    read_only = bool(annotations and annotations.read_only_hint)
    title = tool.title or (annotations.title if annotations else None)
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {"type": "object"}
    return McpToolInfo(tool.name, tool.description or "", dict(schema), read_only, title)


def _resource_info(resource: types.Resource) -> McpResourceInfo:
    return McpResourceInfo(
        str(resource.uri), resource.name, resource.description or None, resource.mime_type
    )


def _prompt_info(prompt: types.Prompt) -> McpPromptInfo:
    arguments = tuple(
        McpPromptArgument(a.name, a.description or None, bool(a.required))
        for a in prompt.arguments or ()
    )
    return McpPromptInfo(prompt.name, prompt.description or None, arguments)


def _describe(exc: BaseException) -> str:
    """The innermost useful message of an exception (the SDK raises groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError):
        return f"its command was not found ({exc.filename or exc})"
    if isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED:
        return "it exited (or hung up) before it was ready"
    if isinstance(exc, MCPError):
        return f"it answered the handshake with an error: {exc.error.message}"
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text
