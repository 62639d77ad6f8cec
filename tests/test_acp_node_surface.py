"""The ACP surface beyond a prompt, through the official TypeScript SDK's client
(tests/acp_node/client.mjs): its request cancellation (`$/cancel_request` from an
AbortSignal), session/list, session/resume and session/close. Skipped without node or
tests/acp_node/node_modules."""

from __future__ import annotations

from pathlib import Path

from test_acp_node_client import node, request_ids, responses_to, run_client, scripted

__all__ = ["node"]  # the fixture, used by name


def test_the_sdks_request_cancellation_stops_the_turn(node: str, tmp_path: Path) -> None:
    script = [{"text": "This answer never finishes", "hang": True}, {"text": "Next."}]
    out = run_client(
        node,
        tmp_path,
        {
            "steps": [
                {"op": "new", "as": "s", "meta": scripted(tmp_path, script)},
                {"op": "prompt", "session": "s", "text": "go", "cancelRequestAfterUpdate": True},
                {"op": "prompt", "session": "s", "text": "again"},
                {"op": "list"},
                {"op": "resume", "session": "s"},
                {"op": "close", "session": "s"},
            ]
        },
    )
    steps = out["steps"]
    session_id = steps[0]["result"]["sessionId"]
    # The SDK sent `$/cancel_request` for the first prompt, which was answered -32800.
    cancels = [
        m["message"] for m in out["wire"] if m["message"].get("method") == "$/cancel_request"
    ]
    first_prompt = request_ids(out, "session/prompt")[0]
    assert [c["params"]["requestId"] for c in cancels] == [first_prompt]
    assert steps[1]["error"]["code"] == -32800
    assert responses_to(out, first_prompt)[0]["message"]["error"]["code"] == -32800
    assert steps[2]["result"]["stopReason"] == "end_turn"
    listed = steps[3]["result"]["sessions"]
    assert [s["sessionId"] for s in listed] == [session_id]
    assert listed[0]["title"]
    assert "error" not in steps[4] and "error" not in steps[5]


def test_steer_joins_the_running_turn(node: str, tmp_path: Path) -> None:
    write = {"file_path": "new.txt", "content": "x\n"}
    script = [
        {"text": "Writing.", "tool_calls": [{"id": "w1", "name": "Write", "input": write}]},
        {"text": "Done, steered."},
    ]
    steer = {"op": "prompt", "session": "s", "text": "write it", "steerAtPermission": "mind tests"}
    out = run_client(
        node,
        tmp_path,
        {
            "permission": {"optionId": "allow_once", "hold": True},
            "steps": [{"op": "new", "as": "s", "meta": scripted(tmp_path, script)}, steer],
        },
    )
    answers = out["steps"][1]["result"]
    assert answers["first"]["stopReason"] == answers["steer"]["stopReason"] == "end_turn"
    # Two model calls: the steer joined the turn (a turn of its own would need a third).
    calls = (tmp_path / "requests.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(calls) == 2
    assert "mind tests" in calls[1] and "/steer" not in calls[1]
