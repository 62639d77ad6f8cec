"""ACP's error codes as the official TypeScript SDK's client sees them (tests/acp_node/
client.mjs): a session the agent does not know is -32002 (resource not found) with the id
in `data.sessionId`, a rejected promise for session/load, session/prompt, session/resume
and session/set_mode, while the SDK's own session/close resolves it as done (it treats a
-32002 to close or delete as success). Skipped without node or tests/acp_node/node_modules."""

from __future__ import annotations

from pathlib import Path

from test_acp_node_client import node, request_ids, responses_to, run_client, scripted

__all__ = ["node"]  # the fixture, used by name

NEVER_MADE = "sess_never_made"


def test_an_unknown_session_is_resource_not_found(node: str, tmp_path: Path) -> None:
    unknown = {"sessionId": NEVER_MADE}
    out = run_client(
        node,
        tmp_path,
        {
            "cwd": str(tmp_path),
            "steps": [
                {"op": "load", **unknown},
                {"op": "prompt", "text": "hi", **unknown},
                {"op": "resume", **unknown},
                {"op": "setMode", "modeId": "plan", **unknown},
                {"op": "close", **unknown},
                {"op": "new", "as": "s", "meta": scripted(tmp_path, [{"text": "Hello."}])},
                {"op": "close", "session": "s"},
                {"op": "prompt", "session": "s", "text": "still there?"},
            ],
        },
    )
    load, prompt, resume, set_mode, close, new, _closed, after_close = out["steps"]
    for refused in (load, prompt, resume, set_mode):
        error = refused["error"]
        assert (error["code"], error["data"]) == (-32002, unknown), refused
        assert f"'{NEVER_MADE}'" in error["message"], refused
    # session/close: -32002 on the wire, which the SDK resolves as a successful close.
    assert close["result"] == {}
    [answer] = responses_to(out, request_ids(out, "session/close")[0])
    assert answer["message"]["error"]["code"] == -32002
    # A closed session is unknown to session/prompt too.
    closed_id = new["result"]["sessionId"]
    error = after_close["error"]
    assert (error["code"], error["data"]) == (-32002, {"sessionId": closed_id})
