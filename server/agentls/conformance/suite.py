"""The checks: each starts what it needs from the server command and raises
AssertionError (or a protocol error) when the server strays from protocol/PROTOCOL.md."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentls.conformance.edits import EDIT_CHECKS
from agentls.conformance.kit import Check, Context, expect_error, initialize_params, registrar, turn
from agentls.conformance.rpc import RpcError

CHECKS: list[tuple[str, Check]] = []
check = registrar(CHECKS)


# --- handshake and errors -------------------------------------------------------------------


@check("initialize advertises the agentls protocol")
def _handshake(ctx: Context) -> None:
    with ctx.server() as (_server, result):
        agentls = result["capabilities"]["experimental"]["agentls"]
        assert agentls["protocolVersion"] >= 1
        assert agentls["events"] == "agent/event"
        assert "scripted" in agentls["providers"]


@check("a request before the handshake: -32002, and nothing is done")
def _before_initialize(ctx: Context) -> None:
    with ctx.uninitialized() as server:
        workspace: Path = server.workspace  # type: ignore[attr-defined]
        marker = workspace / "MARKER"
        command = {"name": "m", "command": "sh", "args": ["-c", f"touch '{marker}'"]}
        opened = {"cwd": str(workspace), "provider": "scripted", "mcpServers": [command]}
        expect_error(-32002, lambda: server.request("agent/newSession", opened))
        expect_error(-32002, lambda: server.request("agent/listSessions", {}))
        expect_error(-32002, lambda: server.request("agent/noSuchMethod", {}))
        server.notify("initialized", {})
        server.request("initialize", initialize_params(server, {}))
        server.notify("initialized", {})
        assert server.request("agent/listSessions", {})["sessions"] == []
        assert not marker.exists(), "a request before initialize ran a command"


@check("HTTP input closes the connection, frames in its body unread")
def _http_refused(ctx: Context) -> None:
    with ctx.uninitialized() as server:
        inside = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}},
            {"jsonrpc": "2.0", "id": 2, "method": "agent/listSessions", "params": {}},
        ]
        frames = b"".join(
            b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
            for body in (json.dumps(m).encode() for m in inside)
        )
        body = b"x" + frames
        head = b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: https://example.com\r\n"
        head += b"Content-Type: text/plain\r\nContent-Length: %d\r\n\r\n" % len(body)
        server.send_bytes(head + body)
        try:
            server.pump_until(lambda: bool(server.responses), 20, "the connection to close")
        except ConnectionError:
            return
        raise AssertionError(f"answered instead of closed: {server.responses}")


@check("unknown method: -32601, and the server goes on")
def _unknown_method(ctx: Context) -> None:
    with ctx.server() as (server, _):
        expect_error(-32601, lambda: server.request("agent/noSuchMethod", {}))
        assert server.request("agent/listSessions", {})["sessions"] == []


@check("malformed JSON: -32700, and the server goes on")
def _malformed(ctx: Context) -> None:
    with ctx.server() as (server, _):
        server.send_raw(b'{"jsonrpc": "2.0", "id": 99, "method": ')
        server.pump_until(lambda: None in server.responses, 10, "the -32700 answer")
        assert server.responses.pop(None)["error"]["code"] == -32700
        assert "sessions" in server.request("agent/listSessions", {})


@check("invalid params: -32602 with the field")
def _invalid_params(ctx: Context) -> None:
    with ctx.server() as (server, _):
        error = expect_error(-32602, lambda: server.request("agent/submitMessage", {"text": 1}))
        assert error.data, "the error names the fields"
        expect_error(-32602, lambda: server.request("agent/newSession", {"cwd": "relative/dir"}))


@check("unknown session: 1001 from every session method")
def _unknown_session(ctx: Context) -> None:
    with ctx.server() as (server, _):
        calls: list[tuple[str, dict[str, Any]]] = [
            ("agent/submitMessage", {"text": "hi"}),
            ("agent/abort", {}),
            ("agent/closeSession", {}),
            ("agent/deleteSession", {}),
            ("agent/setPermissionMode", {"permissionMode": "plan"}),
            ("agent/compact", {}),
        ]
        for method, params in calls:

            def call(method: str = method, params: dict[str, Any] = params) -> Any:
                return server.request(method, {"sessionId": "nope", **params})

            expect_error(1001, call)


# --- turns and events -------------------------------------------------------------------------


@check("a turn: events in seq order, turn_started first, one turn_completed last")
def _turn_order(ctx: Context) -> None:
    with ctx.server() as (server, _):
        session = ctx.script(
            server,
            [
                {
                    "text": "Reading.",
                    "tool_calls": [{"id": "r", "name": "Glob", "input": {"pattern": "*"}}],
                },
                {"text": "Done."},
            ],
        )
        turn_id, done = turn(server, session, "look")
        assert done["stopReason"] == "end_turn"
        events = server.events(session)
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1)), "seq is 1, 2, 3, …"
        of_turn = [e for e in events if e.get("turnId") == turn_id]
        assert of_turn[0]["type"] == "turn_started" and of_turn[-1]["type"] == "turn_completed"
        assert sum(e["type"] == "turn_completed" for e in events) == 1
        kinds = [e["type"] for e in of_turn]
        assert kinds.index("tool_call") < kinds.index("tool_call_update")


@check("permissions: one request, one permission_resolved; a second answer is 1003")
def _permission(ctx: Context) -> None:
    with ctx.server() as (server, _):
        write = {"id": "w", "name": "Write", "input": {"file_path": "new.txt", "content": "x"}}
        session = ctx.script(server, [{"tool_calls": [write]}, {"text": "ok"}])
        result = server.request("agent/submitMessage", {"sessionId": session, "text": "write"})
        request = server.wait_event(
            lambda e: e["type"] == "permission_request", "permission_request"
        )
        assert {o["optionId"] for o in request["options"]} == {
            "allow_once",
            "allow_always",
            "reject_once",
            "reject_always",
        }
        answer = {
            "sessionId": session,
            "requestId": request["requestId"],
            "optionId": "reject_once",
        }
        server.request("agent/respondPermission", answer)
        server.wait_event(
            lambda e: e["type"] == "turn_completed" and e["turnId"] == result["turnId"], "the end"
        )
        resolved = [e for e in server.events(session) if e["type"] == "permission_resolved"]
        assert len(resolved) == 1 and resolved[0]["optionId"] == "reject_once"
        expect_error(1003, lambda: server.request("agent/respondPermission", answer))


@check("abort: the turn ends aborted exactly once; a second abort is false")
def _abort(ctx: Context) -> None:
    with ctx.server() as (server, _):
        story = "A long story that goes on. " * 40
        session = ctx.script(server, [{"text": story, "delay": 0.2, "chunk": 8}])
        result = server.request("agent/submitMessage", {"sessionId": session, "text": "go"})
        server.wait_event(lambda e: e["type"] == "text_delta", "the first text_delta")
        assert server.request("agent/abort", {"sessionId": session})["aborted"] is True
        done = server.wait_event(
            lambda e: e["type"] == "turn_completed" and e["turnId"] == result["turnId"], "the end"
        )
        assert done["stopReason"] == "aborted"
        assert server.request("agent/abort", {"sessionId": session})["aborted"] is False
        ends = [e for e in server.events(session) if e["type"] == "turn_completed"]
        assert len(ends) == 1


@check("sessions: list, close, resume with the history")
def _sessions(ctx: Context) -> None:
    with ctx.server() as (server, _):
        session = ctx.script(server, [{"text": "Hello."}])
        turn(server, session, "hi")
        listed = server.request("agent/listSessions", {})["sessions"]
        assert [s["sessionId"] for s in listed] == [session]
        server.request("agent/closeSession", {"sessionId": session})
        expect_error(
            1001, lambda: server.request("agent/submitMessage", {"sessionId": session, "text": "x"})
        )
        resumed = server.request("agent/resumeSession", {"sessionId": session})
        roles = [m["role"] for m in resumed["messages"]]
        assert roles == ["user", "assistant"], roles


@check("setModel and setPermissionMode apply to the next model call")
def _settings(ctx: Context) -> None:
    with ctx.server() as (server, _):
        workspace: Path = server.workspace  # type: ignore[attr-defined]
        log = workspace.parent / "models.jsonl"
        session = ctx.script(server, [{"text": "ok"}], requestLog=str(log))
        server.request("agent/setModel", {"sessionId": session, "model": "scripted-2"})
        server.request("agent/setPermissionMode", {"sessionId": session, "permissionMode": "plan"})
        expect_error(
            -32602,
            lambda: server.request(
                "agent/setPermissionMode", {"sessionId": session, "permissionMode": "yolo"}
            ),
        )
        turn(server, session, "hi")
        request = json.loads(log.read_text(encoding="utf-8").splitlines()[0])
        assert request["model"] == "scripted-2", request["model"]


@check("listModels: a list with the current model, or 1005 for a server without one")
def _models(ctx: Context) -> None:
    with ctx.server() as (server, _):
        session = ctx.script(server, [])
        try:
            result = server.request("agent/listModels", {"sessionId": session})
        except RpcError as error:
            assert error.code == 1005, error
            assert isinstance(error.data, dict) and "kind" in error.data, error.data
            return
        assert any(m.get("current") for m in result["models"]), result


@check("AskUser: ask_user, respondAskUser, ask_user_resolved, the answer in the result")
def _ask_user(ctx: Context) -> None:
    with ctx.server() as (server, _):
        ask = {"id": "q", "name": "AskUser", "input": {"question": "Which port?"}}
        session = ctx.script(server, [{"tool_calls": [ask]}, {"text": "ok"}])
        result = server.request("agent/submitMessage", {"sessionId": session, "text": "go"})
        question = server.wait_event(lambda e: e["type"] == "ask_user", "ask_user")
        assert question["question"] == "Which port?"
        answer = {"sessionId": session, "requestId": question["requestId"], "answer": "9000"}
        server.request("agent/respondAskUser", answer)
        server.wait_event(
            lambda e: e["type"] == "turn_completed" and e["turnId"] == result["turnId"], "the end"
        )
        resolved = [e for e in server.events(session) if e["type"] == "ask_user_resolved"]
        assert len(resolved) == 1 and resolved[0]["answer"] == "9000"
        done = [
            e
            for e in server.events(session)
            if e["type"] == "tool_call_update" and e.get("status") == "completed"
        ]
        assert done and "9000" in done[-1]["content"]
        expect_error(1003, lambda: server.request("agent/respondAskUser", answer))


@check("steer: joins the running turn; $/cancelRequest of the submit aborts it")
def _steer_and_cancel(ctx: Context) -> None:
    with ctx.server() as (server, _):
        slow = {"text": "A long story that goes on. " * 40, "delay": 0.05, "chunk": 40}
        session = ctx.script(server, [slow, {"text": "ok"}, slow])
        first = server.request("agent/submitMessage", {"sessionId": session, "text": "go"})
        server.wait_event(lambda e: e["type"] == "text_delta", "the first text_delta")
        steer = {"sessionId": session, "text": "shorter", "delivery": "steer"}
        steered = server.request("agent/submitMessage", steer)
        assert steered == {"turnId": first["turnId"], "queued": False}, steered
        server.wait_event(
            lambda e: e["type"] == "turn_completed" and e["turnId"] == first["turnId"], "the end"
        )
        msg_id = server.request_async("agent/submitMessage", {"sessionId": session, "text": "go"})
        second = server.wait_response(msg_id)["result"]
        server.wait_event(
            lambda e: e["type"] == "text_delta" and e["turnId"] == second["turnId"], "a delta"
        )
        server.notify("$/cancelRequest", {"id": msg_id})
        done = server.wait_event(
            lambda e: e["type"] == "turn_completed" and e["turnId"] == second["turnId"], "the end"
        )
        assert done["stopReason"] == "aborted", done


@check("delivery: queue waits its turn; interrupt aborts the running turn and goes next")
def _delivery(ctx: Context) -> None:
    with ctx.server() as (server, _):
        slow = {"text": "A long story that goes on. " * 40, "delay": 0.05, "chunk": 40}
        session = ctx.script(server, [slow, {"text": "second"}, {"text": "third"}])
        first = server.request("agent/submitMessage", {"sessionId": session, "text": "go"})
        server.wait_event(lambda e: e["type"] == "text_delta", "the first text_delta")
        queued = server.request("agent/submitMessage", {"sessionId": session, "text": "later"})
        interrupt = {"sessionId": session, "text": "now", "delivery": "interrupt"}
        urgent = server.request("agent/submitMessage", interrupt)
        assert queued["queued"] and urgent["queued"], (queued, urgent)
        ids = [first["turnId"], urgent["turnId"], queued["turnId"]]
        assert len(set(ids)) == 3, ids
        server.wait_event(
            lambda e: e["type"] == "turn_completed" and e["turnId"] == queued["turnId"], "the end"
        )
        events = server.events(session)
        ended = {e["turnId"]: e["stopReason"] for e in events if e["type"] == "turn_completed"}
        assert ended == dict(zip(ids, ["aborted", "end_turn", "end_turn"], strict=True)), ended
        started = [e["turnId"] for e in events if e["type"] == "turn_started"]
        # The interrupting turn runs before the one queued earlier.
        assert started == ids, started


@check("compact and noteUserAction")
def _compact_and_note(ctx: Context) -> None:
    with ctx.server() as (server, _):
        workspace: Path = server.workspace  # type: ignore[attr-defined]
        log = workspace.parent / "compact.jsonl"
        entries = [{"text": "One."}, {"text": "Two."}, {"text": "A summary."}, {"text": "ok"}]
        session = ctx.script(server, entries, requestLog=str(log))
        turn(server, session, "hi")
        turn(server, session, "and?")
        compacted = server.request("agent/compact", {"sessionId": session})
        # A tiny history may even grow by its summary; both are estimates of the prompt.
        assert compacted["tokensBefore"] > 0 and compacted["tokensAfter"] > 0, compacted
        assert any(e["type"] == "compaction" for e in server.events(session))
        note = {"sessionId": session, "text": "The user undid your edit."}
        assert server.request("agent/noteUserAction", note) == {}
        turn(server, session, "again")
        last = json.loads(log.read_text(encoding="utf-8").splitlines()[-1])
        said = json.dumps(last["messages"][-1])
        assert "<userAction>The user undid your edit.</userAction>" in said, said


# The encoding round trips run last.
CHECKS += EDIT_CHECKS
