"""A tool turn through the real daemon on the OpenAI Responses API (`openaiApi:
"responses"`), against wire-exact replays: reasoning kept across the tool call, the call
paired with its output by call_id, a failed attempt retried and discarded."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_client import running_daemon
from replay_server import ReplayServer, ToolCall, fixture_response
from responses_replay import responses_turn


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text("PORT = 8000\n", encoding="utf-8")
    # The project's settings choose the API: any base URL but OpenAI's would otherwise
    # speak Chat Completions.
    (tmp_path / ".agentls").mkdir()
    settings = tmp_path / ".agentls" / "settings.json"
    settings.write_text('{"openaiApi": "responses"}', encoding="utf-8")
    return tmp_path


@pytest.fixture
def replay() -> Iterator[ReplayServer]:
    server = ReplayServer().start()
    yield server
    server.stop()


async def test_a_tool_turn_on_the_responses_api(workspace: Path, replay: ReplayServer) -> None:
    read = ToolCall("call_e2e_01", "Read", {"file_path": "app.py"})
    summary = ["**Reading app.py**\n\nThe port is set there."]
    replay.enqueue(
        responses_turn(reasoning=(summary, "gAAAA-e2e-encrypted"), tool_calls=[read], split=7),
        # The second call's first attempt breaks with an error event after some text:
        # it is retried, and its text joins neither the history nor the next request.
        fixture_response("openai_responses/06_error_event_midstream"),
        responses_turn(text="It listens on 8000.", input_tokens=900, cached_tokens=800),
    )
    async with running_daemon(
        workspace,
        AGENTLS_PROVIDER="openai",
        OPENAI_BASE_URL=replay.openai_base_url,
        OPENAI_API_KEY="sk-e2e-responses-secret",
        AGENTLS_MODEL="o4-mini",
    ) as client:
        session = await client.new_session(workspace)
        turn, done = await client.run_turn(session["sessionId"], "Which port?")
    assert done["stopReason"] == "end_turn"
    assert done["usage"]["cacheReadTokens"] == 800
    events = client.events.of_turn(turn)
    # The last call's usage event prices it (o4-mini: $1.10 / $0.275 / $4.40 per million).
    last_usage = [e for e in events if e["type"] == "usage"][-1]
    assert (last_usage["inputTokens"], last_usage["cacheReadTokens"]) == (100, 800)
    assert last_usage["costUsd"] == pytest.approx((100 * 1.10 + 800 * 0.275 + 20 * 4.40) / 1e6)
    thoughts = "".join(e["text"] for e in events if e["type"] == "thinking_delta")
    assert thoughts == summary[0]
    notices = [e for e in events if e["type"] == "notice"]
    assert notices and notices[0]["retrying"] is True
    # The failed attempt had streamed text: clients are told to drop it.
    discarded = [e for e in events if e["type"] == "message_discarded"]
    assert [e["reason"] for e in discarded] == ["retry"]
    completed = [e for e in events if e["type"] == "message_completed"]
    assert all(e["messageId"] != discarded[0]["messageId"] for e in completed)
    first, failed, retried = (r.body for r in replay.requests)
    assert all(r.path == "/v1/responses" for r in replay.requests)
    assert first["store"] is False and first["include"] == ["reasoning.encrypted_content"]
    assert first["instructions"] and first["tools"][0]["type"] == "function"
    assert failed == retried
    items = retried["input"]
    reasoning, call, output = items[-3:]
    assert reasoning == {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": summary[0]}],
        "encrypted_content": "gAAAA-e2e-encrypted",
    }
    assert call["type"] == "function_call" and call["call_id"] == "call_e2e_01"
    assert output["type"] == "function_call_output" and output["call_id"] == "call_e2e_01"
    assert "PORT = 8000" in output["output"]
    assert not any("It listens on port" in str(i) for i in items)
    assert all(r.api_key() == "sk-e2e-responses-secret" for r in replay.requests)
