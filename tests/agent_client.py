"""A pytest-lsp client for the agentls daemon: events collected, turns awaited."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import register_lsp_features

from agentls.lsp.converter import json_converter

Event = dict[str, Any]


class EventLog:
    """Every agent/event the daemon sent, with waiters for the ones a test needs."""

    def __init__(self) -> None:
        self.items: list[Event] = []
        self._waiters: list[tuple[Callable[[Event], bool], asyncio.Future[Event]]] = []

    def add(self, event: Event) -> None:
        self.items.append(event)
        for waiter in list(self._waiters):
            predicate, future = waiter
            if not future.done() and predicate(event):
                future.set_result(event)
                self._waiters.remove(waiter)

    async def wait_for(self, predicate: Callable[[Event], bool], timeout: float = 20) -> Event:
        for event in self.items:
            if predicate(event):
                return event
        future: asyncio.Future[Event] = asyncio.get_running_loop().create_future()
        self._waiters.append((predicate, future))
        return await asyncio.wait_for(future, timeout)

    # A whole turn may start an MCP server or a sub-agent: room for a slow, loaded machine.
    async def turn_completed(self, turn_id: str, timeout: float = 60) -> Event:
        return await self.wait_for(
            lambda e: e["type"] == "turn_completed" and e["turnId"] == turn_id, timeout
        )

    def of_turn(self, turn_id: str) -> list[Event]:
        return [e for e in self.items if e.get("turnId") == turn_id]

    def of_type(self, kind: str) -> list[Event]:
        return [e for e in self.items if e["type"] == kind]


class AgentClient(LanguageClient):
    """A language client that also understands agentls's events and edits."""

    def __init__(self) -> None:
        super().__init__(converter_factory=json_converter)
        self.events = EventLog()
        self.applied_edits: list[lsp.ApplyWorkspaceEditParams] = []
        self.answered_requests: set[str] = set()  # by answer_permission
        self.apply_edit_result = True
        # Set to play an editor: it gets the edit and answers for the client.
        self.edit_handler: Callable[[lsp.ApplyWorkspaceEditParams], bool] | None = None
        register_lsp_features(self)

        @self.feature("agent/event")
        def on_event(params: Event) -> None:
            self.events.add(params)

        @self.feature(lsp.WORKSPACE_APPLY_EDIT)
        def on_apply_edit(params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
            self.applied_edits.append(params)
            if self.edit_handler is not None:
                return lsp.ApplyWorkspaceEditResult(applied=self.edit_handler(params))
            if not self.apply_edit_result:
                return lsp.ApplyWorkspaceEditResult(
                    applied=False, failure_reason="rejected by test"
                )
            return lsp.ApplyWorkspaceEditResult(applied=True)

    async def request(self, method: str, params: Any) -> Any:
        return await self.protocol.send_request_async(method, params)

    async def new_session(self, cwd: Path, **params: Any) -> Event:
        result: Event = await self.request("agent/newSession", {"cwd": str(cwd), **params})
        return result

    async def scripted_session(
        self, tmp_path: Path, script: list[dict[str, Any]], **params: Any
    ) -> tuple[str, Path]:
        """A session in `tmp_path/ws` on the scripted model playing `script`; its id and
        the file its model requests are logged to."""
        log = tmp_path / "requests.jsonl"
        result = await self.new_session(
            tmp_path / "ws",
            provider="scripted",
            script=str(write_script(tmp_path / "script.jsonl", script)),
            requestLog=str(log),
            **params,
        )
        session_id: str = result["sessionId"]
        return session_id, log

    async def answer_permission(self, session_id: str, option: str) -> Event:
        """Wait for the session's next permission request and answer it with `option`."""
        # Past events are matched first: skip the requests answered here already.
        request = await self.events.wait_for(
            lambda e: (
                e["type"] == "permission_request"
                and e["sessionId"] == session_id
                and e["requestId"] not in self.answered_requests
            )
        )
        self.answered_requests.add(request["requestId"])
        await self.request(
            "agent/respondPermission",
            {"sessionId": session_id, "requestId": request["requestId"], "optionId": option},
        )
        return request

    async def run_turn(self, session_id: str, text: str, **params: Any) -> tuple[str, Event]:
        """Submit a message and wait for its turn_completed."""
        result = await self.request(
            "agent/submitMessage", {"sessionId": session_id, "text": text, **params}
        )
        turn_id: str = result["turnId"]
        return turn_id, await self.events.turn_completed(turn_id)


def daemon_config(**env: str) -> ClientServerConfig:
    return ClientServerConfig(
        server_command=[sys.executable, "-m", "agentls", "--stdio"],
        client_factory=AgentClient,
        server_env={**os.environ, **env},
    )


def capabilities(apply_edit: bool) -> lsp.ClientCapabilities:
    workspace = lsp.WorkspaceClientCapabilities(
        apply_edit=apply_edit,
        workspace_edit=lsp.WorkspaceEditClientCapabilities(
            document_changes=True,
            resource_operations=[lsp.ResourceOperationKind.Create],
        ),
    )
    return lsp.ClientCapabilities(workspace=workspace)


def write_script(path: Path, entries: list[dict[str, Any]]) -> Path:
    """A scripted-model script file."""
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return path


def read_requests(log: Path) -> list[dict[str, Any]]:
    """The model requests the scripted provider logged."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]


@contextlib.asynccontextmanager
async def running_daemon(
    root: Path, apply_edit: bool = True, **env: str
) -> AsyncIterator[AgentClient]:
    """A daemon started with extra environment (for settings known only at test time)."""
    client = await daemon_config(**env).start()
    assert isinstance(client, AgentClient)
    params = lsp.InitializeParams(capabilities=capabilities(apply_edit), root_uri=root.as_uri())
    await client.initialize_session(params)
    try:
        yield client
    finally:
        await client.shutdown_session()
        await client.stop()
