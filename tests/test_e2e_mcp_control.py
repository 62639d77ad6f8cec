"""The user's control of a session's MCP servers over stdio, against the real fixture
server: agent/restartMcpServer (a running server, and one that failed and gave up) and
agent/setMcpServerEnabled (its tools leave and come back; the choice is remembered)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from agent_client import AgentClient, read_requests
from test_e2e_mcp import SERVER, SERVERS, call, ready, results, settings, text_of


async def status(client: AgentClient, session: str, wanted: str, after: int = 0) -> dict[str, Any]:
    """The session's first mcp_status of `wanted` among the events from index `after`."""
    return await client.events.wait_for(
        lambda e: (
            e["type"] == "mcp_status"
            and e["sessionId"] == session
            and e["status"] == wanted
            and client.events.items.index(e) >= after
        ),
        timeout=60,
    )


async def listed(client: AgentClient, session: str) -> dict[str, Any]:
    servers = (await client.request("agent/listMcpServers", {"sessionId": session}))["servers"]
    (server,) = servers
    return server  # type: ignore[no-any-return]


async def test_a_running_server_is_restarted(client: AgentClient, tmp_path: Path) -> None:
    settings(tmp_path, permissions={"allow": ["mcp__fx"]})
    script = [call("mcp__fx__pid"), {"text": "one"}, call("mcp__fx__pid"), {"text": "two"}]
    session, log = await client.scripted_session(tmp_path, script, mcpServers=SERVERS)
    await ready(client, session)
    await client.run_turn(session, "pid?")
    mark = len(client.events.items)
    await client.request("agent/restartMcpServer", {"sessionId": session, "name": "fx"})
    stopped = await status(client, session, "stopped", mark)
    again = await status(client, session, "ready", mark)
    assert client.events.items.index(stopped) < client.events.items.index(again)
    assert again["attempt"] == 2 and again["toolCount"] == 8
    await client.run_turn(session, "pid again?")
    requests = read_requests(log)
    first, second = text_of(results(requests[1])["c1"]), text_of(results(requests[3])["c1"])
    assert first.isdigit() and second.isdigit() and first != second
    assert (await listed(client, session))["attempts"] == 2


async def test_a_server_that_gave_up_is_restarted(client: AgentClient, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.write_text("", encoding="utf-8")
    # The fixture server, unless the marker file is there (then it exits at once).
    starter = (
        "import os, runpy, sys\n"
        f"if os.path.exists({str(broken)!r}): sys.exit('broken on purpose')\n"
        f"runpy.run_path({str(SERVER)!r}, run_name='__main__')\n"
    )
    servers = [{"name": "fx", "command": sys.executable, "args": ["-c", starter]}]
    session, _log = await client.scripted_session(tmp_path, [{"text": "ok"}], mcpServers=servers)
    failed = await client.events.wait_for(
        lambda e: e["type"] == "mcp_status" and "gave up" in (e.get("error") or ""), timeout=60
    )
    assert failed["status"] == "failed" and "broken on purpose" in failed["error"]
    broken.unlink()
    mark = len(client.events.items)
    await client.request("agent/restartMcpServer", {"sessionId": session, "name": "fx"})
    again = await status(client, session, "ready", mark)
    assert again["attempt"] == 4
    server = await listed(client, session)
    assert server["status"] == "ready" and len(server["tools"]) == 8


async def test_disabling_takes_the_tools_away_and_is_remembered(
    client: AgentClient, tmp_path: Path
) -> None:
    script = [{"text": "without"}, {"text": "with"}]
    session, log = await client.scripted_session(tmp_path, script, mcpServers=SERVERS)
    await ready(client, session)
    params = {"sessionId": session, "name": "fx", "enabled": False}
    await client.request("agent/setMcpServerEnabled", params)
    await status(client, session, "disabled")
    server = await listed(client, session)
    assert (server["status"], server["tools"]) == ("disabled", [])
    local = tmp_path / "ws" / ".agentls" / "settings.local.json"
    assert json.loads(local.read_text())["disabledMcpServers"] == ["fx"]
    assert "settings.local.json" in (local.parent / ".gitignore").read_text()
    await client.run_turn(session, "tools?")
    assert not [t for t in read_requests(log)[0]["tools"] if t.startswith("mcp__")]
    with pytest.raises(JsonRpcException, match="is disabled") as raised:
        await client.request("agent/restartMcpServer", {"sessionId": session, "name": "fx"})
    assert raised.value.data == {"field": "name"}

    # The project's next session leaves it off: it is never started.
    other, _other_log = await client.scripted_session(tmp_path, [{"text": "x"}], mcpServers=SERVERS)
    assert (await listed(client, other))["status"] == "disabled"

    mark = len(client.events.items)
    await client.request("agent/setMcpServerEnabled", {**params, "enabled": True})
    await status(client, session, "ready", mark)
    await client.run_turn(session, "tools now?")
    assert "mcp__fx__echo" in read_requests(log)[1]["tools"]
    assert "disabledMcpServers" not in json.loads(local.read_text())
    starts = [e for e in client.events.items if e.get("sessionId") == other]
    assert not [e for e in starts if e["type"] == "mcp_status" and e["status"] == "starting"]


async def test_an_unknown_server_is_invalid_params(client: AgentClient, tmp_path: Path) -> None:
    session, _log = await client.scripted_session(tmp_path, [{"text": "x"}], mcpServers=SERVERS)
    for method, extra in (
        ("agent/restartMcpServer", {}),
        ("agent/setMcpServerEnabled", {"enabled": False}),
    ):
        with pytest.raises(JsonRpcException) as raised:
            await client.request(method, {"sessionId": session, "name": "nope", **extra})
        assert raised.value.code == -32602 and raised.value.data == {"field": "name"}
