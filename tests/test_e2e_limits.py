"""A turn's limits over stdio: the turn limit that asks to go on (agent/continueTurn), the
task budget that forces a last wrap-up answer, and the stuck detector."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from agent_client import AgentClient, read_requests
from agentls.loop.guards import BUDGET_SPENT, WRAP_UP_TEXT


@pytest.fixture
def workspace_files() -> dict[str, str | bytes]:
    return {"app.py": "port = 8000\n"}


def read(call_id: str, path: str = "app.py") -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": "Read", "input": {"file_path": path}}]}


def bash(call_id: str, command: str) -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": "Bash", "input": {"command": command}}]}


def texts(message: dict[str, Any]) -> list[str]:
    return [b.get("text", "") for b in message["content"] if b["type"] == "text"]


# --- the turn limit ----------------------------------------------------------------------


async def test_the_turn_limit_offers_to_go_on_and_continue_turn_does(
    client: AgentClient, tmp_path: Path
) -> None:
    script = [read("r1"), read("r2", "missing.py"), read("r3"), {"text": "The port is 8000."}]
    session, log = await client.scripted_session(tmp_path, script, maxTurns=2)
    first, done = await client.run_turn(session, "find the port")
    assert done["stopReason"] == "max_turns" and done["turns"] == 2
    kinds = [e["type"] for e in client.events.of_turn(first)]
    assert kinds[-2:] == ["turn_limit_reached", "turn_completed"]
    limit = client.events.of_type("turn_limit_reached")[-1]
    assert (limit["turns"], limit["maxTurns"]) == (2, 2)

    went_on = await client.request("agent/continueTurn", {"sessionId": session})
    again = await client.events.turn_completed(went_on["turnId"])
    assert again["stopReason"] == "end_turn" and again["turns"] == 2
    started = next(
        e for e in client.events.of_turn(went_on["turnId"]) if e["type"] == "turn_started"
    )
    assert started["continued"] is True
    requests = read_requests(log)
    assert len(requests) == 4
    # No new user message: the third request goes on from the second call's results.
    third = requests[2]["messages"]
    assert third[-1]["content"][0]["type"] == "tool_result"
    assert started["userMessageId"] == third[-1]["id"]
    assert len(third) == len(requests[1]["messages"]) + 2


async def test_continue_turn_after_a_finished_turn_is_refused(
    client: AgentClient, tmp_path: Path
) -> None:
    session, _log = await client.scripted_session(tmp_path, [{"text": "Hello."}])
    with pytest.raises(JsonRpcException) as refused:
        await client.request("agent/continueTurn", {"sessionId": session})
    assert refused.value.code == 1006 and "has not run" in refused.value.message
    await client.run_turn(session, "hi")
    with pytest.raises(JsonRpcException) as refused:
        await client.request("agent/continueTurn", {"sessionId": session})
    assert refused.value.code == 1006 and "ended end_turn" in refused.value.message
    with pytest.raises(JsonRpcException) as unknown:
        await client.request("agent/continueTurn", {"sessionId": "sess_nope"})
    assert unknown.value.code == 1001


async def test_a_reply_cut_at_the_limit_is_asked_to_go_on(
    client: AgentClient, tmp_path: Path
) -> None:
    cut = {"text": "The port is", "stop_reason": "max_tokens"}
    # The first cut reply is asked again with a higher output cap; the second is kept.
    script = [cut, cut, {"text": " 8000."}]
    session, log = await client.scripted_session(tmp_path, script, maxTurns=1)
    _turn, done = await client.run_turn(session, "port?")
    assert done["stopReason"] == "max_turns"
    went_on = await client.request("agent/continueTurn", {"sessionId": session})
    assert (await client.events.turn_completed(went_on["turnId"]))["stopReason"] == "end_turn"
    last = read_requests(log)[-1]["messages"]
    assert last[-2]["role"] == "assistant" and "go on" in texts(last[-1])[0]


# --- the budget ---------------------------------------------------------------------------

# The first request is about 6,000 tokens (system prompt and tools): it fits a budget of
# 9,000, and after it reports 6,050 the next one does not.
USAGE = {"input_tokens": 6000, "output_tokens": 50}
BUDGET = 9000


async def test_a_spent_budget_gets_one_wrap_up_call_without_tools(
    client: AgentClient, tmp_path: Path
) -> None:
    # The model ignores the instruction and calls a tool anyway: the call does not run.
    script = [
        {**read("r1"), "usage": USAGE},
        {**read("r2"), "text": "One more look.", "usage": USAGE},
        {"text": "unreached"},
    ]
    session, log = await client.scripted_session(tmp_path, script, maxBudgetTokens=BUDGET)
    turn, done = await client.run_turn(session, "find the port")
    assert done["stopReason"] == "budget_exceeded" and done["turns"] == 2
    requests = read_requests(log)
    assert len(requests) == 2
    assert [r["tool_choice"] for r in requests] == ["auto", "none"]
    assert WRAP_UP_TEXT in texts(requests[1]["messages"][-1])
    notices = [e["message"] for e in client.events.of_turn(turn) if e["type"] == "notice"]
    assert any("Budget reached" in n and "maxBudgetTokens" in n for n in notices), notices
    refused = [
        e
        for e in client.events.of_turn(turn)
        if e["type"] == "tool_call_update" and e["toolCallId"] == "r2"
    ]
    assert refused[-1]["status"] == "failed" and refused[-1]["content"] == BUDGET_SPENT
    # The history stays paired: the next turn's request has the refused call's result.
    await client.run_turn(session, "and now?")
    history = read_requests(log)[-1]["messages"]
    results = [b for m in history for b in m["content"] if b["type"] == "tool_result"]
    assert [r["tool_use_id"] for r in results] == ["r1", "r2"]


async def test_a_turn_budget_from_submit_message_overrides_the_session(
    client: AgentClient, tmp_path: Path
) -> None:
    script = [{**read("r1"), "usage": USAGE}, {"text": "Done.", "usage": USAGE}]
    session, log = await client.scripted_session(tmp_path, script, maxBudgetTokens=BUDGET)
    _turn, done = await client.run_turn(session, "find the port", maxBudgetTokens=100_000)
    assert done["stopReason"] == "end_turn"
    assert all(r["tool_choice"] == "auto" for r in read_requests(log))


async def test_a_budget_smaller_than_the_first_request_stops_before_it(
    client: AgentClient, tmp_path: Path
) -> None:
    session, log = await client.scripted_session(
        tmp_path, [{"text": "unreached"}], maxBudgetTokens=10
    )
    turn, done = await client.run_turn(session, "hi")
    assert done["stopReason"] == "budget_exceeded" and done["turns"] == 0
    assert not log.exists()
    notice = next(e for e in client.events.of_turn(turn) if e["type"] == "notice")
    assert "over its budget of 10" in notice["message"], notice["message"]


async def test_a_dollar_budget_uses_the_model_price(client: AgentClient, tmp_path: Path) -> None:
    settings = tmp_path / "ws" / ".agentls"
    settings.mkdir()
    # $1,000 per million tokens: the first call costs $6.05, and the next one as much.
    prices = {"scripted": {"input": 1000, "output": 1000, "cacheRead": 1000}}
    (settings / "settings.json").write_text(json.dumps({"prices": prices}), encoding="utf-8")
    script = [{**read("r1"), "usage": USAGE}, {"text": "Summary.", "usage": USAGE}]
    session, log = await client.scripted_session(tmp_path, script, maxBudgetUsd=9)
    turn, done = await client.run_turn(session, "find the port")
    assert done["stopReason"] == "budget_exceeded"
    assert read_requests(log)[-1]["tool_choice"] == "none"
    notices = [e["message"] for e in client.events.of_turn(turn) if e["type"] == "notice"]
    assert any("maxBudgetUsd" in n and "$9.00" in n for n in notices), notices


# --- the stuck detector -------------------------------------------------------------------


async def test_the_same_call_with_the_same_result_is_nudged_once_then_stopped(
    client: AgentClient, tmp_path: Path
) -> None:
    same = [bash(f"b{i}", "echo same") for i in range(6)]
    session, log = await client.scripted_session(tmp_path, same, permissionMode="bypassPermissions")
    turn, done = await client.run_turn(session, "check")
    assert done["stopReason"] == "stuck" and done["turns"] == 4
    requests = read_requests(log)
    nudged = [
        i for i, r in enumerate(requests) if "repeated the same step" in str(r["messages"][-1])
    ]
    assert nudged == [3]
    notice = [e for e in client.events.of_turn(turn) if e["type"] == "notice"][-1]
    assert "Bash" in notice["message"] and "echo same" in notice["message"]
    assert "4 times" in notice["message"]


async def test_a_model_that_changes_course_after_the_nudge_goes_on(
    client: AgentClient, tmp_path: Path
) -> None:
    script = [*(bash(f"b{i}", "echo same") for i in range(3)), read("r"), {"text": "Done."}]
    session, _log = await client.scripted_session(
        tmp_path, script, permissionMode="bypassPermissions"
    )
    _turn, done = await client.run_turn(session, "check")
    assert done["stopReason"] == "end_turn" and done["turns"] == 5


async def test_a_dollar_budget_without_a_price_says_it_is_not_enforced(
    client: AgentClient, tmp_path: Path
) -> None:
    session, _log = await client.scripted_session(tmp_path, [{"text": "Hi."}], maxBudgetUsd=0.01)
    turn, done = await client.run_turn(session, "hi")
    assert done["stopReason"] == "end_turn"
    notice = next(e for e in client.events.of_turn(turn) if e["type"] == "notice")
    assert "not enforced" in notice["message"] and "prices" in notice["message"]
