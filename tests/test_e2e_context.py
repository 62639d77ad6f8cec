"""Context over the wire: compaction in a long session, a byte-stable prompt prefix,
memory files, and structured data with AskUser."""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path
from typing import Any

from agent_client import read_requests, running_daemon
from replay_server import ReplayServer, ToolCall, anthropic_text_turn, anthropic_tool_turn

SUMMARY_TEXT = "<summary>1. Task: read the notes the user pastes.</summary>"


async def test_a_long_session_is_compacted_and_goes_on(tmp_path: Path) -> None:
    (tmp_path / ".agentls").mkdir()
    (tmp_path / ".agentls" / "settings.json").write_text(json.dumps({"contextWindow": 16_500}))
    log = tmp_path / "requests.jsonl"
    script = [{"text": "noted 1"}, {"text": "noted 2"}, {"text": SUMMARY_TEXT}, {"text": "noted 3"}]
    async with running_daemon(tmp_path) as client:
        session = await client.new_session(
            tmp_path, provider="scripted", script=script, requestLog=str(log)
        )
        sid = session["sessionId"]
        for n in (1, 2):
            _turn, done = await client.run_turn(sid, f"notes {n}: " + "x" * 12_000)
            assert done["stopReason"] == "end_turn"
        turn, done = await client.run_turn(sid, "notes 3: " + "y" * 12_000)
        assert done["stopReason"] == "end_turn", done.get("error")
        compactions = [e for e in client.events.of_turn(turn) if e["type"] == "compaction"]
        assert len(compactions) == 1 and compactions[0]["trigger"] == "auto"
        assert compactions[0]["tokensAfter"] < compactions[0]["tokensBefore"]
        warnings = [
            e for e in client.events.items if e["type"] == "notice" and "full" in e["message"]
        ]
        assert warnings
        usage = [e for e in client.events.items if e["type"] == "usage"][-1]
        assert usage["contextWindow"] == 16_500 and usage["contextTokens"] > 0
    requests = read_requests(log)
    assert len(requests) == 4
    summary_request, after = requests[2], requests[3]
    summarised = json.dumps(summary_request["messages"])
    assert "notes 1: " in summarised and "noted 1" in summarised
    assert "<summary>" in summary_request["messages"][-1]["content"][-1]["text"]
    size = len(json.dumps(after["messages"]))
    assert size < len(json.dumps(requests[1]["messages"])) + 12_000
    assert "x" * 1000 not in json.dumps(after["messages"])
    assert "1. Task: read the notes" in json.dumps(after["messages"])
    assert after["messages"][-1]["content"][-1]["text"].startswith("notes 3: ")


def without_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_cache_control(v) for v in value]
    return value


async def test_ten_turns_keep_a_byte_stable_prompt_prefix(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Always answer in one sentence.\n")
    (tmp_path / "a.txt").write_text("alpha\n")
    with ReplayServer() as replay:
        for n in range(10):
            read = ToolCall(f"toolu_{n}", "Read", {"file_path": "a.txt"})
            replay.enqueue(anthropic_tool_turn(read, text=f"Turn {n}."), anthropic_text_turn("ok"))
        async with running_daemon(
            tmp_path,
            AGENTLS_PROVIDER="anthropic",
            ANTHROPIC_API_KEY="test",
            ANTHROPIC_BASE_URL=replay.base_url,
        ) as client:
            session = await client.new_session(tmp_path)
            for n in range(10):
                _turn, done = await client.run_turn(session["sessionId"], f"question {n}")
                assert done["stopReason"] == "end_turn"
        bodies = [r.body for r in replay.requests]
    assert len(bodies) == 20
    first = bodies[0]
    assert "Always answer in one sentence." in json.dumps(first["system"])
    for previous, current in itertools.pairwise(bodies):
        assert json.dumps(current["system"]) == json.dumps(previous["system"])
        assert json.dumps(current["tools"]) == json.dumps(previous["tools"])
        before = without_cache_control(previous["messages"])
        now = without_cache_control(current["messages"])
        assert json.dumps(now[: len(before)]) == json.dumps(before)


async def test_structured_data_intent_and_ask_user_over_the_wire(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    data = {"orders": [{"id": 1, "total": 30}, {"id": 2, "total": 12.5}, {"id": 3, "total": None}]}
    script = [
        {
            "tool_calls": [
                {
                    "id": "q",
                    "name": "QueryData",
                    "input": {"expression": "orders[?total > `20`].id"},
                },
                {"id": "s", "name": "SummarizeData", "input": {"expression": "orders"}},
                {
                    "id": "v",
                    "name": "ValidateData",
                    "input": {
                        "schema": {
                            "type": "object",
                            "properties": {
                                "orders": {
                                    "type": "array",
                                    "items": {"properties": {"total": {"type": "number"}}},
                                }
                            },
                        }
                    },
                },
            ]
        },
        {
            "tool_calls": [
                {
                    "id": "ask",
                    "name": "AskUser",
                    "input": {"question": "Refund order 3?", "choices": ["yes", "no"]},
                }
            ]
        },
        {"text": "Done."},
    ]
    async with running_daemon(tmp_path) as client:
        session = await client.new_session(
            tmp_path, provider="scripted", script=script, requestLog=str(log)
        )
        sid = session["sessionId"]
        result = await client.request(
            "agent/submitMessage",
            {
                "sessionId": sid,
                "text": "check the orders",
                "data": data,
                "intent": "find bad orders",
            },
        )
        ask = await client.events.wait_for(lambda e: e["type"] == "ask_user")
        assert ask["question"] == "Refund order 3?" and ask["choices"] == ["yes", "no"]
        await client.request(
            "agent/respondAskUser",
            {"sessionId": sid, "requestId": ask["requestId"], "answer": "no"},
        )
        done = await client.events.turn_completed(result["turnId"])
        assert done["stopReason"] == "end_turn"
        resolved = [e for e in client.events.items if e["type"] == "ask_user_resolved"]
        assert resolved == [
            {**resolved[0], "requestId": ask["requestId"], "outcome": "answered", "answer": "no"}
        ]
    requests = read_requests(log)
    context = requests[0]["messages"][0]["content"][0]["text"]
    assert "<structuredData>" in context and '"total": 12.5' in context
    assert "<userIntent>find bad orders</userIntent>" in context
    results = {
        b["tool_use_id"]: b
        for b in requests[1]["messages"][-1]["content"]
        if b["type"] == "tool_result"
    }
    assert results["q"]["content"].split() == ["[", "1", "]"]
    assert "3" in results["s"]["content"] and not results["s"]["is_error"]
    assert results["v"]["is_error"] is False and "orders[2].total" in results["v"]["content"]
    answer = [b for b in requests[2]["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert "no" in answer[0]["content"]


async def test_abort_cancels_a_pending_question(tmp_path: Path) -> None:
    script = [{"tool_calls": [{"id": "ask", "name": "AskUser", "input": {"question": "Which?"}}]}]
    async with running_daemon(tmp_path) as client:
        session = await client.new_session(tmp_path, provider="scripted", script=script)
        sid = session["sessionId"]
        result = await client.request("agent/submitMessage", {"sessionId": sid, "text": "go"})
        ask = await client.events.wait_for(lambda e: e["type"] == "ask_user")
        await client.request("agent/abort", {"sessionId": sid})
        done = await client.events.turn_completed(result["turnId"])
        assert done["stopReason"] == "aborted"
        resolved = [e for e in client.events.items if e["type"] == "ask_user_resolved"]
        assert [(e["requestId"], e["outcome"]) for e in resolved] == [
            (ask["requestId"], "cancelled")
        ]
        await asyncio.sleep(0)


async def test_manual_compact_summarises_with_instructions(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    script = [{"text": "a"}, {"text": "b"}, {"text": "<summary>short</summary>"}, {"text": "c"}]
    async with running_daemon(tmp_path) as client:
        session = await client.new_session(
            tmp_path, provider="scripted", script=script, requestLog=str(log)
        )
        sid = session["sessionId"]
        await client.run_turn(sid, "one " + "1" * 4000)
        await client.run_turn(sid, "two " + "2" * 4000)
        result = await client.request(
            "agent/compact", {"sessionId": sid, "instructions": "keep the numbers"}
        )
        assert result["tokensAfter"] <= result["tokensBefore"]
        event = await client.events.wait_for(lambda e: e["type"] == "compaction")
        assert event["trigger"] == "manual" and "turnId" not in event
        _turn, done = await client.run_turn(sid, "three")
        assert done["stopReason"] == "end_turn"
    requests = read_requests(log)
    assert "keep the numbers" in json.dumps(requests[2]["messages"][-1])
    assert "short" in json.dumps(requests[3]["messages"][0])
    assert requests[3]["messages"][-1]["content"][-1]["text"] == "three"
    assert "1" * 1000 not in json.dumps(requests[3]["messages"])


async def test_memory_files_are_read_from_the_workspace_root_down_to_cwd(tmp_path: Path) -> None:
    home_log = tmp_path / "requests.jsonl"
    sub = tmp_path / "pkg" / "sub"
    sub.mkdir(parents=True)
    (tmp_path / "AGENTS.md").write_text("Root rule: use tabs.\n")
    (sub / "CLAUDE.md").write_text("Sub rule: no prints.\n")
    async with running_daemon(tmp_path) as client:
        session = await client.new_session(
            sub, provider="scripted", script=[{"text": "ok"}], requestLog=str(home_log)
        )
        await client.run_turn(session["sessionId"], "hi")
    dynamic = read_requests(home_log)[0]["system_dynamic"]
    assert dynamic.index("Root rule: use tabs.") < dynamic.index("Sub rule: no prints.")
