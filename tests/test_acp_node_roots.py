"""`additionalDirectories` through the official TypeScript SDK's client (tests/acp_node/
client.mjs): the `sessionCapabilities.additionalDirectories` capability kept by the SDK's
own stable v1 schema (which drops what it does not name), the roots a session/new and a
session/load give a session, and a relative entry refused. Skipped without node or
tests/acp_node/node_modules."""

from __future__ import annotations

from pathlib import Path

from test_acp_node_client import node, run_client, scripted, texts, updates
from test_e2e_acp_roots import NOTE, outside, reads

__all__ = ["node"]  # the fixture, used by name


def test_the_sdks_schema_keeps_the_additional_directories_capability(
    node: str, tmp_path: Path
) -> None:
    out = run_client(node, tmp_path, {"steps": []})
    parsed = out["initializeParsed"]["agentCapabilities"]["sessionCapabilities"]
    assert parsed["additionalDirectories"] == {}
    assert (
        out["initialize"]["agentCapabilities"]["sessionCapabilities"]["additionalDirectories"] == {}
    )


def test_new_and_load_set_the_roots_the_tools_reach(node: str, tmp_path: Path) -> None:
    folder, ws = outside(tmp_path), tmp_path / "ws"
    ws.mkdir()
    out = run_client(
        node,
        tmp_path,
        {
            "cwd": str(ws),
            "steps": [
                {
                    "op": "new",
                    "as": "s",
                    "additionalDirectories": [str(folder)],
                    "meta": scripted(tmp_path, reads(folder, 2)),
                },
                {"op": "prompt", "session": "s", "text": "read the note"},
                # Loaded again without the list: none of the client's roots stays.
                {"op": "load", "session": "s"},
                {"op": "prompt", "session": "s", "text": "read it again"},
                {"op": "resume", "session": "s", "additionalDirectories": ["outside"]},
            ],
        },
    )
    new, first, loaded, second, relative = out["steps"]
    session_id = new["result"]["sessionId"]
    assert "error" not in loaded, loaded
    assert first["result"]["stopReason"] == second["result"]["stopReason"] == "end_turn"
    ended = {
        u["toolCallId"]: u
        for u in updates(out, session_id, "tool_call_update")
        if u.get("status") in ("completed", "failed")
    }
    assert ended["r0"]["status"] == "completed" and NOTE in texts(ended["r0"]["content"])
    assert ended["r1"]["status"] == "failed"
    assert "outside the workspace" in texts(ended["r1"]["content"])
    assert relative["error"]["code"] == -32602
    assert relative["error"]["data"] == [
        {"field": "additionalDirectories.0", "message": "must be an absolute path"}
    ]
