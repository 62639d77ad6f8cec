"""Raw bytes at the daemon: malformed JSON and odd requests are answered, never fatal."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from typing import Any


async def spawn_daemon(
    env: dict[str, str] | None = None, stderr: bool = False
) -> asyncio.subprocess.Process:
    """`agentls --stdio` with pipes, in this environment plus `env`."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "agentls",
        "--stdio",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE if stderr else None,
        env={**os.environ, **(env or {})},
    )


class RawPipe:
    """The daemon over stdio with hand-made frames."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(cls, env: dict[str, str] | None = None, stderr: bool = False) -> RawPipe:
        process = await spawn_daemon(env, stderr)
        return cls(process)

    def send_bytes(self, body: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def send(self, message: Any) -> None:
        self.send_bytes(json.dumps(message).encode())

    async def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        length = 0
        while True:
            # The first read waits out the daemon's start (cold imports can be slow).
            line = await asyncio.wait_for(self.process.stdout.readline(), 60)
            if line in (b"\r\n", b""):
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        body = await self.process.stdout.readexactly(length)
        message: dict[str, Any] = json.loads(body)
        return message

    async def response_to(self, msg_id: Any) -> dict[str, Any]:
        while True:
            message = await self.receive()
            if "method" not in message and message.get("id") == msg_id:
                return message

    async def close(self) -> None:
        self.send({"jsonrpc": "2.0", "id": "bye", "method": "shutdown"})
        await self.response_to("bye")
        self.send({"jsonrpc": "2.0", "method": "exit"})
        await asyncio.wait_for(self.process.wait(), 30)


async def test_malformed_input_is_answered_and_the_daemon_keeps_serving() -> None:
    pipe = await RawPipe.start()
    pipe.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
    init = await pipe.response_to(1)
    assert init["result"]["capabilities"]["experimental"]["agentls"]["protocolVersion"] == 1
    pipe.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    pipe.send_bytes(b'{"jsonrpc": "2.0", "id": 2, "method": ')
    parse_error = await pipe.response_to(None)
    assert parse_error["error"]["code"] == -32700

    pipe.send({"jsonrpc": "2.0", "id": 3, "method": "agent/newSession"})
    no_params = await pipe.response_to(3)
    assert "error" in no_params or "result" in no_params

    pipe.send({"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {"capabilities": 7}})
    invalid = await pipe.response_to(4)
    assert invalid["error"]["code"] == -32602

    pipe.send({"jsonrpc": "2.0", "id": 5, "method": "agent/abort", "params": [1, 2]})
    positional = await pipe.response_to(5)
    assert positional["error"]["code"] == -32602

    pipe.send({"jsonrpc": "2.0", "id": 6, "method": "agent/abort", "params": {"sessionId": "x"}})
    unknown = await pipe.response_to(6)
    assert unknown["error"]["code"] == 1001
    assert "traceback" not in json.dumps(unknown)

    await pipe.close()
    assert pipe.process.returncode == 0


def test_the_daemon_path_to_initialize_imports_no_provider_sdk() -> None:
    probe = (
        "import sys, agentls.cli, agentls.lsp.server;"
        "server = agentls.lsp.server.build_server();"
        "print(sorted(m for m in ('anthropic', 'openai') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_every_method_of_the_one_table_has_its_models_and_its_handler() -> None:
    import inspect

    from agentls import api, methods
    from agentls.lsp.handlers import AgentHandlers
    from agentls.lsp.server import AGENT_REQUESTS

    assert AGENT_REQUESTS == tuple(methods.REQUESTS) == tuple(api.REQUESTS)
    for name, method in methods.REQUESTS.items():
        params, result = api.REQUESTS[name]
        assert (params.__name__, result.__name__) == (method.params, method.result)
        assert inspect.iscoroutinefunction(getattr(AgentHandlers, method.handler)), name


async def test_expected_request_errors_leave_no_traceback_on_stderr() -> None:
    pipe = await RawPipe.start({"AGENTLS_LOG_LEVEL": "INFO"}, stderr=True)
    process = pipe.process
    pipe.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
    await pipe.response_to(1)
    pipe.send({"jsonrpc": "2.0", "id": 2, "method": "agent/abort", "params": {"sessionId": 5}})
    assert (await pipe.response_to(2))["error"]["code"] == -32602
    pipe.send({"jsonrpc": "2.0", "id": 3, "method": "agent/abort", "params": {"sessionId": "x"}})
    assert (await pipe.response_to(3))["error"]["code"] == 1001
    await pipe.close()
    assert process.stderr is not None
    stderr = (await process.stderr.read()).decode()
    assert "Traceback" not in stderr
    answered = [line for line in stderr.splitlines() if "answered" in line]
    assert len(answered) == 2, stderr
