"""An ACP client for the tests, on the `agent-client-protocol` SDK's own client side.

It plays an editor: it keeps unsaved buffers (fs/read_text_file gives them), writes files
(fs/write_text_file), runs terminals as real processes (terminal/*), records every
session/update, and answers permission requests as a test tells it to.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process
from acp import schema as acp

from agent_client import write_script

Update = dict[str, Any]


@dataclass
class Terminal:
    process: asyncio.subprocess.Process
    output: bytearray = field(default_factory=bytearray)
    pump: asyncio.Task[None] | None = None
    released: bool = False


class EditorClient:
    """The client side of one connection: what the agent asked and sent."""

    def __init__(self) -> None:
        self.updates: list[tuple[str, Update]] = []
        self.buffers: dict[str, str] = {}
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []
        self.terminals: dict[str, Terminal] = {}
        self.terminal_commands: list[list[str]] = []
        self.permission_requests: list[dict[str, Any]] = []
        self.pending_permissions: asyncio.Queue[asyncio.Future[dict[str, Any]]] = asyncio.Queue()
        # None: each permission request waits for the test to answer it.
        self.auto_permission: str | None = None
        # What elicitation/create answers (the form's content), and what it was asked.
        self.elicitation_answer: dict[str, Any] | None = None
        self.elicitations: list[dict[str, Any]] = []
        # Every message on the wire, in order: ("incoming" | "outgoing", message).
        self.wire: list[tuple[str, dict[str, Any]]] = []
        self._changed = asyncio.Event()
        self._ids = itertools.count(1)

    def observe(self, event: Any) -> None:
        self.wire.append((event.direction.value, event.message))

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    # The agent's process, once started.
    process: asyncio.subprocess.Process

    async def session_update(self, session_id: str, update: Any, **_kw: Any) -> None:
        self.updates.append((session_id, update.model_dump(mode="json", by_alias=True)))
        self._changed.set()

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **_kw: Any
    ) -> acp.RequestPermissionResponse:
        request = {
            "sessionId": session_id,
            "toolCall": tool_call.model_dump(mode="json", by_alias=True, exclude_none=True),
            "options": [o.model_dump(mode="json", by_alias=True) for o in options],
        }
        self.permission_requests.append(request)
        self._changed.set()
        if self.auto_permission is not None:
            option_id = self.auto_permission
        else:
            answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
            answer.request = request  # type: ignore[attr-defined]
            await self.pending_permissions.put(answer)
            outcome = await answer
            if outcome.get("outcome") == "cancelled":
                return acp.RequestPermissionResponse(outcome=acp.DeniedOutcome(outcome="cancelled"))
            option_id = outcome["optionId"]
        return acp.RequestPermissionResponse(
            outcome=acp.AllowedOutcome(outcome="selected", option_id=option_id)
        )

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **_kw: Any,
    ) -> acp.ReadTextFileResponse:
        self.reads.append(path)
        if path in self.buffers:
            return acp.ReadTextFileResponse(content=self.buffers[path])
        try:
            return acp.ReadTextFileResponse(content=Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise RequestError.resource_not_found(path) from exc

    async def write_text_file(
        self, session_id: str, path: str, content: str, **_kw: Any
    ) -> acp.WriteTextFileResponse:
        self.writes.append((path, content))
        self.buffers.pop(path, None)
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(content, encoding="utf-8", newline="")
        return acp.WriteTextFileResponse()

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: Any = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **_kw: Any,
    ) -> acp.CreateTerminalResponse:
        argv = [command, *(args or [])]
        self.terminal_commands.append(argv)
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        terminal = Terminal(process)

        async def pump() -> None:
            assert process.stdout is not None
            while chunk := await process.stdout.read(65536):
                terminal.output.extend(chunk)

        terminal.pump = asyncio.create_task(pump())
        terminal_id = f"term-{next(self._ids)}"
        self.terminals[terminal_id] = terminal
        return acp.CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **_kw: Any
    ) -> acp.TerminalOutputResponse:
        terminal = self.terminals[terminal_id]
        code = terminal.process.returncode
        status = None
        if code is not None:
            assert terminal.pump is not None
            await terminal.pump
            status = acp.TerminalExitStatus(
                exit_code=code if code >= 0 else None, signal=None if code >= 0 else f"SIG{-code}"
            )
        return acp.TerminalOutputResponse(
            output=terminal.output.decode(errors="replace"), truncated=False, exit_status=status
        )

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **_kw: Any
    ) -> acp.WaitForTerminalExitResponse:
        terminal = self.terminals[terminal_id]
        code = await terminal.process.wait()
        return acp.WaitForTerminalExitResponse(
            exit_code=code if code >= 0 else None, signal=None if code >= 0 else f"SIG{-code}"
        )

    async def kill_terminal(self, session_id: str, terminal_id: str, **_kw: Any) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.terminals[terminal_id].process.pid, 9)

    async def release_terminal(self, session_id: str, terminal_id: str, **_kw: Any) -> None:
        terminal = self.terminals[terminal_id]
        terminal.released = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(terminal.process.pid, 9)

    async def create_elicitation(self, message: str, mode: Any, **_kw: Any) -> Any:
        asked = mode.model_dump(mode="json", by_alias=True, exclude_none=True)
        self.elicitations.append({"message": message, **asked})
        if self.elicitation_answer is None:
            return acp.DeclineElicitationResponse(action="decline")
        return acp.AcceptElicitationResponse(action="accept", content=self.elicitation_answer)

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    # -- for the tests ------------------------------------------------------------------

    def updates_before_response(self, method: str) -> list[Update]:
        """The updates that arrived between the last `method` request and its answer."""
        asked = [
            (i, m["id"])
            for i, (way, m) in enumerate(self.wire)
            if way == "outgoing" and m.get("method") == method
        ]
        start, request_id = asked[-1]
        for end in range(start + 1, len(self.wire)):
            way, message = self.wire[end]
            if way == "incoming" and message.get("id") == request_id and "method" not in message:
                break
        else:
            raise AssertionError(f"no answer to {method}")
        return [
            m["params"]["update"]
            for way, m in self.wire[start:end]
            if way == "incoming" and m.get("method") == "session/update"
        ]

    def of(self, session_id: str, kind: str | None = None) -> list[Update]:
        """The session's updates (of one `sessionUpdate` kind), in order."""
        return [
            u
            for s, u in self.updates
            if s == session_id and (kind is None or u["sessionUpdate"] == kind)
        ]

    async def wait_for(self, check: Callable[[], Any], timeout: float = 20.0) -> Any:
        """Wait until `check()` gives something true (re-checked on each update)."""
        async with asyncio.timeout(timeout):
            while not (found := check()):
                self._changed.clear()
                await self._changed.wait()
        return found

    async def next_permission(self, timeout: float = 20.0) -> asyncio.Future[dict[str, Any]]:
        async with asyncio.timeout(timeout):
            return await self.pending_permissions.get()


def agent_text(client: EditorClient, session_id: str) -> str:
    return "".join(
        u["content"]["text"]
        for u in client.of(session_id, "agent_message_chunk")
        if u["content"]["type"] == "text"
    )


def client_capabilities(
    fs: bool = True, terminal: bool = False, elicitation: bool = False
) -> acp.ClientCapabilities:
    return acp.ClientCapabilities(
        fs=acp.FileSystemCapabilities(read_text_file=fs, write_text_file=fs),
        terminal=terminal,
        elicitation=acp.ElicitationCapabilities(form=acp.ElicitationFormCapabilities())
        if elicitation
        else None,
    )


@contextlib.asynccontextmanager
async def acp_agent(
    client: EditorClient,
    fs: bool = True,
    terminal: bool = False,
    elicitation: bool = False,
    **env: str,
) -> AsyncIterator[tuple[Any, acp.InitializeResponse]]:
    """`agentls acp` as a subprocess, initialized with the given client capabilities."""
    environment = {**os.environ, **env}
    async with spawn_agent_process(
        client,
        sys.executable,
        "-m",
        "agentls",
        "acp",
        env=environment,
        observers=[client.observe],
        # elicitation/create is unstable ACP: a client offering it takes the unstable set.
        use_unstable_protocol=True,
    ) as (conn, process):
        client.process = process
        answer = await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=client_capabilities(fs, terminal, elicitation),
            client_info=acp.Implementation(name="tests", version="1"),
        )
        yield conn, answer


def scripted(tmp_path: Path, script: list[dict[str, Any]], **params: Any) -> dict[str, Any]:
    """`_meta` for session/new: the scripted model playing `script`, requests logged."""
    return {
        "agentls": {
            "provider": "scripted",
            "script": str(write_script(tmp_path / "script.jsonl", script)),
            "requestLog": str(tmp_path / "requests.jsonl"),
            **params,
        }
    }


def requests_log(tmp_path: Path) -> list[dict[str, Any]]:
    log = tmp_path / "requests.jsonl"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]
