"""`agentls acp` checked by a second, independent ACP client: the official TypeScript SDK
(@agentclientprotocol/sdk, pinned in tests/acp_node/package.json) driven by
tests/acp_node/client.mjs.

Each test writes a scripted-model script and a scenario, runs the node client on it, and
reads what it printed: every step's result, every session/update the SDK parsed, every
permission request, fs read and write, and the raw wire, numbered in one sequence. The
malformed-line test speaks to the agent over raw pipes instead (no SDK sends bad JSON).
"""

from __future__ import annotations

import json
import queue
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from agent_client import write_script

NODE_CLIENT = Path(__file__).resolve().parent / "acp_node"
AGENT = [sys.executable, "-m", "agentls", "acp"]
RUN_TIMEOUT = 120
ALL_KINDS = {"allow_once", "allow_always", "reject_once", "reject_always"}

Output = dict[str, Any]


@pytest.fixture(scope="module")
def node() -> str:
    found = shutil.which("node")
    if found is None:
        pytest.skip("node is not installed")
    if not (NODE_CLIENT / "node_modules" / "@agentclientprotocol" / "sdk").is_dir():
        pytest.skip("tests/acp_node/node_modules is missing: run `npm ci` in tests/acp_node")
    return found


def scripted(directory: Path, script: list[dict[str, Any]]) -> dict[str, Any]:
    """session/new's `_meta`: the scripted model playing `script`."""
    path = write_script(directory / "script.jsonl", script)
    log = directory / "requests.jsonl"
    return {"agentls": {"provider": "scripted", "script": str(path), "requestLog": str(log)}}


def read_then_edit(source: Path, new: str, *after: dict[str, Any]) -> list[dict[str, Any]]:
    """A script: Read `source`, Edit its `x = 1` to `new`, then `after`."""
    edit = {"file_path": str(source), "old_string": "x = 1", "new_string": new}
    return [
        {"tool_calls": [{"id": "t1", "name": "Read", "input": {"file_path": str(source)}}]},
        {"tool_calls": [{"id": "t2", "name": "Edit", "input": edit}]},
        *after,
    ]


def run_client(node: str, directory: Path, scenario: dict[str, Any]) -> Output:
    """Run the node client on `scenario` (agent, cwd and fs filled in when absent)."""
    directory.mkdir(parents=True, exist_ok=True)
    scenario = {
        "agent": AGENT,
        "cwd": str(directory),
        "fs": {"read": True, "write": True},
        "permission": {"optionId": "allow_once"},
        **scenario,
    }
    path = directory / "scenario.json"
    path.write_text(json.dumps(scenario), encoding="utf-8")
    done = subprocess.run(
        [node, str(NODE_CLIENT / "client.mjs"), str(path)],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    (directory / "client-output.json").write_text(done.stdout, encoding="utf-8")
    (directory / "client-stderr.txt").write_text(done.stderr, encoding="utf-8")
    assert done.returncode == 0, done.stderr[-4000:]
    out: Output = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["exit"]["code"] == 0, done.stderr[-4000:]
    # The official SDK parsed every session/update the agent sent (none was dropped as
    # invalid): what its handler saw is what came over the wire, in the same order.
    sent = [m["message"]["params"] for m in wire(out, "in") if is_update(m["message"])]
    seen = [{"sessionId": u["sessionId"], "update": u["update"]} for u in out["updates"]]
    assert [s["update"]["sessionUpdate"] for s in sent] == [
        s["update"]["sessionUpdate"] for s in seen
    ], done.stderr[-4000:]
    assert "Error handling notification" not in done.stderr, done.stderr[-4000:]
    return out


def wire(out: Output, direction: str) -> list[dict[str, Any]]:
    return [m for m in out["wire"] if m["dir"] == direction]


def is_update(message: dict[str, Any]) -> bool:
    return message.get("method") == "session/update"


def updates(out: Output, session_id: str, kind: str | None = None) -> list[dict[str, Any]]:
    """A session's updates (of one kind), each with its `seq`."""
    return [
        {"seq": u["seq"], **u["update"]}
        for u in out["updates"]
        if u["sessionId"] == session_id and kind in (None, u["update"]["sessionUpdate"])
    ]


def step(out: Output, index: int) -> dict[str, Any]:
    record = out["steps"][index]
    assert "error" not in record, record
    return record


def texts(content: list[dict[str, Any]] | None) -> str:
    return "".join(
        c["content"]["text"]
        for c in content or []
        if c["type"] == "content" and c["content"]["type"] == "text"
    )


def agent_text(out: Output, session_id: str, after: int = 0, before: int = 1 << 60) -> str:
    return "".join(
        u["content"]["text"]
        for u in updates(out, session_id, "agent_message_chunk")
        if after < u["seq"] < before
    )


def request_ids(out: Output, method: str) -> list[Any]:
    return [m["message"]["id"] for m in wire(out, "out") if m["message"].get("method") == method]


def responses_to(out: Output, request_id: Any) -> list[dict[str, Any]]:
    return [
        m
        for m in wire(out, "in")
        if m["message"].get("id") == request_id and "method" not in m["message"]
    ]


# -- (a) initialize ---------------------------------------------------------------------


def test_initialize_answers_protocol_version_1_with_load_session(node: str, tmp_path: Path) -> None:
    out = run_client(node, tmp_path, {"steps": []})
    assert out["errors"] == []
    assert out["initialize"]["protocolVersion"] == 1
    assert out["initialize"]["agentCapabilities"]["loadSession"] is True
    assert out["initialize"]["agentInfo"]["name"] == "agentls"


# -- (b) reads come from the client's unsaved buffers --------------------------------------


def test_read_is_served_by_the_clients_unsaved_buffer(node: str, tmp_path: Path) -> None:
    source = tmp_path / "a.py"
    source.write_text('print("on disk")\n', encoding="utf-8")
    script = [
        {
            "text": "Reading it.",
            "tool_calls": [{"id": "t1", "name": "Read", "input": {"file_path": str(source)}}],
        },
        {"text": "It prints from the buffer."},
    ]
    out = run_client(
        node,
        tmp_path,
        {
            "buffers": {str(source): 'print("unsaved buffer")\n'},
            "steps": [
                {"op": "new", "as": "s", "meta": scripted(tmp_path, script)},
                {"op": "prompt", "session": "s", "text": "What does a.py print?"},
            ],
        },
    )
    assert out["errors"] == []
    session_id = step(out, 0)["result"]["sessionId"]
    assert step(out, 1)["result"]["stopReason"] == "end_turn"
    assert agent_text(out, session_id) == "Reading it.It prints from the buffer."

    [call] = updates(out, session_id, "tool_call")
    assert call["toolCallId"] == "t1"
    assert call["kind"] == "read"
    assert [loc["path"] for loc in call["locations"]] == [str(source)]
    ends = [u for u in updates(out, session_id, "tool_call_update") if u["status"] == "completed"]
    assert [u["toolCallId"] for u in ends] == ["t1"]
    shown = texts(ends[0]["content"])
    assert 'print("unsaved buffer")' in shown
    assert "on disk" not in shown
    assert [(r["path"], r["source"]) for r in out["reads"]] == [(str(source), "buffer")]
    # Every update of the turn came before the prompt's answer.
    assert max(u["seq"] for u in updates(out, session_id)) < step(out, 1)["seq"]


# -- (c) an Edit asks, with its diff, and the client writes it --------------------------------


def test_edit_asks_permission_with_a_diff_and_the_client_writes_it(
    node: str, tmp_path: Path
) -> None:
    source = tmp_path / "calc.py"
    source.write_text("x = 1\ny = 2\n", encoding="utf-8")
    edit = {"file_path": str(source), "old_string": "x = 1", "new_string": "x = 10"}
    script = [
        {"tool_calls": [{"id": "t1", "name": "Read", "input": {"file_path": str(source)}}]},
        {"text": "Changing x.", "tool_calls": [{"id": "t2", "name": "Edit", "input": edit}]},
        {"text": "x is 10 now."},
    ]
    out = run_client(
        node,
        tmp_path,
        {
            "permission": {"optionId": "allow_once"},
            "steps": [
                {"op": "new", "as": "s", "meta": scripted(tmp_path, script)},
                {"op": "prompt", "session": "s", "text": "Set x to 10."},
            ],
        },
    )
    assert out["errors"] == []
    session_id = step(out, 0)["result"]["sessionId"]
    assert step(out, 1)["result"]["stopReason"] == "end_turn"

    [asked] = out["permissions"]
    request = asked["request"]
    assert request["sessionId"] == session_id
    assert request["toolCall"]["toolCallId"] == "t2"
    diffs = [c for c in request["toolCall"]["content"] if c["type"] == "diff"]
    assert diffs == [
        {
            "type": "diff",
            "path": str(source),
            "oldText": "x = 1\ny = 2\n",
            "newText": "x = 10\ny = 2\n",
        }
    ]
    assert {o["kind"] for o in request["options"]} == ALL_KINDS
    assert "allow_once" in {o["optionId"] for o in request["options"]}
    # The call was announced before the agent asked about it.
    [edit_call] = [u for u in updates(out, session_id, "tool_call") if u["toolCallId"] == "t2"]
    assert edit_call["kind"] == "edit"
    assert edit_call["seq"] < asked["seq"]

    # Written through fs/write_text_file, only after the answer.
    [write] = out["writes"]
    assert (write["path"], write["content"]) == (str(source), "x = 10\ny = 2\n")
    assert write["seq"] > asked["answer"]["seq"]
    assert source.read_text(encoding="utf-8") == "x = 10\ny = 2\n"
    [done] = [
        u
        for u in updates(out, session_id, "tool_call_update")
        if u["toolCallId"] == "t2" and u["status"] in ("completed", "failed")
    ]
    assert done["status"] == "completed"
    assert agent_text(out, session_id).endswith("x is 10 now.")


def test_set_mode_accept_edits_lets_an_edit_run_without_asking(node: str, tmp_path: Path) -> None:
    source = tmp_path / "calc.py"
    source.write_text("x = 1\n", encoding="utf-8")
    script = read_then_edit(source, "x = 3", {"text": "Done."})
    out = run_client(
        node,
        tmp_path,
        {
            "permission": {"optionId": "reject_once"},
            "steps": [
                {"op": "new", "as": "s", "meta": scripted(tmp_path, script)},
                {"op": "setMode", "session": "s", "modeId": "acceptEdits"},
                {"op": "prompt", "session": "s", "text": "Set x to 3."},
            ],
        },
    )
    assert out["errors"] == []
    session_id = step(out, 0)["result"]["sessionId"]
    assert step(out, 0)["result"]["modes"]["currentModeId"] == "default"
    modes = updates(out, session_id, "current_mode_update")
    assert [u["currentModeId"] for u in modes] == ["acceptEdits"]
    # The mode's update comes before set_mode's answer.
    assert modes[0]["seq"] < step(out, 1)["seq"]
    assert step(out, 2)["result"]["stopReason"] == "end_turn"
    assert out["permissions"] == []
    assert [(w["path"], w["content"]) for w in out["writes"]] == [(str(source), "x = 3\n")]


def test_without_fs_capabilities_the_agent_never_calls_fs(node: str, tmp_path: Path) -> None:
    source = tmp_path / "calc.py"
    source.write_text("x = 1\n", encoding="utf-8")
    script = read_then_edit(source, "x = 5", {"text": "Done."})
    out = run_client(
        node,
        tmp_path,
        {
            "fs": {"read": False, "write": False},
            "buffers": {str(source): "x = 'a buffer the agent must not see'\n"},
            "steps": [
                {"op": "new", "as": "s", "meta": scripted(tmp_path, script)},
                {"op": "prompt", "session": "s", "text": "Set x to 5."},
            ],
        },
    )
    assert out["errors"] == []
    session_id = step(out, 0)["result"]["sessionId"]
    assert step(out, 1)["result"]["stopReason"] == "end_turn"
    assert out["reads"] == []
    assert out["writes"] == []
    [read_end] = [
        u
        for u in updates(out, session_id, "tool_call_update")
        if u["toolCallId"] == "t1" and u["status"] == "completed"
    ]
    assert "x = 1" in texts(read_end["content"])
    assert len(out["permissions"]) == 1
    # The agent wrote the file itself.
    assert source.read_text(encoding="utf-8") == "x = 5\n"


# -- (d) cancel with a permission pending; (e) load it in a new agent ------------------------


@pytest.fixture(scope="module")
def cancelled_session(node: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A session whose first turn was cancelled at its Write's permission request, and
    whose second turn then ended normally."""
    directory = tmp_path_factory.mktemp("cancel")
    source = directory / "a.py"
    source.write_text("A = 1\n", encoding="utf-8")
    target = directory / "b.py"
    write = {"file_path": str(target), "content": "B = 2\n"}
    script = [
        {
            "text": "Let me look.",
            "tool_calls": [{"id": "t1", "name": "Read", "input": {"file_path": str(source)}}],
        },
        {"text": "Now writing.", "tool_calls": [{"id": "t2", "name": "Write", "input": write}]},
        {"text": "Second answer."},
    ]
    out = run_client(
        node,
        directory,
        {
            "permission": "cancel-on-cancel",
            "steps": [
                {"op": "new", "as": "s", "meta": scripted(directory, script)},
                {
                    "op": "prompt",
                    "session": "s",
                    "text": "Copy a.py to b.py.",
                    "cancelAfterPermission": True,
                },
                {"op": "prompt", "session": "s", "text": "Never mind. What is A?"},
            ],
        },
    )
    return {"out": out, "directory": directory, "target": target}


def test_cancel_with_a_pending_permission_ends_the_turn_cancelled_once(
    cancelled_session: dict[str, Any],
) -> None:
    out = cancelled_session["out"]
    assert out["errors"] == []
    session_id = step(out, 0)["result"]["sessionId"]

    # The permission request was answered `cancelled` after session/cancel went out.
    [asked] = out["permissions"]
    assert asked["request"]["toolCall"]["toolCallId"] == "t2"
    assert asked["answer"]["outcome"] == {"outcome": "cancelled"}
    [cancel] = [m for m in wire(out, "out") if m["message"].get("method") == "session/cancel"]
    assert cancel["message"]["params"] == {"sessionId": session_id}
    assert asked["seq"] < cancel["seq"] < asked["answer"]["seq"]

    # The prompt was answered once, `cancelled`; nothing was written.
    first, second = request_ids(out, "session/prompt")
    [answer] = responses_to(out, first)
    assert answer["message"]["result"]["stopReason"] == "cancelled"
    assert step(out, 1)["result"]["stopReason"] == "cancelled"
    assert out["writes"] == []
    assert not cancelled_session["target"].exists()
    calls = {u["toolCallId"]: u for u in updates(out, session_id, "tool_call")}
    assert set(calls) == {"t1", "t2"}
    ended = {
        u["toolCallId"]: u["status"]
        for u in updates(out, session_id, "tool_call_update")
        if u["status"] in ("completed", "failed")
    }
    assert ended == {"t1": "completed", "t2": "failed"}
    # The cancelled turn's updates all came before its answer.
    turn_two = next(m["seq"] for m in wire(out, "out") if m["message"].get("id") == second)
    late = [
        u
        for u in updates(out, session_id)
        if answer["seq"] < u["seq"] < turn_two
        and u["sessionUpdate"] in ("agent_message_chunk", "tool_call", "tool_call_update")
    ]
    assert late == []

    # The same session takes the next prompt and ends it normally.
    [again] = responses_to(out, second)
    assert again["message"]["result"]["stopReason"] == "end_turn"
    assert step(out, 2)["result"]["stopReason"] == "end_turn"
    assert agent_text(out, session_id, after=answer["seq"]) == "Second answer."


@pytest.fixture(scope="module")
def loaded_session(
    node: str, cancelled_session: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Output]:
    """That session loaded by a new agent process, then prompted once more."""
    directory = tmp_path_factory.mktemp("load")
    session_id = step(cancelled_session["out"], 0)["result"]["sessionId"]
    # A new agent's scripted model starts its own script.
    meta = scripted(directory, [{"text": "Third answer, after the load."}])
    out = run_client(
        node,
        directory,
        {
            "cwd": str(cancelled_session["directory"]),
            "steps": [
                {"op": "load", "sessionId": session_id, "as": "s", "meta": meta},
                {"op": "prompt", "session": "s", "text": "And now?"},
            ],
        },
    )
    return session_id, out


def replayed(session_id: str, out: Output) -> list[dict[str, Any]]:
    """The session's updates before session/load's answer."""
    [load_id] = request_ids(out, "session/load")
    [load_answer] = responses_to(out, load_id)
    return [u for u in updates(out, session_id) if u["seq"] < load_answer["seq"]]


def test_load_in_a_new_agent_replays_the_history_before_answering(
    loaded_session: tuple[str, Output],
) -> None:
    session_id, out = loaded_session
    assert out["errors"] == []
    loaded = step(out, 0)
    assert loaded["result"]["modes"]["currentModeId"] == "default"
    [load_id] = request_ids(out, "session/load")
    [load_answer] = responses_to(out, load_id)

    history = replayed(session_id, out)
    kinds = [u["sessionUpdate"] for u in history]
    for kind in ("user_message_chunk", "agent_message_chunk", "tool_call", "tool_call_update"):
        assert kind in kinds, kinds
    users = "".join(
        u["content"]["text"] for u in history if u["sessionUpdate"] == "user_message_chunk"
    )
    assert "Copy a.py to b.py." in users
    assert "Never mind. What is A?" in users
    assert users.index("Copy a.py") < users.index("Never mind")
    said = "".join(
        u["content"]["text"] for u in history if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert "Let me look." in said
    assert "Second answer." in said
    calls = {u["toolCallId"]: u for u in history if u["sessionUpdate"] == "tool_call"}
    assert calls["t1"]["kind"] == "read"
    read_ends = [
        u
        for u in history
        if u["sessionUpdate"] == "tool_call_update"
        and u["toolCallId"] == "t1"
        and u.get("status") == "completed"
    ]
    assert read_ends and "A = 1" in texts(read_ends[-1].get("content"))
    # No replayed history after the answer: what follows is the new turn's.
    late = ("user_message_chunk", "tool_call", "tool_call_update")
    assert not [
        u
        for u in updates(out, session_id)
        if u["seq"] > load_answer["seq"] and u["sessionUpdate"] in late
    ]
    # The loaded session goes on.
    assert step(out, 1)["result"]["stopReason"] == "end_turn"
    assert agent_text(out, session_id, after=load_answer["seq"]) == "Third answer, after the load."


def test_load_replays_what_the_user_typed_and_nothing_else(
    loaded_session: tuple[str, Output],
) -> None:
    session_id, out = loaded_session
    said = [
        u["content"]["text"]
        for u in replayed(session_id, out)
        if u["sessionUpdate"] == "user_message_chunk"
    ]
    assert said == ["Copy a.py to b.py.", "Never mind. What is A?"]


# -- (f) a malformed line is answered and the agent keeps serving ---------------------------


class RawAgent:
    """`agentls acp` over raw pipes: lines in, parsed messages out."""

    def __init__(self, cwd: Path) -> None:
        self.process = subprocess.Popen(
            AGENT,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.messages.put(json.loads(line))

    def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def request(self, request_id: int, method: str, params: dict[str, Any]) -> None:
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        self.send(json.dumps(message).encode())

    def answer(self, request_id: int | None) -> dict[str, Any]:
        """The response to `request_id` (notifications in between are skipped)."""
        while True:
            message = self.messages.get(timeout=60)
            if "method" not in message and message.get("id") == request_id:
                return message

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(timeout=30)


def test_a_malformed_line_gets_a_parse_error_and_the_agent_keeps_serving(tmp_path: Path) -> None:
    agent = RawAgent(tmp_path)
    try:
        agent.request(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        assert agent.answer(1)["result"]["protocolVersion"] == 1

        agent.send(b"{this is not json")
        error = agent.answer(None)
        assert error["jsonrpc"] == "2.0"
        assert error["error"]["code"] == -32700

        agent.send(b'{"jsonrpc": "2.0", "id": 7, "method": "session/new", "params": {')
        assert agent.answer(None)["error"]["code"] == -32700

        meta = scripted(tmp_path, [{"text": "Still here."}])
        params = {"cwd": str(tmp_path), "mcpServers": [], "_meta": meta}
        agent.request(2, "session/new", params)
        session_id = agent.answer(2)["result"]["sessionId"]
        prompt = [{"type": "text", "text": "Are you there?"}]
        agent.request(3, "session/prompt", {"sessionId": session_id, "prompt": prompt})
        assert agent.answer(3)["result"]["stopReason"] == "end_turn"
    finally:
        code = agent.close()
    assert code == 0
