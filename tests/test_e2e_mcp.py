"""MCP servers as tools, over stdio, against a real MCP server written with the official SDK
(tests/mcp_fixture_server.py), reached over stdio and over streamable HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from agent_client import AgentClient, read_requests

SERVER = Path(__file__).parent / "mcp_fixture_server.py"
FIXTURE = {"command": sys.executable, "args": [str(SERVER)]}
SERVERS = [{"name": "fx", **FIXTURE}]
TOOLS = ["echo", "add", "pid", "count", "fail", "picture", "crash", "sleep"]


def settings(tmp_path: Path, **values: Any) -> None:
    folder = tmp_path / "ws" / ".agentls"
    folder.mkdir(exist_ok=True)
    (folder / "settings.json").write_text(json.dumps(values), encoding="utf-8")


def call(name: str, call_id: str = "c1", **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": name, "input": arguments}]}


def results(request: dict[str, Any]) -> dict[str, Any]:
    return {
        b["tool_use_id"]: b
        for b in request["messages"][-1]["content"]
        if b["type"] == "tool_result"
    }


def text_of(result: dict[str, Any]) -> str:
    content = result["content"]
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content)


async def ready(client: AgentClient, session: str, server: str = "fx") -> dict[str, Any]:
    return await client.events.wait_for(
        lambda e: (
            e["type"] == "mcp_status"
            and e["sessionId"] == session
            and e["server"] == server
            and e["status"] == "ready"
        ),
        timeout=40,
    )


async def test_a_server_is_started_in_the_background_and_its_tools_are_called(
    client: AgentClient, tmp_path: Path
) -> None:
    script = [call("mcp__fx__add", a=2, b=3), {"text": "five"}]
    started = time.monotonic()
    session, log = await client.scripted_session(tmp_path, script, mcpServers=SERVERS)
    answered_in = time.monotonic() - started
    # newSession does not wait for the server (which takes about a second to start).
    assert not [e for e in client.events.of_type("mcp_status") if e["status"] == "ready"]
    status = await ready(client, session)
    assert status["toolCount"] == len(TOOLS) and status["transport"] == "stdio"
    assert "turnId" not in status and status["attempt"] == 1
    assert answered_in < time.monotonic() - started

    answering = asyncio.create_task(client.answer_permission(session, "allow_once"))
    turn, done = await client.run_turn(session, "add 2 and 3")
    request = await answering
    assert done["stopReason"] == "end_turn"
    assert request["title"] == 'fx: add: {"a": 2, "b": 3}'
    always = next(o for o in request["options"] if o["optionId"] == "allow_always")
    assert always["rule"] == "mcp__fx__add"
    first, second = read_requests(log)
    assert [f"mcp__fx__{t}" for t in TOOLS] == first["tools"][-len(TOOLS) - 2 : -2]
    assert first["tools"][-2:] == ["ListMcpResources", "ReadMcpResource"]
    assert text_of(results(second)["c1"]) == "5"
    completed = [e for e in client.events.of_turn(turn) if e["type"] == "tool_call_update"]
    assert completed[-1]["status"] == "completed"


async def test_a_projects_own_servers_wait_for_the_users_trust_which_is_remembered(
    client: AgentClient, tmp_path: Path
) -> None:
    (tmp_path / "ws" / ".mcp.json").write_text(json.dumps({"mcpServers": {"fx": FIXTURE}}))
    script = [call("mcp__fx__echo", text="trusted"), {"text": "ok"}, {"text": "again"}]
    session, log = await client.scripted_session(
        tmp_path, script, permissionMode="bypassPermissions"
    )
    listed = await client.request("agent/listMcpServers", {"sessionId": session})
    assert [(s["name"], s["status"]) for s in listed["servers"]] == [("fx", "awaiting_approval")]
    answering = asyncio.create_task(client.answer_permission(session, "allow_always"))
    _turn, done = await client.run_turn(session, "echo")
    asked = await answering
    assert done["stopReason"] == "end_turn"
    assert asked["title"].startswith("Start this project's MCP servers? They run with your")
    assert str(SERVER) in asked["title"] and asked["toolCallId"].startswith("mcp_")
    assert asked["options"][0]["name"] == "Trust this project's MCP servers"
    # The turn waited for the approved server: its first request offers the tools.
    assert text_of(results(read_requests(log)[1])["c1"]) == "echo: trusted"

    # Remembered: the next session starts them at once, without asking.
    second, _log = await client.scripted_session(tmp_path, [{"text": "hi"}])
    await ready(client, second)
    turn, _done = await client.run_turn(second, "hi")
    assert not [e for e in client.events.of_turn(turn) if e["type"] == "permission_request"]

    # A changed file is asked about again; "never" is remembered too.
    changed = {"mcpServers": {"fx": {**FIXTURE, "env": {"MODE": "new"}}}}
    (tmp_path / "ws" / ".mcp.json").write_text(json.dumps(changed))
    third, _log = await client.scripted_session(tmp_path, [{"text": "a"}, {"text": "b"}])
    answering = asyncio.create_task(client.answer_permission(third, "reject_always"))
    await client.run_turn(third, "a")
    await answering
    listed = await client.request("agent/listMcpServers", {"sessionId": third})
    assert listed["servers"][0]["status"] == "stopped"
    assert "did not approve" in listed["servers"][0]["error"]
    fourth, _log = await client.scripted_session(tmp_path, [{"text": "a"}])
    turn, _done = await client.run_turn(fourth, "a")
    assert not [e for e in client.events.of_turn(turn) if e["type"] == "permission_request"]
    listed = await client.request("agent/listMcpServers", {"sessionId": fourth})
    assert "chose never to start" in listed["servers"][0]["error"]


async def test_rules_name_a_server_or_one_of_its_tools_and_read_only_calls_still_ask(
    client: AgentClient, tmp_path: Path
) -> None:
    settings(
        tmp_path,
        permissions={"allow": ["mcp__fx__*"], "deny": ["mcp__fx__pid"]},
    )
    script = [
        {
            "tool_calls": [
                {"id": "e", "name": "mcp__fx__echo", "input": {"text": "hi"}},
                {"id": "p", "name": "mcp__fx__pid", "input": {}},
                {"id": "bad", "name": "mcp__fx__add", "input": {"a": "two"}},
            ]
        },
        {"text": "done"},
    ]
    session, log = await client.scripted_session(tmp_path, script, mcpServers=SERVERS)
    await ready(client, session)
    turn, done = await client.run_turn(session, "go")
    assert done["stopReason"] == "end_turn"
    assert not [e for e in client.events.of_turn(turn) if e["type"] == "permission_request"]
    got = results(read_requests(log)[1])
    assert text_of(got["e"]) == "echo: hi" and not got["e"]["is_error"]
    assert got["p"]["is_error"] and "Denied by rule mcp__fx__pid" in text_of(got["p"])
    # Checked against the server's schema before anyone is asked.
    bad = text_of(got["bad"])
    assert got["bad"]["is_error"] and "'b' is a required property" in bad
    assert "'two' is not of type 'integer'" in bad

    # Without an allow rule, a tool the server marks read-only still asks.
    settings(tmp_path)
    second, _log = await client.scripted_session(
        tmp_path, [call("mcp__fx__echo", text="x"), {"text": "ok"}], mcpServers=SERVERS
    )
    await ready(client, second)
    answering = asyncio.create_task(client.answer_permission(second, "reject_once"))
    _turn, done = await client.run_turn(second, "echo")
    assert (await answering)["toolCallId"] == "c1" and done["stopReason"] == "end_turn"


async def test_progress_errors_images_and_resources_reach_the_model(
    client: AgentClient, tmp_path: Path
) -> None:
    settings(tmp_path, permissions={"allow": ["mcp__fx"]})
    script = [
        {
            "tool_calls": [
                {"id": "n", "name": "mcp__fx__count", "input": {"steps": 3}},
                {"id": "f", "name": "mcp__fx__fail", "input": {"reason": "testing"}},
                {"id": "i", "name": "mcp__fx__picture", "input": {}},
                {"id": "l", "name": "ListMcpResources", "input": {}},
                {
                    "id": "r",
                    "name": "ReadMcpResource",
                    "input": {"server": "fx", "uri": "note://readme"},
                },
                {"id": "x", "name": "ReadMcpResource", "input": {"server": "nope", "uri": "a://b"}},
            ]
        },
        {"text": "done"},
    ]
    session, log = await client.scripted_session(tmp_path, script, mcpServers=SERVERS)
    await ready(client, session)
    turn, done = await client.run_turn(session, "go")
    assert done["stopReason"] == "end_turn"
    progress = [
        e["content"]
        for e in client.events.of_turn(turn)
        if e["type"] == "tool_call_update" and e["toolCallId"] == "n" and e.get("content")
    ]
    assert progress[:3] == ["1/3 step 1", "2/3 step 2", "3/3 step 3"]
    got = results(read_requests(log)[1])
    assert text_of(got["n"]) == "counted to 3"
    assert got["f"]["is_error"] and text_of(got["f"]).endswith("failed on purpose: testing")
    picture = got["i"]["content"]
    assert [p["type"] for p in picture] == ["text", "image"]
    assert text_of(got["l"]) == "fx note://readme readme (text/plain)"
    assert 'uri="note://readme"' in text_of(got["r"])
    assert "The fixture's readme." in text_of(got["r"])
    assert got["x"]["is_error"] and "the servers are: fx" in text_of(got["x"])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie has exited; only its parent's wait is missing.
    with contextlib.suppress(OSError), open(f"/proc/{pid}/stat") as stat:
        return stat.read().split()[2] != "Z"
    return True


async def test_a_crashed_server_is_restarted_and_the_turn_goes_on(
    client: AgentClient, tmp_path: Path
) -> None:
    settings(tmp_path, permissions={"allow": ["mcp__fx"]})
    script = [
        call("mcp__fx__pid", "p1"),
        call("mcp__fx__crash", "boom"),
        call("mcp__fx__pid", "p2"),
        {"text": "survived"},
    ]
    session, log = await client.scripted_session(tmp_path, script, mcpServers=SERVERS)
    await ready(client, session)
    restarted = asyncio.create_task(
        client.events.wait_for(
            lambda e: e["type"] == "mcp_status" and e["status"] == "ready" and e["attempt"] == 2,
            timeout=40,
        )
    )
    _turn, done = await client.run_turn(
        session,
        "go",
    )
    assert done["stopReason"] == "end_turn"
    await restarted
    failed = next(e for e in client.events.of_type("mcp_status") if e["status"] == "failed")
    assert "the server closed the connection" in failed["error"]
    assert "fixture: crashing now" in failed["error"]
    requests = read_requests(log)
    first_pid = int(text_of(results(requests[1])["p1"]))
    crash = results(requests[2])["boom"]
    assert crash["is_error"] and "closed the connection during the call" in text_of(crash)
    # The next call waited for the restart and reached a new process.
    second_pid = int(text_of(results(requests[3])["p2"]))
    assert second_pid != first_pid and not _alive(first_pid)

    await client.request("agent/closeSession", {"sessionId": session})
    deadline = time.monotonic() + 10
    while _alive(second_pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert not _alive(second_pid)
    assert await client.events.wait_for(
        lambda e: e["type"] == "mcp_status" and e["status"] == "stopped"
    )


async def test_a_server_that_cannot_start_is_given_up_and_never_blocks_a_turn(
    client: AgentClient, tmp_path: Path
) -> None:
    broken = {"command": sys.executable, "args": ["-c", "import sys; sys.exit('no config')"]}
    servers = [{"name": "broken", **broken}, {"name": "missing", "command": "/no/such/mcp"}]
    session, log = await client.scripted_session(
        tmp_path, [{"text": "still here"}], mcpServers=servers
    )
    _turn, done = await client.run_turn(session, "hello")
    assert done["stopReason"] == "end_turn"
    assert read_requests(log)[0]["tools"][-1] == "Task"
    await client.events.wait_for(
        lambda e: (
            e["type"] == "mcp_status"
            and e["server"] == "broken"
            and "gave up after 3 tries" in e.get("error", "")
        ),
        timeout=40,
    )
    listed = await client.request("agent/listMcpServers", {"sessionId": session})
    by_name = {s["name"]: s for s in listed["servers"]}
    assert by_name["broken"]["status"] == "failed" and "no config" in by_name["broken"]["error"]
    assert by_name["missing"]["status"] == "failed"
    assert "its command was not found" in by_name["missing"]["error"]


@contextlib.contextmanager
def http_server() -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


async def test_an_http_server_from_new_session_is_listed_with_its_resources_and_prompts(
    client: AgentClient, tmp_path: Path
) -> None:
    with http_server() as url:
        servers = [
            {
                "name": "web",
                "type": "http",
                "url": url,
                "headers": [{"name": "X-Token", "value": "t"}],
            }
        ]
        session, log = await client.scripted_session(
            tmp_path,
            [call("mcp__web__echo", text="over http"), {"text": "ok"}],
            mcpServers=servers,
            permissionMode="bypassPermissions",
        )
        status = await ready(client, session, "web")
        assert status["transport"] == "http"
        _turn, done = await client.run_turn(session, "go")
        assert done["stopReason"] == "end_turn"
        assert text_of(results(read_requests(log)[1])["c1"]) == "echo: over http"
        listed = await client.request("agent/listMcpServers", {"sessionId": session})
        (web,) = listed["servers"]
        assert web["source"] == "agent/newSession" and web["serverVersion"] == "1.2.3"
        echo = next(t for t in web["tools"] if t["serverName"] == "echo")
        assert echo == {
            "name": "mcp__web__echo",
            "serverName": "echo",
            "description": "Says the text back.",
            "readOnly": True,
        }
        assert web["resources"] == [
            {"uri": "note://readme", "name": "readme", "mimeType": "text/plain"}
        ]
        assert web["prompts"][0]["name"] == "review"
        assert web["prompts"][0]["arguments"] == [{"name": "code", "required": True}]


async def test_a_resumed_session_starts_its_servers_again(
    client: AgentClient, tmp_path: Path
) -> None:
    session, _log = await client.scripted_session(
        tmp_path, [{"text": "one"}, {"text": "two"}], mcpServers=[{"name": "fx", **FIXTURE}]
    )
    await ready(client, session)
    await client.request("agent/closeSession", {"sessionId": session})
    await client.request("agent/resumeSession", {"sessionId": session})
    await client.events.wait_for(
        lambda e: (
            e["type"] == "mcp_status"
            and e["status"] == "ready"
            and e["sessionId"] == session
            and e["seq"] > 0
            and len([x for x in client.events.of_type("mcp_status") if x["status"] == "ready"]) == 2
        ),
        timeout=40,
    )


async def test_bad_server_settings_are_refused_with_the_field(
    client: AgentClient, tmp_path: Path
) -> None:
    with pytest.raises(JsonRpcException) as bad:
        await client.scripted_session(
            tmp_path, [{"text": "x"}], mcpServers=[{"name": "a b", "command": "x"}]
        )
    assert bad.value.code == -32602 and "a server name is" in str(bad.value)
    with pytest.raises(JsonRpcException) as bad:
        await client.scripted_session(
            tmp_path, [{"text": "x"}], mcpServers=[{"name": "h", "type": "http", "url": "ftp://x"}]
        )
    assert "needs a url starting http://" in str(bad.value)
    with pytest.raises(JsonRpcException) as unknown:
        await client.request("agent/listMcpServers", {"sessionId": "sess_nope"})
    assert unknown.value.code == 1001


async def test_a_servers_prompts_are_slash_commands(client: AgentClient, tmp_path: Path) -> None:
    session, log = await client.scripted_session(
        tmp_path, [{"text": "Looks fine."}], mcpServers=SERVERS
    )
    await ready(client, session)
    announced = await client.events.wait_for(
        lambda e: (
            e["type"] == "available_commands"
            and any(c["name"] == "mcp__fx__review" for c in e["commands"])
        )
    )
    review = next(c for c in announced["commands"] if c["name"] == "mcp__fx__review")
    assert review == {
        "name": "mcp__fx__review",
        "description": "Review a piece of code.",
        "argumentHint": "<code>",
        "source": "mcp",
    }
    _turn, done = await client.run_turn(session, "/mcp__fx__review x = 1")
    assert done["stopReason"] == "end_turn"
    sent = read_requests(log)[0]["messages"][-1]["content"]
    assert {"type": "text", "text": "Please review this code:\nx = 1"} in sent
    with pytest.raises(JsonRpcException) as missing:
        await client.request(
            "agent/submitMessage", {"sessionId": session, "text": "/mcp__fx__review"}
        )
    assert missing.value.code == -32602 and "needs code" in str(missing.value)
