"""Nothing outlives a killed daemon: a SIGKILLed `agentls --stdio` leaves no Bash command,
background shell, hook or MCP server child running (its watchdog kills their groups)."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
import sys
from pathlib import Path

from agent_client import AgentClient, running_daemon
from orphans import seconds_until_none_marked, until_marked

FIXTURE = Path(__file__).parent / "mcp_fixture_server.py"


def sleep_marker() -> str:
    """A `sleep` duration no other process on the machine uses: it names our processes."""
    return f"30.{secrets.randbelow(10**9):09d}"


async def sigkill(client: AgentClient) -> None:
    process = client._server
    assert process is not None
    os.kill(process.pid, signal.SIGKILL)
    await asyncio.wait_for(process.wait(), 10)
    client.capabilities = None  # the daemon is gone: nothing to shut down


async def test_bash_and_background_shells_die_with_a_sigkilled_daemon(tmp_path: Path) -> None:
    marker = sleep_marker()
    # `; echo` keeps bash from exec-ing sleep: bash and its child must both go.
    script = [
        {
            "tool_calls": [
                {
                    "id": "bg",
                    "name": "Bash",
                    "input": {"command": f"sleep {marker}; echo bg", "run_in_background": True},
                }
            ]
        },
        {"tool_calls": [{"id": "fg", "name": "Bash", "input": {"command": f"sleep {marker}; :"}}]},
    ]
    (tmp_path / "ws").mkdir()
    async with running_daemon(tmp_path) as client:
        session, _log = await client.scripted_session(
            tmp_path, script, permissionMode="bypassPermissions"
        )
        await client.request("agent/submitMessage", {"sessionId": session, "text": "go"})
        await client.events.wait_for(
            lambda e: (
                e["type"] == "tool_call_update"
                and e.get("toolCallId") == "fg"
                and e["status"] == "in_progress"
            )
        )
        await until_marked(marker, 4)
        await sigkill(client)
    took = await seconds_until_none_marked(marker)
    print(f"bash and background shell gone {took:.3f} s after the SIGKILL")


async def test_hooks_and_mcp_server_children_die_with_a_sigkilled_daemon(
    tmp_path: Path,
) -> None:
    marker = sleep_marker()
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "ws").mkdir()
    hook = {"hooks": [{"type": "command", "command": f"sleep {marker}; true"}]}
    (home / "settings.json").write_text(json.dumps({"hooks": {"UserPromptSubmit": [hook]}}))
    # A server whose child ignores the end of stdin (a watcher, a language server it runs).
    server = {
        "name": "fx",
        "command": "/bin/bash",
        "args": ["-c", f"sleep {marker} & exec {sys.executable} {FIXTURE}"],
    }
    async with running_daemon(tmp_path, AGENTLS_HOME=str(home)) as client:
        session, _log = await client.scripted_session(
            tmp_path, [{"text": "ok"}], mcpServers=[server]
        )
        await client.events.wait_for(
            lambda e: e["type"] == "mcp_status" and e["status"] == "ready", timeout=40
        )
        await client.request("agent/submitMessage", {"sessionId": session, "text": "go"})
        # The server's sleep, and the hook's shell with its sleep.
        await until_marked(marker, 3)
        await sigkill(client)
    took = await seconds_until_none_marked(marker)
    print(f"hook and MCP server child gone {took:.3f} s after the SIGKILL")
