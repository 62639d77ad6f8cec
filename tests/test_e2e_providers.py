"""A two-turn tool loop through the daemon on each real provider SDK, against a replay server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from agent_client import running_daemon
from replay_server import (
    ReplayServer,
    ScriptedResponse,
    ToolCall,
    anthropic_error,
    anthropic_text_turn,
    anthropic_tool_turn,
    openai_text_turn,
    openai_tool_turn,
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text("PORT = 8000\n", encoding="utf-8")
    return tmp_path


@pytest.fixture
def replay() -> Iterator[ReplayServer]:
    server = ReplayServer().start()
    yield server
    server.stop()


async def test_anthropic_two_turn_tool_loop(workspace: Path, replay: ReplayServer) -> None:
    read = ToolCall("toolu_01", "Read", {"file_path": "app.py"})
    replay.enqueue(
        anthropic_tool_turn(read, text="Let me read it.", split=7),
        anthropic_text_turn("It listens on 8000.", cache_read_tokens=1200),
    )
    async with running_daemon(
        workspace,
        AGENTLS_PROVIDER="anthropic",
        ANTHROPIC_API_KEY="sk-test-secret",
        ANTHROPIC_BASE_URL=replay.base_url,
        AGENTLS_MODEL="claude-replay",
    ) as client:
        session = await client.new_session(workspace)
        assert session["model"] == "claude-replay"
        turn, done = await client.run_turn(session["sessionId"], "Which port?")
    assert done["stopReason"] == "end_turn" and done["turns"] == 2
    assert done["usage"]["cacheReadTokens"] == 1200
    texts = "".join(e["text"] for e in client.events.of_turn(turn) if e["type"] == "text_delta")
    assert texts == "Let me read it.It listens on 8000."
    first, second = (r.body for r in replay.requests)
    assert first["stream"] is True
    assert first["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert first["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert first["system"] == second["system"] and first["tools"] == second["tools"]
    assistant, results = second["messages"][-2:]
    assert assistant["content"][-1] == {
        "type": "tool_use",
        "id": "toolu_01",
        "name": "Read",
        "input": {"file_path": "app.py"},
    }
    result = results["content"][0]
    assert result["tool_use_id"] == "toolu_01" and "PORT = 8000" in str(result["content"])
    assert all(r.api_key() == "sk-test-secret" for r in replay.requests)
    assert not any("sk-test-secret" in str(e) for e in client.events.items)


async def test_anthropic_overload_is_retried(workspace: Path, replay: ReplayServer) -> None:
    replay.enqueue(
        anthropic_error(529, "overloaded_error", "Overloaded"), anthropic_text_turn("ok")
    )
    async with running_daemon(
        workspace,
        AGENTLS_PROVIDER="anthropic",
        ANTHROPIC_API_KEY="test",
        ANTHROPIC_BASE_URL=replay.base_url,
    ) as client:
        session = await client.new_session(workspace)
        turn, done = await client.run_turn(session["sessionId"], "hi")
    assert done["stopReason"] == "end_turn"
    notices = [e for e in client.events.of_turn(turn) if e["type"] == "notice"]
    assert notices and notices[0]["retrying"] is True and "overloaded" in notices[0]["message"]


async def test_openai_two_turn_tool_loop(workspace: Path, replay: ReplayServer) -> None:
    read = ToolCall("call_01", "Read", {"file_path": "app.py"})
    replay.enqueue(openai_tool_turn(read, split=7), openai_text_turn("It listens on 8000."))
    async with running_daemon(
        workspace,
        AGENTLS_PROVIDER="openai",
        OPENAI_BASE_URL=replay.openai_base_url,
        AGENTLS_MODEL="qwen-replay",
    ) as client:
        session = await client.new_session(workspace)
        _turn, done = await client.run_turn(session["sessionId"], "Which port?")
    assert done["stopReason"] == "end_turn" and done["turns"] == 2
    first, second = (r.body for r in replay.requests)
    assert first["stream"] is True and first["stream_options"] == {"include_usage": True}
    assert first["messages"][0]["role"] == "system"
    assistant, tool = second["messages"][-2:]
    assert assistant["tool_calls"][0]["id"] == "call_01"
    assert tool == {
        "role": "tool",
        "tool_call_id": "call_01",
        "content": tool["content"],
    }
    assert "PORT = 8000" in tool["content"]


async def test_list_models_through_the_daemon(workspace: Path, replay: ReplayServer) -> None:
    listing = b'{"object":"list","data":[{"id":"gpt-4o"},{"id":"o3"}]}'
    replay.enqueue(ScriptedResponse(200, (("content-type", "application/json"),), body=listing))
    async with running_daemon(
        workspace,
        AGENTLS_PROVIDER="openai",
        OPENAI_BASE_URL=replay.openai_base_url,
        AGENTLS_MODEL="o3",
    ) as client:
        # Before any session: the daemon's own settings.
        before = await client.request("agent/listModels", {})
        session = await client.new_session(workspace)
        cached = await client.request("agent/listModels", {"sessionId": session["sessionId"]})
        with pytest.raises(JsonRpcException) as missing:
            await client.request("agent/listModels", {"sessionId": "sess_nope"})
        # A refresh asks the server again; this one has nothing more queued: 404.
        with pytest.raises(JsonRpcException) as refused:
            await client.request(
                "agent/listModels", {"sessionId": session["sessionId"], "refresh": True}
            )
    assert before["provider"] == "openai" and before["cached"] is False
    assert before["models"] == [{"id": "o3", "current": True}, {"id": "gpt-4o", "current": False}]
    assert cached["cached"] is True and cached["models"] == before["models"]
    assert missing.value.code == 1001
    assert refused.value.code == 1005 and "has no model list" in refused.value.message
    assert [r.method for r in replay.requests] == ["GET", "GET"]
